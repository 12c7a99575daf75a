package cycle

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/internal/shimtest"
	"schedplug.dev/integration/scheduler/shim/nodetable"
	"schedplug.dev/integration/scheduler/shim/session"
	"schedplug.dev/integration/scheduler/shim/wire"
)

// TestFastPathAgainstRealHost compares the fast path with gRPC on a real
// schedplug-host: the same PreFilter answers for the same cycles.
func TestFastPathAgainstRealHost(t *testing.T) {
	target := shimtest.StartRealHost(t)
	names := []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"}
	var mu sync.Mutex
	var fastCalls []session.FastCall
	onFast := func(c session.FastCall) {
		mu.Lock()
		fastCalls = append(fastCalls, c)
		mu.Unlock()
	}
	fast := hostOn(t, session.Config{Target: target, OnFastCall: onFast}, names)
	slow := hostOn(t, session.Config{Target: target, DisableFastPath: true, OnFastCall: onFast}, names)
	if !fast.Client().Current().HasFastPath() {
		t.Fatal("the real host offered no fast path on its unix socket")
	}
	var nodes []fwk.NodeInfo
	for i := 0; i < 30; i++ {
		labels := map[string]string{}
		if i%3 == 0 {
			labels["node.kubernetes.io/hw-encrypt"] = "true"
		}
		if i%5 == 0 {
			labels["schedplug.io/dedicated"] = "true"
		}
		nodes = append(nodes, shimtest.Node("n"+string(rune('a'+i)), labels, i%4))
	}
	for i := 0; i < 6; i++ {
		pod := shimtest.Pod("p"+string(rune('0'+i)), nil)
		pod.Annotations = map[string]string{}
		if i%2 == 0 {
			pod.Annotations["myorg.io/require-hw-encrypt"] = "true"
		}
		if i%3 == 0 {
			pod.Annotations["schedplug.io/dedicated-ok"] = "true"
		}
		call := preFilterCall{profile: "schedplug-scheduler", pod: wire.Pod(pod, 0), nodes: nodes, timeout: time.Second}
		a, err := fast.preFilter(context.Background(), call)
		if err != nil {
			t.Fatalf("fast path PreFilter: %v", err)
		}
		b, err := slow.preFilter(context.Background(), call)
		if err != nil {
			t.Fatalf("gRPC PreFilter: %v", err)
		}
		if !proto.Equal(a.resp, b.resp) {
			t.Fatalf("pod %d: the fast path answered\n%v\ngRPC answered\n%v", i, a.resp, b.resp)
		}
		nodes[i].(*framework.NodeInfo).AddPod(shimtest.Pod("added"+string(rune('0'+i)), nil))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fastCalls) != 6 {
		t.Fatalf("OnFastCall saw %d calls, want the 6 of the fast manager only", len(fastCalls))
	}
	for _, c := range fastCalls {
		if c.Method != "PreFilter" || c.Err != nil || c.SentBytes <= 4 || c.ReceivedBytes <= 4 || c.Wall <= 0 || c.Read <= 0 || c.Read > c.Wall {
			t.Fatalf("fast call %+v", c)
		}
	}
}

// BenchmarkCycleRoundTrip is the PreFilter and PreScore round trips of one
// cycle against a real schedplug-host, over the fast path and over gRPC
// side by side: 500 nodes, one of them changed per cycle, the shim's own
// bookkeeping included; "ahead" is the one PreFilter with scores ahead and
// the shim's normalization of them (no PreScore); "score-only" is the one
// PreScore (with the delta) of a profile without native filters, over the
// fast path, and "score-only-ahead" the same sent raw and read back, as a
// score-only cycle does from PreFilter to PreScore; "ahead-reserved" is
// "ahead" with kube-scheduler's Reserve, which tells a host that takes
// notes off the cycle (NoteCycles) and an older host with the next call.
// `go test -run '^$' -bench CycleRoundTrip ./scheduler/shim/cycle/`
// (the benchmark starts the host, as the tests do).
func BenchmarkCycleRoundTrip(b *testing.B) {
	target := shimtest.StartRealHost(b)
	names := []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"}
	var nodes []fwk.NodeInfo
	var feasible []string
	for i := 0; i < 500; i++ {
		labels := map[string]string{"node.kubernetes.io/hw-encrypt": "true"}
		name := fmt.Sprintf("node-%03d", i)
		nodes = append(nodes, shimtest.Node(name, labels, i%4))
		feasible = append(feasible, name)
	}
	// kube-scheduler's snapshot lister, by name.
	byName := map[string]fwk.NodeInfo{}
	for _, ni := range nodes {
		byName[ni.Node().Name] = ni
	}
	for _, transport := range []string{"fast", "grpc", "ahead", "ahead-reserved", "score-only", "score-only-ahead"} {
		b.Run(transport, func(b *testing.B) {
			h := hostOn(b, session.Config{Target: target, DisableFastPath: transport == "grpc"}, names)
			call := preFilterCall{profile: "schedplug-scheduler", pod: wire.Pod(shimtest.Pod("p", nil), 0), nodes: nodes, timeout: time.Second,
				snapshot: func(name string) fwk.NodeInfo { return byName[name] }, scoreAhead: strings.HasPrefix(transport, "ahead")}
			c := &Cycle{t: &Tracker{host: h}, pod: call.pod, scoreOnly: transport == "score-only-ahead"}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				nodes[i%len(nodes)].(*framework.NodeInfo).AddPod(shimtest.Pod(fmt.Sprintf("x%d", i), nil))
				switch transport {
				case "score-only":
					if _, err := h.preScoreAlone(ctx, call, feasible); err != nil {
						b.Fatal(err)
					}
					continue
				case "score-only-ahead":
					a, err := h.finishScoresAhead(ctx, h.startScoresAhead(ctx, call, func(p *nodetable.Plan) []uint32 { return aheadSlots(p.Order, nil) }))
					if err != nil {
						b.Fatal(err)
					}
					if s, why := c.fromAhead(a, feasible, nodes); s == nil {
						b.Fatalf("scores ahead did not serve: %s", why)
					}
					continue
				case "ahead", "ahead-reserved":
					r, err := h.preFilter(ctx, call)
					if err != nil {
						b.Fatal(err)
					}
					if s, why := c.fromAhead(r.ahead.Load(), feasible, nodes); s == nil {
						b.Fatalf("scores ahead did not serve: %s", why)
					}
					if transport == "ahead-reserved" {
						h.Placed(call.pod.GetUid(), feasible[i%len(feasible)])
					}
					continue
				}
				if _, err := h.preFilter(ctx, call); err != nil {
					b.Fatal(err)
				}
				if _, err := h.preScore(ctx, call, feasible, appliesInfo{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// hostOn is a Host on a session with the host at cfg.Target, for a profile
// "schedplug-scheduler" with the native plugins `names`.
func hostOn(t testing.TB, cfg session.Config, names []string) *Host {
	t.Helper()
	cfg.ConnectTimeout = 5 * time.Second
	client, err := session.NewClient(cfg, session.Hooks{Request: func(context.Context) *pb.HandshakeRequest {
		return &pb.HandshakeRequest{ProtocolVersion: pb.ProtocolVersion_PROTOCOL_VERSION_1, ClientId: t.Name(),
			Profiles: []*pb.ProfilePlugins{{SchedulerName: "schedplug-scheduler", Plugins: names}}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if client.Current() == nil {
		t.Fatalf("no session with the host at %s", cfg.Target)
	}
	return NewHost(client)
}
