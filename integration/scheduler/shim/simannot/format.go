// Package simannot writes the native plugins' results of a scheduling cycle
// onto the pod in kube-scheduler-simulator's result-annotation format, so
// that tools built for the simulator (its web UI) show native plugins too
// (docs/simulator-annotations.md). A cycle's CycleAnswers is filled on the hot
// path without locks; the Writer formats and patches off it, one merge
// patch per pod, coalesced, rate-limited and bounded.
package simannot

import (
	"encoding/json"
	"sort"
	"strconv"
)

// The annotation keys kube-scheduler-simulator's debuggable scheduler
// writes, from its simulator/scheduler/plugin/annotation/annotation.go
// (commit 2d1cd201d5737f9b08e3a8b820e00ce5cfedadce). Only the keys of the
// extension points the shim implements for native plugins are written.
const (
	// KeyPrefix starts every key below.
	KeyPrefix = "kube-scheduler-simulator.sigs.k8s.io/"

	PreFilterStatusKey  = "kube-scheduler-simulator.sigs.k8s.io/prefilter-result-status"
	PreFilterResultKey  = "kube-scheduler-simulator.sigs.k8s.io/prefilter-result"
	FilterResultKey     = "kube-scheduler-simulator.sigs.k8s.io/filter-result"
	PreScoreResultKey   = "kube-scheduler-simulator.sigs.k8s.io/prescore-result"
	ScoreResultKey      = "kube-scheduler-simulator.sigs.k8s.io/score-result"
	FinalScoreResultKey = "kube-scheduler-simulator.sigs.k8s.io/finalscore-result"
	SelectedNodeKey     = "kube-scheduler-simulator.sigs.k8s.io/selected-node"
)

// The simulator's words for a pass (simulator/scheduler/plugin/resultstore/
// store.go, commit 461facff2ab45b909ac83ff69c9f44b49bcc993e): a Filter that
// let the node through, and any other extension point's success.
const (
	PassedFilterMessage = "passed"
	SuccessMessage      = "success"
)

// NodesLeftOutKey is schedplug's own: how many nodes the size budget left
// out of the maps above (absent when none).
const NodesLeftOutKey = "schedplug.dev/simulator-annotations-nodes-left-out"

// DefaultBudget bounds the annotations' JSON of one pod. The API server
// refuses a pod whose annotations exceed 256 KiB in all; this leaves the
// rest to the pod's own.
const DefaultBudget = 96 << 10

// Result is one cycle's native results, shaped as the simulator's
// resultstore keeps them (its `result` struct): maps keyed by plugin, or
// by node then plugin, of strings.
type Result struct {
	// SelectedNode is the node kube-scheduler reserved ("" when none).
	SelectedNode string
	// PreFilterStatus: plugin -> "success" or its status message.
	PreFilterStatus map[string]string
	// Filter: node -> plugin -> "passed" or the rejection's message.
	Filter map[string]map[string]string
	// PreScore: plugin -> "success" or its status message.
	PreScore map[string]string
	// Score: node -> plugin -> the plugin's score before normalization.
	Score map[string]map[string]string
	// FinalScore: node -> plugin -> the normalized score times the
	// plugin's weight, what kube-scheduler adds up.
	FinalScore map[string]map[string]string
}

// Annotations are r's annotation values, JSON-encoded as the simulator's
// store encodes them (encoding/json of the same map types), at most about
// `budget` bytes: when the node maps do not fit, whole nodes are left out
// (the selected node and the rejected ones last) and NodesLeftOutKey says
// how many. A value of nil removes the key (a merge patch's null).
func (r *Result) Annotations(budget int) map[string]*string {
	kept, leftOut := r.fit(budget)
	out := map[string]*string{
		PreFilterStatusKey:  encode(orEmpty(r.PreFilterStatus)),
		PreFilterResultKey:  encode(map[string][]string{}),
		FilterResultKey:     encode(only(r.Filter, kept)),
		PreScoreResultKey:   encode(orEmpty(r.PreScore)),
		ScoreResultKey:      encode(only(r.Score, kept)),
		FinalScoreResultKey: encode(only(r.FinalScore, kept)),
		SelectedNodeKey:     &r.SelectedNode,
		NodesLeftOutKey:     nil,
	}
	if leftOut > 0 {
		n := strconv.Itoa(leftOut)
		out[NodesLeftOutKey] = &n
	}
	return out
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func encode(v any) *string {
	data, err := json.Marshal(v)
	if err != nil {
		// Maps of strings always encode.
		panic(err)
	}
	s := string(data)
	return &s
}

// only is m restricted to the nodes in keep (all of them when keep is nil).
func only(m map[string]map[string]string, keep map[string]bool) map[string]map[string]string {
	out := make(map[string]map[string]string, len(m))
	for node, plugins := range m {
		if keep == nil || keep[node] {
			out[node] = plugins
		}
	}
	return out
}

// fit chooses the nodes whose entries fit in budget bytes: nil and 0 when
// every node fits. Whole nodes go, so that a node is in all three maps or
// in none: the selected node first, then the nodes a native plugin
// rejected, then the best native totals, then by name.
func (r *Result) fit(budget int) (map[string]bool, int) {
	size := map[string]int{}
	total := 0
	for _, m := range []map[string]map[string]string{r.Filter, r.Score, r.FinalScore} {
		for node, plugins := range m {
			n := len(node) + 6 // "node":{},
			for plugin, value := range plugins {
				n += len(plugin) + len(value) + 6 // "plugin":"value",
			}
			size[node] += n
			total += n
		}
	}
	if total <= budget {
		return nil, 0
	}
	// Each node's place, worked out once: the selected node, then the
	// rejected ones, then by native total (best first), then by name.
	type ranked struct {
		node  string
		class int
		total int64
	}
	nodes := make([]ranked, 0, len(size))
	for node := range size {
		rk := ranked{node: node, class: 2}
		switch {
		case node == r.SelectedNode:
			rk.class = 0
		case r.rejected(node):
			rk.class = 1
		default:
			for _, v := range r.FinalScore[node] {
				n, _ := strconv.ParseInt(v, 10, 64)
				rk.total += n
			}
		}
		nodes = append(nodes, rk)
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		if a.class != b.class {
			return a.class < b.class
		}
		if a.total != b.total {
			return a.total > b.total
		}
		return a.node < b.node
	})
	keep := map[string]bool{}
	used := 0
	for _, rk := range nodes {
		if used+size[rk.node] > budget {
			break
		}
		used += size[rk.node]
		keep[rk.node] = true
	}
	return keep, len(nodes) - len(keep)
}

func (r *Result) rejected(node string) bool {
	for _, v := range r.Filter[node] {
		if v != PassedFilterMessage {
			return true
		}
	}
	return false
}
