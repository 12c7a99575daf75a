// Package minors is the smoke test every supported Kubernetes minor runs
// (integration/k8s/minors): built with that minor's -modfile, this test
// binary holds that minor's kube-apiserver, and it runs the kube-scheduler
// built for the same minor ($SCHEDPLUG_SCHEDULER_BIN) with the host and a
// sample plugin against it. The full end-to-end suite (testbed/e2e) runs on
// the default minor only. docs/kubernetes-versions.md.
package minors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/version"

	"schedplug.dev/integration/testbed/testenv"
)

const (
	hwAnnotation = "myorg.io/require-hw-encrypt"
	hwLabel      = "node.kubernetes.io/hw-encrypt"
	// HwEncrypt's Unschedulable reason, as kube-scheduler aggregates it.
	hwReason = "node(s) didn't have hardware encryption (label node.kubernetes.io/hw-encrypt=true)"
)

// HwEncrypt (the C++ sample) through kube-scheduler and the host, against
// this minor's apiserver: pods are scheduled where it lets them, a pod it
// rejects everywhere stays Pending with its reason, and kube-scheduler's
// opportunistic batching stays on for identical pods (the shim signs them).
func TestSmoke(t *testing.T) {
	// The minor this test binary, and so its apiserver, was built from.
	minor := version.DefaultKubeBinaryVersion
	dir := t.TempDir()
	etcd, err := testenv.StartEtcd(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	cp, err := testenv.StartControlPlane(t, etcd, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)

	hostBin, err := testenv.HostBinary()
	must(t, err)
	pluginDir, err := testenv.PluginDir()
	must(t, err)
	schedBin, err := testenv.SchedulerBinary(dir)
	must(t, err)
	sockDir, err := os.MkdirTemp("", "sp-") // under the 108-byte socket path limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	configFile := filepath.Join(dir, "scheduler-config.yaml")
	cfg := testenv.SchedulerConfig{Kubeconfig: cp.Kubeconfig, NoDefaultSpread: true,
		Plugins: []testenv.NativePlugin{{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "2s"}}}
	if err := cfg.WriteFile(configFile); err != nil {
		t.Fatal(err)
	}
	host := testenv.NewHost(hostBin, pluginDir, configFile, sockDir, filepath.Join(dir, "host.log"))
	if err := host.StartAndWait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	sched, err := testenv.NewScheduler(schedBin, configFile, cp.Kubeconfig, host.Address, filepath.Join(dir, "certs"), filepath.Join(dir, "scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.StartAndWait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sched.Stop(10 * time.Second)
		host.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("----- last lines of kube-scheduler (%s) -----\n%s", sched.LogFile, sched.LogTail(60))
			t.Logf("----- last lines of schedplug-host (%s) -----\n%s", host.LogFile, host.LogTail(40))
		}
	})
	// The scheduler under test is this minor's build, not another's.
	started := regexp.MustCompile(`"Starting Kubernetes Scheduler".* version="(v[^"]*)"`).FindStringSubmatch(sched.RunLog())
	if started == nil || !strings.HasPrefix(started[1], "v"+minor+".") {
		t.Fatalf("kube-scheduler %s does not report a %s version (%q), the minor of the apiserver in this test: build it for %s (tools/dev/build-scheduler.sh --minor %s) and point SCHEDPLUG_SCHEDULER_BIN at it", schedBin, minor, started, minor, minor)
	}
	t.Logf("kube-apiserver %s, kube-scheduler %s", minor, started[1])

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := "smoke"
	must(t, testenv.CreateNamespace(ctx, cp.Client, ns))
	// Nodes that fit one such pod each: kube-scheduler reuses a ranking
	// (a batching hint) only once the node it chose is full for the next pod
	// alike, which is how 1.35 introduced it (KEP-5598).
	one := testenv.NodeResources{CPU: "4", Memory: "8Gi", Pods: 110}
	hw := map[string]string{hwLabel: "true"}
	nodes := []*corev1.Node{testenv.MakeNode("plain-1", one, nil), testenv.MakeNode("plain-2", one, nil)}
	var encNodes []string
	for i := range 6 {
		encNodes = append(encNodes, fmt.Sprintf("enc-%d", i))
		nodes = append(nodes, testenv.MakeNode(encNodes[i], one, hw))
	}
	must(t, testenv.CreateNodes(ctx, cp.Client, nodes...))
	must(t, sched.WaitForCachedNodes(ctx, len(nodes), 30*time.Second))

	// Identical pods that need hardware encryption, created at once: only
	// enc-* may take them, one each, and kube-scheduler reuses the ranking
	// of one for the next when every plugin signs them.
	var pods []*corev1.Pod
	var names []string
	for i := range encNodes {
		name := fmt.Sprintf("enc-pod-%d", i)
		pods = append(pods, testenv.MakePod(ns, testenv.PodSpec{Name: name, Annotations: map[string]string{hwAnnotation: "true"}, CPU: "3"}))
		names = append(names, name)
	}
	must(t, testenv.CreatePods(ctx, cp.Client, pods...))
	placed, err := testenv.WaitForBound(ctx, cp.Client, ns, names, 60*time.Second)
	must(t, err)
	for pod, node := range placed {
		if !strings.HasPrefix(node, "enc-") {
			t.Errorf("pod %s went to %s, which HwEncrypt rejects", pod, node)
		}
	}
	metrics, err := sched.Metrics()
	must(t, err)
	used := batchAttempts(metrics, "hint_used")
	t.Logf("placements: %v; batching hints used: %v", placed, used)
	if used < 1 {
		t.Errorf("kube-scheduler used no batching hint for %d identical pods; its batching metrics:\n%s\nits log on batching and signatures:\n%s", len(names),
			strings.Join(regexp.MustCompile(`(?m)^scheduler_batch_attempts_total.*$`).FindAllString(metrics, -1), "\n"),
			strings.Join(regexp.MustCompile(`(?mi)^.*(batch|signature).*$`).FindAllString(sched.RunLog(), 20), "\n"))
	}

	// No node left that HwEncrypt accepts: Pending, with its reason.
	for _, n := range encNodes {
		must(t, cp.Client.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}))
	}
	must(t, testenv.CreatePods(ctx, cp.Client, testenv.MakePod(ns, testenv.PodSpec{Name: "waiting", Annotations: map[string]string{hwAnnotation: "true"}, CPU: "3"})))
	// Both remaining nodes rejected by HwEncrypt. kube-scheduler may not
	// have seen every deletion yet: a node it still counts rejects the pod
	// for its cpu, so the count of all nodes is not checked.
	msg, err := testenv.WaitForFailedScheduling(ctx, cp.Client, ns, "waiting", "2 "+hwReason, 60*time.Second)
	must(t, err)
	t.Logf("FailedScheduling message = %q", msg)
}

// batchAttempts is scheduler_batch_attempts_total for one result, summed
// over its other labels (1.38 adds the profile).
func batchAttempts(exposition, result string) float64 {
	var lines []string
	for _, l := range strings.Split(exposition, "\n") {
		if strings.Contains(l, `result="`+result+`"`) {
			lines = append(lines, l)
		}
	}
	sum, _ := testenv.MetricSum(strings.Join(lines, "\n"), "scheduler_batch_attempts_total")
	return sum
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
