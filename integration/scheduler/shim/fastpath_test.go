package shim

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// fastCounts reads the fast-path counters of one method.
func fastCounts(t *testing.T, method string) (calls, fallbacks float64) {
	t.Helper()
	return metricValue(t, "schedplug_shim_fast_path_calls_total", "method", method),
		metricValue(t, "schedplug_shim_fast_path_fallbacks_total", "method", method)
}

// runCycle runs PreFilter and PreScore of one plugin on nodes and returns
// the Filter verdict on each node.
func (e *env) runCycle(t *testing.T, plugin string, pod *v1.Pod, nodes []fwk.NodeInfo) []fwk.Code {
	t.Helper()
	state := framework.NewCycleState()
	p := e.plugins[plugin]
	if _, st := p.PreFilter(context.Background(), state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	var codes []fwk.Code
	var feasible []fwk.NodeInfo
	for _, ni := range nodes {
		st := p.Filter(context.Background(), state, pod, ni)
		codes = append(codes, st.Code())
		if st.IsSuccess() {
			feasible = append(feasible, ni)
		}
	}
	if st := p.PreScore(context.Background(), state, pod, feasible); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	return codes
}

func TestFastPathCarriesTheCycleCalls(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	nodes := asList(testNode("a", nil, 0), testNode("b", map[string]string{"reject-HwEncrypt": ""}, 0))
	pfBefore, _ := fastCounts(t, "PreFilter")
	psBefore, _ := fastCounts(t, "PreScore")
	got := e.runCycle(t, "HwEncrypt", testPod("p", nil), nodes)
	if got[0] != fwk.Success || got[1] != fwk.Unschedulable {
		t.Fatalf("verdicts %v, want Success and Unschedulable", got)
	}
	if n := e.host.count("fast"); n != 2 {
		t.Fatalf("%d calls on the fast-path socket, want PreFilter and PreScore", n)
	}
	pf, _ := fastCounts(t, "PreFilter")
	ps, _ := fastCounts(t, "PreScore")
	if pf-pfBefore != 1 || ps-psBefore != 1 {
		t.Fatalf("fast_path_calls_total moved by %v (PreFilter) and %v (PreScore), want 1 and 1", pf-pfBefore, ps-psBefore)
	}
}

func TestGRPCWhenThereIsNoFastPath(t *testing.T) {
	infos := []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}
	nodes := asList(testNode("a", nil, 0), testNode("b", map[string]string{"reject-HwEncrypt": ""}, 0))
	t.Run("host offers none", func(t *testing.T) {
		host := newFakeHost(t, infos...)
		host.offerFast = false
		e := &env{host: host, handle: &fakeHandle{}, plugins: map[string]*Plugin{}}
		e.mgr = newTestManager(t, host.target(), infos)
		e.plugins["HwEncrypt"] = NewPlugin(e.mgr, "HwEncrypt", DefaultPolicy(), e.handle)
		if err := e.mgr.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := e.runCycle(t, "HwEncrypt", testPod("p", nil), nodes); got[1] != fwk.Unschedulable {
			t.Fatalf("verdicts %v", got)
		}
		if n, pf := host.count("fast"), host.count("PreFilter"); n != 0 || pf != 1 {
			t.Fatalf("%d fast-path calls and %d PreFilter calls, want 0 and 1 (over gRPC)", n, pf)
		}
	})
	t.Run("scheduler disables it", func(t *testing.T) {
		host := newFakeHost(t, infos...)
		m, err := NewManager(Config{Target: host.target(), DisableFastPath: true, ConnectTimeout: time.Second,
			Profiles: []Profile{{SchedulerName: profileName, Plugins: []string{"HwEncrypt"}}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		e := &env{host: host, handle: &fakeHandle{}, plugins: map[string]*Plugin{}, mgr: m}
		e.plugins["HwEncrypt"] = NewPlugin(m, "HwEncrypt", DefaultPolicy(), e.handle)
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.runCycle(t, "HwEncrypt", testPod("p", nil), nodes)
		if n := host.count("fast"); n != 0 {
			t.Fatalf("%d fast-path calls with DisableFastPath", n)
		}
	})
}

func TestFastPathFallsBackToGRPCWhenItsSocketIsGone(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	a := testNode("a", nil, 0)
	nodes := asList(a, testNode("b", map[string]string{"reject-HwEncrypt": ""}, 0))
	e.runCycle(t, "HwEncrypt", testPod("p", nil), nodes)
	// The pooled connection and the socket file go away; gRPC stays.
	e.host.closeFast()
	_, fbBefore := fastCounts(t, "PreFilter")
	for i := 0; i < 2; i++ {
		a.AddPod(testPod("x"+string(rune('0'+i)), nil))
		if got := e.runCycle(t, "HwEncrypt", testPod("p", nil), nodes); got[0] != fwk.Success || got[1] != fwk.Unschedulable {
			t.Fatalf("cycle %d after the fast path went away: verdicts %v", i, got)
		}
	}
	_, fb := fastCounts(t, "PreFilter")
	if fb-fbBefore != 2 {
		t.Fatalf("fast_path_fallbacks_total{PreFilter} moved by %v, want 2", fb-fbBefore)
	}
	if n := e.host.count("fast"); n != 2 {
		t.Fatalf("%d fast-path calls, want only the first cycle's 2", n)
	}
	if d := e.host.lastDelta(); d.Full {
		t.Fatal("falling back to gRPC resent the full table; the session's table is the same on both")
	}
}

func TestFastPathFaultsApplyTheFailurePolicyAndRecover(t *testing.T) {
	for _, tc := range []struct{ fault, want string }{
		{"drop", "schedplug-host could not be reached (Unavailable); plugin Strict has failurePolicy Fail"},
		{"hang", "schedplug-host did not answer within 30ms; plugin Strict has failurePolicy Fail"},
		{"garbage", "is not a schedplug.v1.FastResponse"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("Strict"), filterScorePlugin("Lenient")},
				map[string]Policy{
					"Strict":  {FailurePolicy: FailurePolicyFail, Timeout: 30 * time.Millisecond},
					"Lenient": {FailurePolicy: FailurePolicyIgnore, Timeout: 30 * time.Millisecond},
				})
			a := testNode("a", nil, 0)
			nodes := asList(a)
			pod := testPod("p", nil)
			e.runPreFilter(t, []string{"Strict", "Lenient"}, framework.NewCycleState(), pod, nodes)

			e.host.setFastFault(tc.fault)
			a.AddPod(testPod("x", nil)) // a delta whose fate the shim cannot know
			start := time.Now()
			state := framework.NewCycleState()
			sts := e.runPreFilter(t, []string{"Strict", "Lenient"}, state, pod, nodes)
			if d := time.Since(start); d > 250*time.Millisecond {
				t.Fatalf("a %s fast path blocked the cycle for %v; the timeout is 30ms", tc.fault, d)
			}
			if st := e.plugins["Strict"].Filter(context.Background(), state, pod, a); st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), tc.want) {
				t.Fatalf("Fail policy: %v %q, want a message containing %q", st.Code(), st.Message(), tc.want)
			}
			if st := sts["Lenient"]; !st.IsSkip() {
				t.Fatalf("Ignore policy: %v, want Skip", st)
			}

			// Fixed: the next cycle sees the host's verdict on the changed node.
			e.host.setFastFault("")
			a.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"reject-Strict": ""}}})
			state = framework.NewCycleState()
			sts = e.runPreFilter(t, []string{"Strict", "Lenient"}, state, pod, nodes)
			if !sts["Strict"].IsSuccess() {
				t.Fatalf("PreFilter after the fault: %v", sts["Strict"])
			}
			if st := e.plugins["Strict"].Filter(context.Background(), state, pod, a); st.Code() != fwk.Unschedulable {
				t.Fatalf("Filter after the fault: %v %q, want the host's verdict on the changed node", st.Code(), st.Message())
			}
		})
	}
}

// hookFastCounts are the fast-path calls and fallbacks of the hooks, by
// method.
func hookFastCounts(t *testing.T) (calls, fallbacks map[string]float64) {
	t.Helper()
	calls, fallbacks = map[string]float64{}, map[string]float64{}
	for _, m := range []string{"Reserve", "Unreserve", "Permit", "PreBind"} {
		calls[m], fallbacks[m] = fastCounts(t, m)
	}
	return calls, fallbacks
}

func movedBy(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for m, v := range after {
		if d := v - before[m]; d != 0 {
			out[m] = d
		}
	}
	return out
}

func TestFastPathCarriesReserveUnreserveAndPermitWhenTheHostTakesThem(t *testing.T) {
	infos := []*pb.PluginInfo{hookedPlugin("DeviceShare")}
	want := []string{"Reserve DeviceShare", "Permit DeviceShare", "PreBind DeviceShare", "Unreserve DeviceShare", "Reserve DeviceShare"}
	for _, tc := range []struct {
		name      string
		fastHooks bool
		// fast: frames on the fast-path socket (PreFilter's included).
		fast    int
		counted map[string]float64
	}{
		{"host takes them", true, 5, map[string]float64{"Reserve": 2, "Unreserve": 1, "Permit": 1}},
		{"host predates them", false, 1, map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := newFakeHost(t, infos...)
			host.fastHooks = tc.fastHooks
			pod := testPod("gpu-job", nil)
			e := newHookEnvOn(t, host, infos, nil, pod)
			before, _ := hookFastCounts(t)
			state := framework.NewCycleState()
			e.preFilter(state, pod, asList(testNode("n1", nil, 0)))
			if st := e.reserve(state, pod, "n1")["DeviceShare"]; !st.IsSuccess() {
				t.Fatalf("Reserve: %v", st)
			}
			if a := e.permit(state, pod, "n1")["DeviceShare"]; !a.st.IsSuccess() {
				t.Fatalf("Permit: %v", a.st)
			}
			if st := e.preBind(state, pod, "n1")["DeviceShare"]; !st.IsSuccess() {
				t.Fatalf("PreBind: %v", st)
			}
			e.unreserve(state, pod, "n1")
			// A plugin's refusal reads the same on either path.
			refused := testPod("other", map[string]string{"reservefail-DeviceShare": ""})
			if st := e.reserve(framework.NewCycleState(), refused, "n1")["DeviceShare"]; st.Code() != fwk.Unschedulable || st.Message() != "no devices left on n1" {
				t.Fatalf("a refused Reserve: %v %q, want Unschedulable with the plugin's reason", st.Code(), st.Message())
			}

			if got := hookMethods(host.hookCalls()); !slices.Equal(got, want) {
				t.Fatalf("hook calls %q, want %q", got, want)
			}
			if n := host.count("fast"); n != tc.fast {
				t.Fatalf("%d calls on the fast-path socket, want %d", n, tc.fast)
			}
			after, _ := hookFastCounts(t)
			if got := movedBy(before, after); !maps.Equal(got, tc.counted) {
				t.Fatalf("fast_path_calls_total moved by %v, want %v", got, tc.counted)
			}
		})
	}
}

// A fast-path connection the host closes without answering (a host that
// refused the connection or is stopping never ran the call): the Unreserve
// goes over gRPC and what Reserve took is released.
func TestUnreserveIsNotLostWhenTheHostDropsTheFastPathCall(t *testing.T) {
	infos := []*pb.PluginInfo{hookedPlugin("DeviceShare")}
	host := newFakeHost(t, infos...)
	host.fastHooks = true
	pod := testPod("gpu-job", nil)
	e := newHookEnvOn(t, host, infos, nil, pod)
	state := framework.NewCycleState()
	if st := e.reserve(state, pod, "n1")["DeviceShare"]; !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	_, fallbacksBefore := hookFastCounts(t)
	host.setFastFault("drop")
	e.unreserve(state, pod, "n1")
	host.setFastFault("")

	want := []string{"Reserve DeviceShare", "Unreserve DeviceShare"}
	if got := hookMethods(host.hookCalls()); !slices.Equal(got, want) {
		t.Fatalf("hook calls %q, want %q (the dropped Unreserve made again over gRPC)", got, want)
	}
	if n := host.count("Unreserve"); n != 1 {
		t.Fatalf("the host ran Unreserve %d times, want 1", n)
	}
	_, fallbacks := hookFastCounts(t)
	if got := movedBy(fallbacksBefore, fallbacks); !maps.Equal(got, map[string]float64{"Unreserve": 1}) {
		t.Fatalf("fast_path_fallbacks_total moved by %v, want Unreserve 1", got)
	}
}
