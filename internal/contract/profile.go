// SPDX-License-Identifier: GPL-2.0-only

package contract

import "fmt"

// Profile is a version of the stackmap contract: the postings differ in the
// binary export's header and a few behaviours (CONTRACT.md, "Profiles").
type Profile string

// The profiles; v4 is the default.
const (
	ProfileV4 Profile = "v4"
	ProfileV3 Profile = "v3"
)

// Profiles are the known profiles, the default first.
var Profiles = []Profile{ProfileV4, ProfileV3}

// ParseProfile reads a profile as the user writes it (PROFILE=).
func ParseProfile(s string) (Profile, error) {
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("PROFILE=%q: want v4 or v3", s)
}

// Valid refuses a profile the contract does not have: one set by code,
// not by Set.
func (p Profile) Valid() error {
	_, err := ParseProfile(string(p))
	return err
}

// String is the profile's name.
func (p Profile) String() string { return string(p) }

// Set makes a Profile a flag.Value, so that a flag refuses an unknown
// profile when it is parsed.
func (p *Profile) Set(s string) error {
	v, err := ParseProfile(s)
	if err == nil {
		*p = v
	}
	return err
}
