// SPDX-License-Identifier: GPL-2.0-only

// Package kcidbschema holds KCIDB's I/O schema v5.3 as a JSON Schema
// (draft-07), for the tests that hold kcidb.json to it: v05_03.json is the
// schema kernelci/kcidb-io exports (kcidb_io/schema/v05_03.py, GPL-2.0 or
// later), and it is checked as kcidb-io checks it, formats included.
// Only tests import it: smct writes kcidb.json, it does not check it.
package kcidbschema

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed v05_03.json
var schemaJSON []byte

// Validate checks a KCIDB I/O document against the schema.
func Validate(doc []byte) error {
	sch, err := compile()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(v)
}

// compile reads the schema; formats are asserted, as kcidb-io's
// Draft7Validator with its format checker does.
func compile() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	const url = "https://kernelci.org/kcidb/io/v05_03.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
