package simulate

import (
	"hash/fnv"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// history is what the simulation saw happen to each pod: its latest
// scheduling cycle (from the framework's own calls), its binding, its
// failures and evictions. Every method is safe from any goroutine.
type history struct {
	mu        sync.Mutex
	nodeOrder map[string]int    // a node's position in the dump
	detailed  func(string) bool // pods whose cycles are kept node by node
	pods      map[string]*podHistory
}

type podHistory struct {
	cycle     *cycle
	node      string // bound to
	failed    bool   // at least one failed cycle
	errored   bool   // a scheduler or plugin error (not a rejection)
	message   string // the last FailedScheduling message
	nominated string
	attempts  int
	evictedBy string // the preemptor, when preemption removed the pod
	deleted   bool
	gatedBy   string // the PreEnqueue plugin that keeps the pod from a cycle
}

// cycle is one scheduling cycle of a pod.
type cycle struct {
	prefilter *fwk.Status // PreFilter's rejection, if any
	skipped   []string    // Filter plugins PreFilter told to skip
	filters   map[string]*fwk.Status
	scores    []fwk.NodePluginScores
	diagnosis *framework.NodeToStatus // the FitError's, when the cycle failed
	feasible  int
	evaluated int
	scored    bool
	tie       []string
	best      int64
}

func newHistory(nodes []*v1.Node, detailed func(string) bool) *history {
	r := &history{nodeOrder: map[string]int{}, detailed: detailed, pods: map[string]*podHistory{}}
	for i, n := range nodes {
		r.nodeOrder[n.Name] = i
	}
	return r
}

func key(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

func (r *history) pod(k string) *podHistory {
	p := r.pods[k]
	if p == nil {
		p = &podHistory{}
		r.pods[k] = p
	}
	return p
}

// begin starts the pod's cycle once PreFilter has run.
func (r *history) begin(pod *v1.Pod, state fwk.CycleState, prefilter *fwk.Status) {
	c := &cycle{filters: map[string]*fwk.Status{}}
	if !prefilter.IsSuccess() {
		c.prefilter = prefilter
	}
	if skip := state.GetSkipFilterPlugins(); skip != nil {
		c.skipped = skip.UnsortedList()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pod(key(pod)).cycle = c
}

// filtered keeps one node's Filter verdict for a pod explained node by
// node.
func (r *history) filtered(pod *v1.Pod, node string, status *fwk.Status) {
	k := key(pod)
	if !r.detailed(k) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.pod(k).cycle; c != nil {
		c.filters[node] = status
	}
}

// scored keeps the cycle's scores: the total of every scored node, and
// each plugin's share.
func (r *history) scored(pod *v1.Pod, scores []fwk.NodePluginScores) {
	kept := make([]fwk.NodePluginScores, len(scores))
	for i, s := range scores {
		kept[i] = fwk.NodePluginScores{Name: s.Name, TotalScore: s.TotalScore,
			RawScores: append([]fwk.PluginScore(nil), s.RawScores...), Scores: append([]fwk.PluginScore(nil), s.Scores...)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.pod(key(pod)).cycle; c != nil {
		c.scores = kept
	}
}

// decide is kube-scheduler's choice among the best-scored nodes made
// repeatable: kube-scheduler picks one of them at random, the simulation
// too, but by a hash of the pod's name, so that every run takes the same
// node and tied pods still spread as they do in a cluster. It remembers the
// tie (the node taken first, then the others in the dump's order) and
// returns the node to take.
func (r *history) decide(pod *v1.Pod, suggested string, feasible, evaluated, attempts int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pod(key(pod))
	p.attempts = attempts
	c := p.cycle
	if c == nil {
		return suggested
	}
	c.feasible, c.evaluated = feasible, evaluated
	if feasible < 2 || len(c.scores) == 0 {
		return suggested
	}
	c.scored = true
	c.best = c.scores[0].TotalScore
	for _, s := range c.scores {
		c.best = max(c.best, s.TotalScore)
	}
	var tie []string
	for _, s := range c.scores {
		if s.TotalScore == c.best {
			tie = append(tie, s.Name)
		}
	}
	if !slices.Contains(tie, suggested) {
		// Extenders added to the totals after the plugins: keep upstream's
		// pick, the tie is not known.
		c.tie, c.best = []string{suggested}, 0
		return suggested
	}
	slices.SortFunc(tie, func(a, b string) int { return r.nodeOrder[a] - r.nodeOrder[b] })
	h := fnv.New32a()
	h.Write([]byte(key(pod)))
	chosen := tie[int(h.Sum32()%uint32(len(tie)))]
	c.tie = append([]string{chosen}, slices.DeleteFunc(tie, func(n string) bool { return n == chosen })...)
	return chosen
}

// failed notes a failed cycle and what kube-scheduler reported.
func (r *history) failed(pod *v1.Pod, status *fwk.Status, nominated *fwk.NominatingInfo, attempts int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pod(key(pod))
	p.failed, p.attempts = true, attempts
	p.errored = !status.IsRejected()
	p.message = status.Message()
	if nominated != nil && nominated.Mode() == fwk.ModeOverride {
		p.nominated = nominated.NominatedNodeName
	}
	if fitErr, ok := status.AsError().(*framework.FitError); ok && p.cycle != nil {
		p.cycle.diagnosis = fitErr.Diagnosis.NodeToStatus
		p.cycle.evaluated = fitErr.NumAllNodes
	}
}

func (r *history) bound(k, node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pod(k)
	p.node, p.nominated = node, ""
}

func (r *history) deleted(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pod(k).deleted = true
}

func (r *history) gated(k, plugin string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pod(k).gatedBy = plugin
}

func (r *history) preempted(victim, by string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pod(victim).evictedBy = by
}

// done: the pod was bound, failed or removed at least once.
func (r *history) done(k string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pods[k]
	return p != nil && (p.node != "" || p.failed || p.deleted)
}

// snapshot copies a pod's history.
func (r *history) snapshot(k string) podHistory {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.pods[k]; p != nil {
		return *p
	}
	return podHistory{}
}
