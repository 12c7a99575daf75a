package testenv

import (
	"encoding/json"
	"fmt"
)

// SimulatorResult mirrors the results kube-scheduler-simulator keeps per
// pod and writes as annotations (the `result` struct of its
// simulator/scheduler/plugin/resultstore/store.go, commit
// 461facff2ab45b909ac83ff69c9f44b49bcc993e), field for field, with its
// types; the keys are its simulator/scheduler/plugin/annotation/
// annotation.go's (commit 2d1cd201d5737f9b08e3a8b820e00ce5cfedadce),
// written out here rather than taken from the shim, so that a test
// compares the shim's output with the simulator's definitions.
type SimulatorResult struct {
	SelectedNode    string
	PreScore        map[string]string
	Score           map[string]map[string]string
	FinalScore      map[string]map[string]string
	PreFilterStatus map[string]string
	PreFilterResult map[string][]string
	Filter          map[string]map[string]string
}

// The simulator's annotation keys that carry native plugins' results.
const (
	SimulatorSelectedNodeKey = "kube-scheduler-simulator.sigs.k8s.io/selected-node"
	simulatorKeyPrefix       = "kube-scheduler-simulator.sigs.k8s.io/"
)

// ReadSimulatorResult decodes a pod's simulator annotations into the
// simulator's types; an annotation that is missing or does not decode is
// an error.
func ReadSimulatorResult(annotations map[string]string) (*SimulatorResult, error) {
	r := &SimulatorResult{}
	selected, ok := annotations[SimulatorSelectedNodeKey]
	if !ok {
		return nil, fmt.Errorf("no %s annotation", SimulatorSelectedNodeKey)
	}
	r.SelectedNode = selected
	for key, into := range map[string]any{
		"prefilter-result-status": &r.PreFilterStatus, "prefilter-result": &r.PreFilterResult,
		"filter-result": &r.Filter, "prescore-result": &r.PreScore,
		"score-result": &r.Score, "finalscore-result": &r.FinalScore,
	} {
		v, ok := annotations[simulatorKeyPrefix+key]
		if !ok {
			return nil, fmt.Errorf("no %s annotation", simulatorKeyPrefix+key)
		}
		if err := json.Unmarshal([]byte(v), into); err != nil {
			return nil, fmt.Errorf("annotation %s%s = %q does not decode into the simulator's %T: %w", simulatorKeyPrefix, key, v, into, err)
		}
	}
	return r, nil
}
