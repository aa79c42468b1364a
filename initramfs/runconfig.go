package initramfs

import (
	"encoding/json"
	"fmt"
	"os"
)

// Where the guest finds its pieces.
const (
	InitPath      = "/init"
	SuitePath     = "/suites.test"
	WorkloadPath  = "/workload" // the suite's -smct.workload in the guest
	RunConfigPath = "/etc/smct/run.json"
)

// StartMarker begins the line the guest's init prints on the console when
// it starts the suite: the host knows from it that the kernel came up.
const StartMarker = "smct-init: running"

// RunConfig is what the host tells the guest about one run.
type RunConfig struct {
	Args           []string `json:"args"`            // arguments for the suite binary
	TimeoutSeconds int      `json:"timeout_seconds"` // the guest kills the suite after this
}

// ReadRunConfig reads the run configuration the host appended to the initramfs.
func ReadRunConfig(path string) (RunConfig, error) {
	var c RunConfig
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("no run configuration: %v", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("run configuration %s: %v", path, err)
	}
	if c.TimeoutSeconds <= 0 {
		return c, fmt.Errorf("run configuration %s: timeout_seconds must be positive", path)
	}
	return c, nil
}
