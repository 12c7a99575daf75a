package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
)

// Explain is what `schedplug explain --json` prints (docs/explain.md).
type Explain struct {
	Pod     string         `json:"pod"`
	Cycles  []ExplainCycle `json:"cycles"`
	NotHeld string         `json:"not_held"`
}

// ExplainCycle is one cycle the host kept.
type ExplainCycle struct {
	Profile string `json:"profile"`
	PodUID  string `json:"pod_uid"`
	// Outcome is "placed", "unreserved", "unschedulable" or "not reported".
	Outcome              string `json:"outcome"`
	ChosenNode           string `json:"chosen_node"`
	UnschedulableMessage string `json:"unschedulable_message"`
	NodesFiltered        int    `json:"nodes_filtered"`
	NodesRejected        int    `json:"nodes_rejected"`
	NodesPassed          int    `json:"nodes_passed"`
	// Rejections are the native filters' rejections by reason.
	Rejections []ExplainRejections `json:"rejections"`
	Timings    []struct {
		Plugin  string  `json:"plugin"`
		Hook    string  `json:"hook"`
		Seconds float64 `json:"seconds"`
	} `json:"timings"`
	Explain []ExplainNode `json:"explain"`
}

// ExplainRejections are the nodes a native filter rejected for one reason.
type ExplainRejections struct {
	Plugin  string   `json:"plugin"`
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason"`
	Nodes   []string `json:"nodes"`
}

// ExplainNode is one node's row: the same keys as simulate's.
type ExplainNode struct {
	Node     string `json:"node"`
	Feasible bool   `json:"feasible"`
	Chosen   bool   `json:"chosen"`
	Filters  []struct {
		Plugin  string `json:"plugin"`
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	} `json:"filters"`
	Scores []struct {
		Plugin     string `json:"plugin"`
		Skipped    bool   `json:"skipped"`
		Raw        int64  `json:"raw"`
		Normalized int64  `json:"normalized"`
		Weight     int64  `json:"weight"`
	} `json:"scores"`
	Total int64 `json:"total"`
}

// RunExplain runs `schedplug explain --json POD --listen ADDRESS` and
// returns its answer and exit status (0 cycles found, 1 none held).
func RunExplain(address, pod string) (*Explain, int, error) {
	bin, err := CLIBinary()
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.Command(bin, "explain", pod, "--json", "--listen", address)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return nil, 0, fmt.Errorf("running %s: %w", bin, err)
	}
	if code != 0 && code != 1 {
		return nil, code, fmt.Errorf("schedplug explain %s exited %d: %s", pod, code, stderr.String())
	}
	var out Explain
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, code, fmt.Errorf("decoding schedplug explain's JSON: %w (stderr: %s)", err, stderr.String())
	}
	return &out, code, nil
}
