package simulate

// Result is what kube-scheduler-simulate prints as JSON for `schedplug
// simulate`, which turns it into its own text and JSON (docs/simulate.md).
type Result struct {
	// KubeScheduler is the upstream version the simulation ran (v1.37.2).
	KubeScheduler string    `json:"kube_scheduler"`
	Profiles      []Profile `json:"profiles"`
	// Pods are the dump's pending pods, in kube-scheduler's queue order.
	Pods []PodResult `json:"pods"`
	// Evicted are the dump's bound pods that preemption removed.
	Evicted  []Eviction `json:"evicted"`
	Warnings []string   `json:"warnings"`
}

// Profile is a profile's Filter and Score plugins as its framework runs
// them: in-tree and native, in order, the scores with their weights.
type Profile struct {
	Name    string     `json:"name"`
	Filters []string   `json:"filters"`
	Scores  []Weighted `json:"scores"`
}

// Weighted is a Score plugin and its weight.
type Weighted struct {
	Plugin string `json:"plugin"`
	Weight int64  `json:"weight"`
}

// Pod statuses.
const (
	Placed        = "placed"
	Unschedulable = "unschedulable"
	Errored       = "error"
	Skipped       = "skipped"
	// Preempted: placed, then evicted by a higher-priority pod.
	Preempted = "preempted"
)

// PodResult is one pending pod's outcome.
type PodResult struct {
	Pod     string `json:"pod"`
	Profile string `json:"profile"`
	Status  string `json:"status"`
	Node    string `json:"node,omitempty"`
	// Tie: the nodes that shared the best total score, when more than one
	// did: the one taken first (kube-scheduler picks one at random, the
	// simulation by a hash of the pod's name), then the others in the
	// dump's order.
	Tie            []string `json:"tie"`
	Score          int64    `json:"score"`
	Scored         bool     `json:"scored"`
	FeasibleNodes  int      `json:"feasible_nodes"`
	EvaluatedNodes int      `json:"evaluated_nodes"`
	Attempts       int      `json:"attempts"`
	// Reason: kube-scheduler's FailedScheduling message, the plugin error,
	// or why the pod was skipped or evicted.
	Reason        string   `json:"reason,omitempty"`
	NominatedNode string   `json:"nominated_node,omitempty"`
	Explain       *Explain `json:"explain,omitempty"`
}

// Eviction is a pod preemption removed from its node.
type Eviction struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
	By   string `json:"by"`
}

// Explain is a pod's last scheduling cycle node by node.
type Explain struct {
	// SkippedFilters are the Filter plugins PreFilter told to skip the pod.
	SkippedFilters []string      `json:"skipped_filters"`
	Nodes          []ExplainNode `json:"nodes"`
}

// ExplainNode is one node kube-scheduler evaluated: the plugin that
// rejected it (code and message), or its scores when it was scored.
type ExplainNode struct {
	Node     string `json:"node"`
	Feasible bool   `json:"feasible"`
	Plugin   string `json:"plugin,omitempty"`
	Code     string `json:"code,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Scored   bool   `json:"scored"`
	// Scores holds each Score plugin that scored the pod: Score()'s raw
	// value and the normalized score times the weight.
	Scores []PluginScore `json:"scores,omitempty"`
	Total  int64         `json:"total"`
}

// PluginScore is one plugin's score of one node.
type PluginScore struct {
	Plugin   string `json:"plugin"`
	Raw      int64  `json:"raw"`
	Weighted int64  `json:"weighted"`
}
