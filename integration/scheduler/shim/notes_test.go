package shim

import (
	"context"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// notesEnv is a profile of F (a native Filter) and S (a native Score) on a
// fake host with scores ahead; setup adjusts the host before it serves.
func notesEnv(t *testing.T, setup func(*fakeHost)) *env {
	t.Helper()
	infos := []*pb.PluginInfo{{Name: "F", HasFilter: true}, {Name: "S", HasScore: true}}
	host := newFakeHost(t, infos...)
	host.scoresAhead = true
	if setup != nil {
		setup(host)
	}
	return newEnvOn(t, host, infos, nil)
}

// reserveCycle runs pod's cycle as kube-scheduler does (frameworkCycle)
// and reserves its best node with both plugins, as the framework calls
// every Reserve plugin; it returns the state and the node.
func reserveCycle(t *testing.T, e *env, pod *v1.Pod, nodes []fwk.NodeInfo) (fwk.CycleState, string) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	for _, n := range []string{"F", "S"} {
		if _, st := e.plugins[n].PreFilter(ctx, state, pod, nodes); !st.IsSuccess() && !st.IsSkip() {
			t.Fatalf("PreFilter %s: %v", n, st)
		}
	}
	var feasible []fwk.NodeInfo
	for _, ni := range nodes {
		if e.plugins["F"].Filter(ctx, state, pod, ni).IsSuccess() {
			feasible = append(feasible, ni)
		}
	}
	scores := scoreNodes(t, e.plugins["S"], state, pod, feasible)
	best := ""
	for n, s := range scores {
		if best == "" || s > scores[best] {
			best = n
		}
	}
	for _, n := range []string{"F", "S"} {
		if st := e.plugins[n].Reserve(ctx, state, pod, best); !st.IsSuccess() {
			t.Fatalf("Reserve %s: %v", n, st)
		}
	}
	return state, best
}

// waitForPlacement waits until the host got a Placement `match` accepts.
func waitForPlacement(t *testing.T, h *fakeHost, what string, match func(*pb.Placement) bool) *pb.Placement {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		for _, p := range h.placements() {
			if match(p) {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host was not told %s within 5s; it got %v", what, h.placements())
		}
	}
}

// A host that takes notes learns what became of a cycle when
// kube-scheduler decides it, with no later cycle: the reserved node with
// the nodes scored ahead, a reservation undone, and a pod no node fits
// with kube-scheduler's own words for its filters' verdicts. Over the
// fast path and over gRPC.
func TestNotesTellTheHostWhatBecameOfACycle(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "fast path", false: "gRPC"}[fast], func(t *testing.T) {
			e := notesEnv(t, func(h *fakeHost) { h.cycleNotes, h.offerFast = true, fast })
			a := testNode("a", map[string]string{"score-S": "10"}, 0)
			b := testNode("b", map[string]string{"score-S": "90", "reject-F": ""}, 0)
			c := testNode("c", map[string]string{"score-S": "55"}, 0)
			nodes := asList(a, b, c)
			e.handle.setSnapshot(nodes)
			ctx := context.Background()

			state, best := reserveCycle(t, e, testPod("p1", nil), nodes)
			if best != "c" {
				t.Fatalf("reserved %q, want c (the best score of the feasible nodes)", best)
			}
			waitForPlacement(t, e.host, "p1's node", func(p *pb.Placement) bool {
				return p.GetPodUid() == "uid-p1" && p.GetNode() == "c" && !p.GetUnreserved()
			})
			waitForPlacement(t, e.host, "the nodes p1 was scored on", func(p *pb.Placement) bool {
				return p.GetPodUid() == "uid-p1" && len(p.GetScored()) == 2
			})
			if n := e.host.count("PreFilter"); n != 1 {
				t.Fatalf("%d PreFilter calls; the notes went without another", n)
			}
			if got := e.host.count("fast") > 1; got != fast {
				t.Fatalf("fast-path frames beyond the PreFilter's: %v, want %v", got, fast)
			}

			for _, n := range []string{"F", "S"} {
				e.plugins[n].Unreserve(ctx, state, testPod("p1", nil), "c")
			}
			waitForPlacement(t, e.host, "p1's reservation was undone", func(p *pb.Placement) bool {
				return p.GetPodUid() == "uid-p1" && p.GetNode() == "c" && p.GetUnreserved()
			})

			// p2 fits nowhere: the in-tree filters turned a and c down, F b.
			pod := testPod("p2", nil)
			state = framework.NewCycleState()
			for _, n := range []string{"F", "S"} {
				e.plugins[n].PreFilter(ctx, state, pod, nodes)
			}
			statuses := framework.NewDefaultNodeToStatus()
			statuses.Set("a", fwk.NewStatus(fwk.Unschedulable, "Insufficient cpu").WithPlugin("NodeResourcesFit"))
			statuses.Set("b", e.plugins["F"].Filter(ctx, state, pod, b))
			statuses.Set("c", fwk.NewStatus(fwk.Unschedulable, "Insufficient cpu").WithPlugin("NodeResourcesFit"))
			for _, n := range []string{"F", "S"} {
				r, st := e.plugins[n].PostFilter(ctx, state, pod, statuses)
				if r != nil || st.Code() != fwk.Unschedulable || len(st.Reasons()) != 0 {
					t.Fatalf("PostFilter %s = %v, %v; want no result and Unschedulable without a reason", n, r, st)
				}
			}
			const want = "0/3 nodes are available: 1 node(s) are marked reject-F, 2 Insufficient cpu."
			got := waitForPlacement(t, e.host, "p2 found no node", func(p *pb.Placement) bool {
				return p.GetPodUid() == "uid-p2" && p.GetUnschedulable()
			})
			if got.GetMessage() != want || got.GetNode() != "" {
				t.Fatalf("p2's note = %v; want no node and message %q", got, want)
			}
			time.Sleep(50 * time.Millisecond)
			n := 0
			for _, p := range e.host.placements() {
				if p.GetPodUid() == "uid-p2" {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("p2 noted %d times; each plugin's PostFilter runs, the first one notes", n)
			}
		})
	}
}

// A host that predates notes gets what became of a cycle with the next
// call, as before; so does a host whose NoteCycles failed.
func TestWithoutNotesTheNextCallCarriesThePlacement(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*fakeHost)
	}{
		{"older host", nil},
		{"failed note", func(h *fakeHost) {
			h.cycleNotes = true
			h.notesErr = status.Error(codes.Unavailable, "the host is going away")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := notesEnv(t, tc.setup)
			a := testNode("a", map[string]string{"score-S": "10"}, 0)
			c := testNode("c", map[string]string{"score-S": "55"}, 0)
			nodes := asList(a, c)
			_, best := reserveCycle(t, e, testPod("p1", nil), nodes)
			if tc.setup != nil {
				// The host counts the note when it arrives; the shim puts
				// its placements back for the next call only once the
				// error has come back.
				for deadline := time.Now().Add(5 * time.Second); e.host.count("NoteCycles") == 0 || !e.mgr.tracker.Host().NotesIdle(); time.Sleep(2 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("no failed NoteCycles call over within 5s (%d calls)", e.host.count("NoteCycles"))
					}
				}
			} else {
				time.Sleep(100 * time.Millisecond)
				if n := e.host.count("NoteCycles"); n != 0 {
					t.Fatalf("%d NoteCycles calls to a host that does not take them", n)
				}
			}
			for _, p := range e.host.placements() {
				if p.GetPodUid() == "uid-p1" {
					t.Fatalf("the host got %v before the next call", p)
				}
			}
			reserveCycle(t, e, testPod("p2", nil), nodes)
			waitForPlacement(t, e.host, "p1's node with p2's PreFilter", func(p *pb.Placement) bool {
				return p.GetPodUid() == "uid-p1" && p.GetNode() == best
			})
		})
	}
}

// BenchmarkPostFilterMessage is what PostFilter adds to a cycle in which
// no node fits, on the scheduling goroutine: kube-scheduler's message made
// from the statuses of 5000 nodes (three reasons), as its FailedScheduling
// event makes it again. `go test -run '^$' -bench PostFilterMessage ./scheduler/shim/`
func BenchmarkPostFilterMessage(b *testing.B) {
	var nodes []*framework.NodeInfo
	statuses := framework.NewDefaultNodeToStatus()
	reasons := []*fwk.Status{
		fwk.NewStatus(fwk.Unschedulable, "Insufficient cpu").WithPlugin("NodeResourcesFit"),
		fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) didn't have hardware encryption").WithPlugin("HwEncrypt"),
		fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) had untolerated taint").WithPlugin("TaintToleration"),
	}
	for i := 0; i < 5000; i++ {
		name := "node-" + strconv.Itoa(i)
		nodes = append(nodes, testNode(name, nil, 0))
		statuses.Set(name, reasons[i%len(reasons)])
	}
	h := &fakeHandle{snapshot: asList(nodes...)}
	p := &Plugin{name: "HwEncrypt", handle: h}
	pod := testPod("p", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if p.filtersSaid(pod, statuses) == "" {
			b.Fatal("no message")
		}
	}
}
