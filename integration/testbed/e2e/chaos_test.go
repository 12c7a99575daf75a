package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/testbed/testenv"
	"schedplug.dev/integration/testbed/twin"
)

const envChaosSeed = "SCHEDPLUG_CHAOS_SEED"

// TestChaosHostKilledAndHung schedules 1000 pods while schedplug-host is
// SIGKILLed and restarted at random moments (6 times) and frozen with
// SIGSTOP once (then thawed with SIGCONT). HwEncrypt and DedicatedNodes
// have failurePolicy Fail. At the end every pod is bound, or Pending with
// the reason its spec deserves (an annotation typo, or more cpu than any
// node has); no pod is on a node that a native Filter rejects; and
// kube-scheduler never exited or panicked. The time from each restart to
// the first pod bound after it is printed.
func TestChaosHostKilledAndHung(t *testing.T) {
	seed := time.Now().UnixNano()
	if v := os.Getenv(envChaosSeed); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an integer seed", envChaosSeed, v)
		}
		seed = n
	}
	rng := rand.New(rand.NewSource(seed))
	t.Logf("chaos: seed %d (replay the schedule with %s=%d)", seed, envChaosSeed, seed)
	testStart := time.Now()

	s := startStackWith(t, stackOptions{
		Plugins: []testenv.NativePlugin{
			{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "300ms"},
			{Name: "DedicatedNodes", FailurePolicy: "Fail", Timeout: "300ms"},
		},
		ClientQPS: 500,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	client := fastClient(t, s.cp.Config)
	ns := "chaos"
	s.must(testenv.CreateNamespace(ctx, client, ns))

	// 12 nodes, fixed for the whole test so that placements can be checked
	// against the labels they had when the pods were bound.
	nodeLabels := map[string]map[string]string{}
	var nodes []*corev1.Node
	for i := 0; i < 12; i++ {
		var labels map[string]string
		switch i % 6 {
		case 0, 1:
			labels = map[string]string{hwLabel: "true"}
		case 2:
			labels = map[string]string{dedicatedLabel: "true"}
		case 3:
			labels = map[string]string{hwLabel: "true", dedicatedLabel: "true"}
		}
		name := fmt.Sprintf("node-%02d", i)
		nodeLabels[name] = labels
		nodes = append(nodes, testenv.MakeNode(name, testenv.NodeResources{CPU: "32", Memory: "64Gi", Pods: 250}, labels))
	}
	s.createNodes(ctx, nodes...)

	// 1000 pods: plain, needing encryption, allowed on dedicated nodes,
	// both; 3% with an annotation typo and 2% asking for more cpu than any
	// node has, which must end Pending with that reason.
	const total = 1000
	type podCase struct {
		spec       testenv.PodSpec
		wantReason string // "" means it must end bound
	}
	hwTypo := `pod's annotation ` + hwAnnotation + ` must be "true" or "false"`
	var cases []podCase
	for i := 0; i < total; i++ {
		c := podCase{spec: testenv.PodSpec{Name: fmt.Sprintf("pod-%04d", i), CPU: "10m"}}
		switch r := rng.Intn(100); {
		case r < 35:
		case r < 65:
			c.spec.Annotations = map[string]string{hwAnnotation: "true"}
		case r < 80:
			c.spec.Annotations = map[string]string{dedicatedAnnotation: "true"}
		case r < 95:
			c.spec.Annotations = map[string]string{hwAnnotation: "true", dedicatedAnnotation: "true"}
		case r < 98:
			c.spec.Annotations = map[string]string{hwAnnotation: "yes"}
			c.wantReason = hwTypo
		default:
			c.spec.CPU = "64"
			c.wantReason = "Insufficient cpu"
		}
		cases = append(cases, c)
	}

	// Watch bindings to time the recovery after each restart.
	binds := newBindLog()
	go binds.follow(s.watchPods(ns))

	// Pods are created at a steady pace over about a minute while the
	// chaos goroutine below kills, restarts and freezes the host.
	createDone := make(chan error, 1)
	go func() {
		for _, c := range cases {
			if err := testenv.CreatePods(ctx, client, testenv.MakePod(ns, c.spec)); err != nil {
				createDone <- err
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		createDone <- nil
	}()

	const kills = 6
	stopAt := rng.Intn(kills) // the hang comes before this kill
	var restarts []time.Time
	var stoppedFor time.Duration
	for k := 0; k < kills; k++ {
		time.Sleep(time.Duration(2000+rng.Intn(4000)) * time.Millisecond)
		if k == stopAt {
			s.must(s.host.Signal(syscall.SIGSTOP))
			hang := time.Duration(2000+rng.Intn(2000)) * time.Millisecond
			t.Logf("chaos: host frozen (SIGSTOP) for %s, %d pods bound so far", hang, binds.count())
			time.Sleep(hang)
			s.must(s.host.Signal(syscall.SIGCONT))
			stoppedFor = hang
			restarts = append(restarts, time.Now())
			time.Sleep(time.Duration(2000+rng.Intn(2000)) * time.Millisecond)
		}
		s.host.Kill()
		down := time.Duration(300+rng.Intn(1700)) * time.Millisecond
		t.Logf("chaos: host killed (SIGKILL #%d), down for %s, %d pods bound so far", k+1, down, binds.count())
		time.Sleep(down)
		s.must(s.host.StartAndWait(30 * time.Second))
		restarts = append(restarts, time.Now())
	}
	s.must(<-createDone)
	t.Logf("chaos: all %d pods created %s after the start", total, time.Since(testStart).Round(time.Second))

	var mustBind []string
	for _, c := range cases {
		if c.wantReason == "" {
			mustBind = append(mustBind, c.spec.Name)
		}
	}
	placed, err := testenv.WaitForBound(ctx, client, ns, mustBind, 5*time.Minute)
	if err != nil {
		t.Errorf("%v", err)
	}
	// The pods that cannot fit must say why, in the scheduler's own words,
	// and not with a host failure from the chaos: the host is up now.
	pendingOK := 0
	for _, c := range cases {
		if c.wantReason == "" {
			continue
		}
		if node := placed[c.spec.Name]; node != "" {
			t.Errorf("pod %s (annotations %v, cpu %s) was bound to %s; it must stay Pending (%s)", c.spec.Name, c.spec.Annotations, c.spec.CPU, node, c.wantReason)
			continue
		}
		msg, err := testenv.WaitForFailedScheduling(ctx, client, ns, c.spec.Name, c.wantReason, 2*time.Minute)
		if err != nil {
			t.Error(err)
			continue
		}
		if strings.Contains(msg, "schedplug-host") {
			t.Errorf("pod %s is Pending with a host failure in its reason although the host is up: %q", c.spec.Name, msg)
			continue
		}
		pendingOK++
	}

	// Nothing bound where a native Filter says no.
	hw := twin.NewHwEncryptRules(twin.HwEncryptArgs{})
	dn := twin.NewDedicatedNodesRules(twin.DedicatedNodesArgs{})
	misplaced, bound := 0, 0
	for _, c := range cases {
		node := placed[c.spec.Name]
		if node == "" {
			continue
		}
		bound++
		for name, v := range map[string]twin.Verdict{
			"HwEncrypt":      hw.Filter(c.spec.Annotations, nodeLabels[node]),
			"DedicatedNodes": dn.Filter(c.spec.Annotations, nodeLabels[node]),
		} {
			if v.Code != fwk.Success {
				misplaced++
				t.Errorf("pod %s (annotations %v) is on node %s (labels %v), which %s rejects: %s", c.spec.Name, c.spec.Annotations, node, nodeLabels[node], name, v)
			}
		}
	}
	if len(placed) != total {
		t.Errorf("%d pods exist, want %d: pods were lost", len(placed), total)
	}

	// kube-scheduler survived: still the same process, no panic in its log.
	if !s.scheduler.Running() {
		t.Errorf("kube-scheduler exited during the chaos: %v", s.scheduler.ExitError())
	}
	if log, err := os.ReadFile(s.scheduler.LogFile); err == nil {
		if i := strings.Index(string(log), "panic"); i >= 0 {
			end := min(len(log), i+2000)
			t.Errorf("kube-scheduler's log mentions a panic:\n%s", log[i:end])
		}
	}

	// Recovery: from the host serving again (or thawed) to the next bind.
	var recov []string
	for i, r := range restarts {
		what := "restart"
		if stoppedFor > 0 && i == stopAt {
			what = "SIGCONT"
		}
		first, ok := binds.firstAfter(r)
		if !ok {
			t.Errorf("no pod was bound after %s #%d at %s", what, i+1, r.Format(time.RFC3339Nano))
			recov = append(recov, what+":never")
			continue
		}
		d := first.Sub(r)
		t.Logf("chaos: recovery after %s #%d: first pod bound %s later", what, i+1, d.Round(time.Millisecond))
		recov = append(recov, fmt.Sprintf("%s:%s", what, d.Round(time.Millisecond)))
	}
	text, err := s.scheduler.Metrics()
	s.must(err)
	applied, _ := testenv.MetricSum(text, "schedplug_shim_failure_policy_applied_total")
	resyncs, _ := testenv.MetricSum(text, "schedplug_shim_resyncs_total")
	t.Logf("chaos summary: %d pods, %d bound, %d Pending with the right reason, %d misplaced; %d SIGKILLs, 1 SIGSTOP of %s; failurePolicy applied %v times, %v resyncs; recovery %s; took %s",
		total, bound, pendingOK, misplaced, kills, stoppedFor, applied, resyncs, strings.Join(recov, " "), time.Since(testStart).Round(time.Second))
	if applied == 0 {
		t.Errorf("the shim never applied a failurePolicy: the host was never missed, so the chaos proved nothing")
	}
}

// bindLog notes when each pod was first seen bound.
type bindLog struct {
	mu    sync.Mutex
	times []time.Time
	seen  map[string]bool
}

func newBindLog() *bindLog { return &bindLog{seen: map[string]bool{}} }

func (b *bindLog) follow(w watch.Interface) {
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			continue
		}
		b.mu.Lock()
		if !b.seen[pod.Name] {
			b.seen[pod.Name] = true
			b.times = append(b.times, time.Now())
		}
		b.mu.Unlock()
	}
}

func (b *bindLog) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.times)
}

// firstAfter is the first bind at or after t.
func (b *bindLog) firstAfter(t time.Time) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := sort.Search(len(b.times), func(i int) bool { return !b.times[i].Before(t) })
	if i == len(b.times) {
		return time.Time{}, false
	}
	return b.times[i], true
}
