package simannot

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// What a cycle's answers cost (docs/simulator-annotations.md, "What it
// costs"): the Filter note on the scheduling cycle's hot path, from the
// framework's parallel workers, and, off it, the writer's formatting of a
// cycle into the patch.
//
//	go test ./scheduler/shim/simannot/ -run X -bench . -benchmem

// BenchmarkCycleAnswers is one cycle's answers on the hot path: made, then
// the Filter answers of two plugins on every node of a 5000-node snapshot
// noted from 16 goroutines at once, as kube-scheduler's Filter workers
// do (one answer in five a rejection). ns/filter is the cost of one note.
func BenchmarkCycleAnswers(b *testing.B) {
	const nodes, workers = 5000, 16
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i)
	}
	rejected := fwk.NewStatus(fwk.Unschedulable, hwReason)
	b.ReportAllocs()
	for b.Loop() {
		r := NewCycleAnswers(PodRef{Name: "p", UID: "u"}, []string{"HwEncrypt", "DedicatedNodes"}, nil, nodes)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < nodes; i += workers {
					if i%5 == 0 {
						r.Filter("HwEncrypt", names[i], rejected)
						continue
					}
					r.Filter("HwEncrypt", names[i], nil)
					r.Filter("DedicatedNodes", names[i], nil)
				}
			}()
		}
		wg.Wait()
	}
	notes := nodes + nodes*4/5
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(notes), "ns/filter")
}

// BenchmarkPatch is the writer's work for one pod: the cycle's answers as
// the simulator's annotations, encoded as the merge patch, on clusters of
// 500 and 5000 nodes that kube-scheduler filtered entirely (one pod in
// five rejected by HwEncrypt) and scored 230 and 500 of (its adaptive
// percentageOfNodesToScore), with two Filter plugins and one Score.
func BenchmarkPatch(b *testing.B) {
	for _, n := range []struct{ nodes, scored int }{{500, 230}, {5000, 500}} {
		b.Run(fmt.Sprintf("nodes=%d", n.nodes), func(b *testing.B) {
			r := NewCycleAnswers(PodRef{Namespace: "ns", Name: "p", UID: "u"}, []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"}, map[string]int64{"NetworkLatency": 5}, n.nodes)
			sc := &pb.PluginScores{Plugin: "NetworkLatency"}
			var feasible []string
			for i := range n.nodes {
				node := fmt.Sprintf("node-%04d", i)
				if i%5 == 0 {
					r.Filter("HwEncrypt", node, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, hwReason))
					continue
				}
				r.Filter("HwEncrypt", node, nil)
				r.Filter("DedicatedNodes", node, nil)
				if len(feasible) < n.scored {
					feasible = append(feasible, node)
					sc.Scores, sc.Raw = append(sc.Scores, int64(i%101)), append(sc.Raw, int64(i*37))
				}
			}
			r.Reserved(feasible[0], scores{nodes: feasible, plugins: map[string]*pb.PluginScores{"NetworkLatency": sc}})
			var size int
			b.ReportAllocs()
			for b.Loop() {
				body, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": "u", "annotations": r.Result().Annotations(DefaultBudget)}})
				if err != nil {
					b.Fatal(err)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "patch-bytes")
		})
	}
}
