package cycle

import (
	"sync"
	"time"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/nodetable"
	"schedplug.dev/integration/scheduler/shim/session"
	"schedplug.dev/integration/scheduler/shim/simannot"
)

// Tracker starts the scheduling cycles of every profile, one at a time as
// kube-scheduler runs them, and carries what a cycle leaves for the next:
// which nodes its Filter visited and how recent windows fared (the next
// window's guide), and the verdicts kept per profile.
type Tracker struct {
	host     *Host
	policies Policies
	opts     Options

	mu      sync.Mutex
	last    *Cycle
	visits  visitSet
	windows windowLog
	runs    runLog
	// passed: how many nodes passed every native Filter in the recent
	// runs (the feasible target's guide).
	passed runLog
	// walks: how far kube-scheduler's start index moves (walk.go).
	walks   walkLog
	kept    map[string]*keptVerdicts
	lastSig map[string]string
	// reusable counts the cycles that could answer from kept verdicts,
	// for the spot checks; distrust holds the plugins a spot check caught.
	reusable uint64
	distrust distrust

	// The lazy cycle of the scheduling cycle kube-scheduler runs now (see
	// Lazy); lazyMu makes its creation happen once.
	lazyMu    sync.Mutex
	lazyToken any
	lazyCycle *Cycle
}

// Policies are what the shim's plugins were configured with.
type Policies interface {
	// CallTimeout is the deadline of a call that serves every native plugin
	// of the profile.
	CallTimeout(profile string) time.Duration
	// PluginTimeout is the plugin's own deadline.
	PluginTimeout(profile, plugin string) time.Duration
	// Plugins are the profile's native plugins.
	Plugins(profile string) []string
}

// Options switch verdict sources off.
type Options struct {
	// EvaluateAllNodes makes every PreFilter ask about every node instead
	// of the window kube-scheduler's Filter is expected to visit.
	EvaluateAllNodes bool
	// NoVerdictReuse makes every cycle call the host (no kept verdicts).
	NoVerdictReuse bool
	// NoScoresAhead makes every cycle ask PreScore for its scores (no
	// scores ahead, ahead.go).
	NoScoresAhead bool
	// SpotCheckEvery makes one of every SpotCheckEvery cycles that could
	// answer from kept verdicts call the host and compare (0: never).
	SpotCheckEvery int
}

// NewTracker starts cycles whose calls go to host.
func NewTracker(host *Host, policies Policies, opts Options) *Tracker {
	registerMetrics()
	return &Tracker{host: host, policies: policies, opts: opts, kept: map[string]*keptVerdicts{}, lastSig: map[string]string{}}
}

// SetOptions switches verdict sources for the cycles started from now on.
func (t *Tracker) SetOptions(o Options) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.opts = o
}

// Options are the switches in force.
func (t *Tracker) Options() Options {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.opts
}

// Host is where the cycles' calls go.
func (t *Tracker) Host() *Host { return t.host }

// Start is what a cycle begins with.
type Start struct {
	Profile       string
	Pod           *pb.Pod
	Nodes         []fwk.NodeInfo
	PodGroupCycle bool
	Nominated     string
	// Snapshot finds a node of the cycle's snapshot by name (nil: none).
	Snapshot func(name string) fwk.NodeInfo
	// Answers, when set, is where the shim notes the cycle's answers for
	// the simulator's annotations (Cycle.Answers).
	Answers *simannot.CycleAnswers
}

// Start begins a cycle. It folds the last cycle's answers into the kept
// verdicts, and decides whether this one answers from them (no call) or
// needs its call (Cycle.Called).
func (t *Tracker) Start(in Start) *Cycle {
	c := &Cycle{t: t, profile: in.Profile, pod: in.Pod, nodes: in.Nodes, podGroupCycle: in.PodGroupCycle,
		nominated: in.Nominated, snapshot: in.Snapshot, answers: in.Answers}
	s := t.host.client.Current()
	opts := t.Options()
	c.scoreOnly = scoreOnly(s, t.policies.Plugins(in.Profile))
	// A cycle that writes the simulator's annotations asks PreScore for
	// the raw scores beside the normalized ones instead.
	c.scoresAhead = !opts.NoScoresAhead && in.Answers == nil && scoresAheadFor(s, t.policies.Plugins(in.Profile))
	var keys *podKeys
	ok := false
	if !c.scoreOnly && !opts.NoVerdictReuse && s != nil && !in.PodGroupCycle {
		ok, keys = keepable(s, t.policies.Plugins(in.Profile))
	}
	if ok {
		c.sig = podSignature(in.Pod, keys)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.noteLast()
	// After noteLast, which may have caught a plugin in a spot check.
	if ok && t.distrust.anyOf(s, t.policies.Plugins(in.Profile)) {
		ok, c.sig = false, ""
	}
	if k := t.kept[in.Profile]; ok && k.usable(s, c.sig, in.Nodes) && !t.spotCheckDue(c, k) {
		c.kept = k
		verdictReuseCycles.Inc()
		v := newVisitSet(len(k.bySlot))
		c.visits.Store(&v)
	}
	t.last = c
	return c
}

// scoreOnly says whether a profile with these native plugins makes only
// the PreScore call on session s: the host takes the delta with it, and
// every plugin is known to have no Filter.
func scoreOnly(s *session.Session, plugins []string) bool {
	if s == nil || !s.PreScoreDelta || len(plugins) == 0 {
		return false
	}
	for _, name := range plugins {
		if info := s.Plugin(name); info == nil || info.GetHasFilter() {
			return false
		}
	}
	return true
}

// noteLast takes what the last cycle left: the nodes its Filter visited,
// whether it went beyond its window, and (for a profile that keeps
// verdicts) its answers. Callers hold t.mu.
func (t *Tracker) noteLast() {
	last := t.last
	if last == nil {
		return
	}
	v := last.visits.Load()
	if v != nil {
		t.visits = *v
	}
	r, err, over := last.call.result()
	rejected := -1 // unknown without the cycle's own verdicts
	if over && err == nil && r != nil && v != nil {
		rejected = rejectedVisits(*v, r.verdicts.Load())
	}
	if v != nil {
		t.walks.note(*v, rejected)
	} else {
		t.walks.note(nil, -1)
	}
	if over && err == nil {
		if windowed, missed := r.windowOutcome(); windowed && t.windows.add(missed) {
			klog.Background().V(2).Info("kube-scheduler's Filter went beyond the filter window too often; schedplug-host evaluates every node for a while", "misses", windowMaxMisses, "of", windowLogSize, "pausedCycles", windowPause)
		}
		if passed, ok := r.passedIn(t.visits, t.walks.counted(r.order)); ok {
			t.passed.add(passed)
		}
	}
	if last.sig != "" {
		t.keep(last)
	}
}

// windowGuide is the window function of the call being made now: nil
// (every node) when windows are off or paused, or nothing guides them.
func (t *Tracker) windowGuide(nominated string) windowFunc {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.opts.EvaluateAllNodes {
		return nil
	}
	window := windowFor(t.visits, nominated, &t.runs, t.passed.longest(), &t.walks)
	if window != nil && !t.windows.allowed() {
		// Paused: every node, but the run is noted for the windows after.
		return func(plan *nodetable.Plan, table *nodetable.Table, targeted bool) windowPlan {
			window(plan, table, false)
			return windowPlan{}
		}
	}
	return window
}

// scoreGuide is what predicts the nodes a score-only cycle asks scores
// ahead for: the nodes the last cycle scored (nil: nothing to go by, or
// windows are off).
func (t *Tracker) scoreGuide() visitSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.opts.EvaluateAllNodes {
		return nil
	}
	return t.visits
}

// Lazy is the cycle of the scheduling cycle that `token` names (the
// CycleState's PodsToActivate, which kube-scheduler writes at the start of
// every cycle and its clones share), for a profile that enables its native
// plugins at filter or score but not at preFilter: the first of the
// cycle's Filters, in whichever clone of the CycleState it runs, creates
// it with start; the others get the same. A nil token has no such
// identity: start is then called every time, under the same lock.
func (t *Tracker) Lazy(token any, start func() *Cycle) *Cycle {
	t.lazyMu.Lock()
	defer t.lazyMu.Unlock()
	if token != nil && token == t.lazyToken {
		return t.lazyCycle
	}
	c := start()
	if token != nil {
		t.lazyToken, t.lazyCycle = token, c
	}
	return c
}
