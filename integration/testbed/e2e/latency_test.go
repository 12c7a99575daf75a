package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// NetworkLatency (a C++ Score plugin whose refresh hook re-reads a file),
// scoring beside every in-tree plugin: pods go to the lowest-latency node,
// and rewriting the file moves new pods to the new lowest-latency node
// without restarting anything.
func TestNetworkLatencyScore(t *testing.T) {
	latencyFile := filepath.Join(t.TempDir(), "latency.txt")
	writeLatency(t, latencyFile, map[string]string{"lat-a": "40", "lat-b": "5", "lat-c": "20", "lat-d": "80"})
	s := startStack(t, []testenv.NativePlugin{{
		Name: "NetworkLatency", Weight: 5,
		Args:          map[string]any{"latencyFile": latencyFile},
		FailurePolicy: "Ignore", Timeout: "500ms",
	}})
	ctx := s.ctx()
	ns := s.namespace("network-latency")
	var nodes []*corev1.Node
	for _, n := range []string{"lat-a", "lat-b", "lat-c", "lat-d"} {
		nodes = append(nodes, testenv.MakeNode(n, bigNode, nil))
	}
	s.createNodes(ctx, nodes...)

	// In-tree scoring (NodeResourcesFit, BalancedAllocation, ...) stays on;
	// with small pods on big nodes latency dominates at weight 5.
	first := createBatch(t, s, ns, "first", 5)
	placed, err := testenv.WaitForBound(ctx, s.client, ns, first, 60*time.Second)
	s.must(err)
	for _, p := range first {
		if placed[p] != "lat-b" {
			t.Errorf("pod %s went to %s; want lat-b (5ms, the lowest latency)", p, placed[p])
		}
	}

	// lat-c becomes the closest. The plugin re-reads the file every few
	// seconds on the host's background thread; probe until a pod sees it.
	writeLatency(t, latencyFile, map[string]string{"lat-a": "40", "lat-b": "60", "lat-c": "1", "lat-d": "80"})
	changedAt := time.Now()
	seen := false
	for i := 0; i < 40 && !seen; i++ {
		name := fmt.Sprintf("probe-%d", i)
		s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: name, CPU: "100m"})))
		got, err := testenv.WaitForBound(ctx, s.client, ns, []string{name}, 30*time.Second)
		s.must(err)
		seen = got[name] == "lat-c"
		if !seen {
			time.Sleep(500 * time.Millisecond)
		}
	}
	if !seen {
		t.Fatalf("no pod went to lat-c within %s of rewriting %s", time.Since(changedAt).Round(time.Second), latencyFile)
	}
	t.Logf("new latency figures reached scoring %s after the file changed", time.Since(changedAt).Round(100*time.Millisecond))

	second := createBatch(t, s, ns, "second", 5)
	placed, err = testenv.WaitForBound(ctx, s.client, ns, second, 60*time.Second)
	s.must(err)
	for _, p := range second {
		if placed[p] != "lat-c" {
			t.Errorf("pod %s went to %s after the change; want lat-c (now 1ms)", p, placed[p])
		}
	}
}

func writeLatency(t *testing.T, file string, ms map[string]string) {
	t.Helper()
	text := "# node latency-ms\n"
	for _, n := range []string{"lat-a", "lat-b", "lat-c", "lat-d"} {
		text += n + " " + ms[n] + "\n"
	}
	// Write then rename, as an agent should: the plugin never reads half a file.
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

func createBatch(t *testing.T, s *stack, ns, prefix string, n int) []string {
	t.Helper()
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		s.must(testenv.CreatePods(s.ctx(), s.client, testenv.MakePod(ns, testenv.PodSpec{Name: name, CPU: "100m"})))
		names = append(names, name)
	}
	return names
}
