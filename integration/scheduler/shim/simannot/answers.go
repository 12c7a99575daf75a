package simannot

import (
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// PodRef names the pod a cycle's answers are for; the patch is refused if the pod
// with that name is another one (a new uid).
type PodRef struct {
	Namespace, Name string
	UID             types.UID
}

// Scores is the cycle's PreScore answer as CycleAnswers reads it
// (cycle.Scores).
type Scores interface {
	Nodes() []string
	Of(plugin string) *pb.PluginScores
}

// CycleAnswers is what one scheduling cycle's native plugins answered
// kube-scheduler. Filter verdicts come from the framework's parallel
// Filter workers and are stored without locks; the rest once per plugin.
// The Writer reads it only after the cycle is over.
type CycleAnswers struct {
	pod     PodRef
	plugins []string
	weights map[string]int64
	// nodes bounds each plugin's filter log: the cycle's snapshot nodes,
	// each asked about once per plugin, and the nominated node, which
	// kube-scheduler filters first and, when it fails, again with the
	// others (logMargin).
	nodes   int
	filters []filterLog // parallel to plugins

	mu        sync.Mutex
	preFilter map[string]string
	preScore  map[string]string
	scores    Scores
	selected  string
	reserved  bool
}

// filterLog is one plugin's answers, made on its first; each Filter call
// takes the next entry.
type filterLog struct {
	once    sync.Once
	entries []filterEntry
	next    atomic.Int32
}

// logMargin is room in a filter log beyond one entry per snapshot node,
// for the nodes kube-scheduler asks about twice in a cycle.
const logMargin = 8

type filterEntry struct {
	node    string
	message string // "passed" or the rejection's message
}

// NewCycleAnswers starts the answers of pod's cycle in a profile with these
// native plugins (in profile order) and score weights, on a snapshot of
// `nodes` nodes.
func NewCycleAnswers(pod PodRef, plugins []string, weights map[string]int64, nodes int) *CycleAnswers {
	return &CycleAnswers{pod: pod, plugins: plugins, weights: weights, nodes: nodes, filters: make([]filterLog, len(plugins))}
}

// Clone is the answers themselves: kube-scheduler's CycleState clones share them.
func (r *CycleAnswers) Clone() fwk.StateData { return r }

func (r *CycleAnswers) index(plugin string) int {
	for i, name := range r.plugins {
		if name == plugin {
			return i
		}
	}
	return -1
}

// Filter notes plugin's answer st on a node of the cycle's snapshot.
func (r *CycleAnswers) Filter(plugin, node string, st *fwk.Status) {
	i := r.index(plugin)
	if i < 0 {
		return
	}
	l := &r.filters[i]
	l.once.Do(func() { l.entries = make([]filterEntry, r.nodes+logMargin) })
	if at := int(l.next.Add(1) - 1); at < len(l.entries) {
		l.entries[at] = filterEntry{node: node, message: filterMessage(st)}
	}
}

// PreFilter notes plugin's PreFilter status.
func (r *CycleAnswers) PreFilter(plugin string, st *fwk.Status) { r.note(&r.preFilter, plugin, st) }

// PreScore notes plugin's PreScore status.
func (r *CycleAnswers) PreScore(plugin string, st *fwk.Status) { r.note(&r.preScore, plugin, st) }

func (r *CycleAnswers) note(m *map[string]string, plugin string, st *fwk.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[plugin] = statusMessage(st)
}

// Reserved notes the node kube-scheduler reserved for the pod and the
// scores it ranked nodes by (nil when it did not score); false when it was
// already noted (every native plugin's Reserve reports it).
func (r *CycleAnswers) Reserved(node string, scores Scores) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reserved {
		return false
	}
	r.reserved, r.selected, r.scores = true, node, scores
	return true
}

// WasReserved says whether the cycle reserved a node for the pod.
func (r *CycleAnswers) WasReserved() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reserved
}

// Pod is the pod the answers are for.
func (r *CycleAnswers) Pod() PodRef { return r.pod }

// statusMessage is how the simulator's wrapper words a status: success, or
// the status's message (which is "" for a Skip without reasons).
func statusMessage(st *fwk.Status) string {
	if st.IsSuccess() {
		return SuccessMessage
	}
	return st.Message()
}

func filterMessage(st *fwk.Status) string {
	if st.IsSuccess() {
		return PassedFilterMessage
	}
	return st.Message()
}

// Result gives the answers in the simulator's shape. Call it once the cycle
// is over.
func (r *CycleAnswers) Result() *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := &Result{SelectedNode: r.selected, PreFilterStatus: r.preFilter, PreScore: r.preScore,
		Filter: map[string]map[string]string{}, Score: map[string]map[string]string{}, FinalScore: map[string]map[string]string{}}
	for i, plugin := range r.plugins {
		l := &r.filters[i]
		n := min(int(l.next.Load()), len(l.entries))
		for _, e := range l.entries[:n] {
			put(out.Filter, e.node, plugin, e.message)
		}
	}
	if r.scores != nil {
		r.addScores(out)
	}
	return out
}

// addScores puts in each plugin's scores that kube-scheduler used: not
// skipped, failed or unfinished (those left the plugin out of Score).
func (r *CycleAnswers) addScores(out *Result) {
	nodes := r.scores.Nodes()
	for _, plugin := range r.plugins {
		ps := r.scores.Of(plugin)
		if ps == nil || ps.GetSkipped() || ps.GetError() != "" || ps.GetUnfinished() != "" || len(ps.GetScores()) != len(nodes) {
			continue
		}
		raw := ps.GetRaw()
		if len(raw) != len(nodes) {
			// A host that predates raw scores: what the shim's Score
			// returned, as the simulator's wrapper would note it.
			raw = ps.GetScores()
		}
		weight, ok := r.weights[plugin]
		if !ok {
			weight = 1
		}
		for k, node := range nodes {
			put(out.Score, node, plugin, strconv.FormatInt(raw[k], 10))
			put(out.FinalScore, node, plugin, strconv.FormatInt(ps.GetScores()[k]*weight, 10))
		}
	}
}

func put(m map[string]map[string]string, node, plugin, value string) {
	if m[node] == nil {
		m[node] = map[string]string{}
	}
	m[node][plugin] = value
}
