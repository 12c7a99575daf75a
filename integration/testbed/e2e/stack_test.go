package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"schedplug.dev/integration/testbed/testenv"
)

// stack is one test's cluster: apiserver, host, scheduler.
type stack struct {
	t          *testing.T
	cp         *testenv.ControlPlane
	client     kubernetes.Interface
	host       *testenv.Host
	scheduler  *testenv.Scheduler
	configFile string
	dir        string
}

// startStack starts an apiserver, the host and the scheduler with a profile
// enabling the given native plugins. A missing host or plugin build fails
// the test with the command that builds it.
func startStack(t *testing.T, plugins []testenv.NativePlugin) *stack {
	t.Helper()
	return startStackWith(t, stackOptions{Plugins: plugins})
}

// stackOptions are what startStackWith varies.
type stackOptions struct {
	Plugins     []testenv.NativePlugin
	FilterFirst []string // see testenv.SchedulerConfig
	ClientQPS   float32
	// PercentageOfNodesToScore is the profile's (0: the adaptive default).
	PercentageOfNodesToScore int32
	// Twin runs the test build of kube-scheduler with the Go twins and
	// TwinCheck (testenv.TwinSchedulerBinary).
	Twin         bool
	SchedulerEnv []string
	// HostPlugins, when set, gives schedplug-host its own configuration
	// with only these plugins (it refuses names it cannot serve, such as
	// the Go twins); otherwise both read the scheduler's file.
	HostPlugins []testenv.NativePlugin
	// ConfigYAML, when set, is the whole scheduler configuration for
	// both (given the apiserver's kubeconfig); Plugins etc. are unused.
	ConfigYAML func(kubeconfig string) string
	// PluginDir, when set, is schedplug-host's plugin directory instead of
	// the sample plugins' (testenv.PluginDirOf).
	PluginDir string
	// HostMetrics makes the host serve its metrics (stack.host.Metrics).
	HostMetrics bool
	// HostArgs are more schedplug-host flags (--record DIR, ...).
	HostArgs []string
	// APIServerFlags are more kube-apiserver flags (--feature-gates,
	// --runtime-config, ...).
	APIServerFlags []string
	// SchedulerArgs are more kube-scheduler flags (--feature-gates, ...).
	SchedulerArgs []string
}

func startStackWith(t *testing.T, o stackOptions) *stack {
	t.Helper()
	hostBin, err := testenv.HostBinary()
	if err != nil {
		t.Fatal(err)
	}
	pluginDir := o.PluginDir
	if pluginDir == "" {
		if pluginDir, err = testenv.PluginDir(); err != nil {
			t.Fatal(err)
		}
	}
	schedulerBinary := testenv.SchedulerBinary
	if o.Twin {
		schedulerBinary = testenv.TwinSchedulerBinary
	}
	schedBin, err := schedulerBinary(shared.dir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Unix socket paths must stay under 108 bytes; t.TempDir() can be long.
	sockDir, err := os.MkdirTemp("", "sp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })

	cp, err := testenv.StartControlPlane(t, shared.etcd, dir, o.APIServerFlags...)
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, cp: cp, client: cp.Client, dir: dir, configFile: filepath.Join(dir, "scheduler-config.yaml")}
	t.Cleanup(s.stop)

	if o.ConfigYAML != nil {
		if err := os.WriteFile(s.configFile, []byte(o.ConfigYAML(cp.Kubeconfig)), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		cfg := testenv.SchedulerConfig{Kubeconfig: cp.Kubeconfig, Plugins: o.Plugins, FilterFirst: o.FilterFirst, ClientQPS: o.ClientQPS,
			PercentageOfNodesToScore: o.PercentageOfNodesToScore}
		if err := cfg.WriteFile(s.configFile); err != nil {
			t.Fatal(err)
		}
	}
	hostConfig := s.configFile
	if o.HostPlugins != nil {
		hostConfig = filepath.Join(dir, "host-config.yaml")
		hcfg := testenv.SchedulerConfig{Kubeconfig: cp.Kubeconfig, Plugins: o.HostPlugins}
		if err := hcfg.WriteFile(hostConfig); err != nil {
			t.Fatal(err)
		}
	}
	s.host = testenv.NewHost(hostBin, pluginDir, hostConfig, sockDir, filepath.Join(dir, "host.log"))
	s.host.AddArgs(o.HostArgs...)
	if o.HostMetrics {
		if err := s.host.ServeMetrics(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.host.StartAndWait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	s.scheduler, err = testenv.NewScheduler(schedBin, s.configFile, cp.Kubeconfig, s.host.Address, filepath.Join(dir, "scheduler-certs"), filepath.Join(dir, "scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	s.scheduler.AddEnv(o.SchedulerEnv...)
	s.scheduler.AddArgs(o.SchedulerArgs...)
	if err := s.scheduler.StartAndWait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	return s
}

// stop shuts the scheduler and the host down (SIGTERM, then SIGKILL) and
// the apiserver; on failure it prints the end of both logs.
func (s *stack) stop() {
	if s.scheduler != nil {
		if !s.scheduler.Stop(10 * time.Second) {
			s.t.Errorf("kube-scheduler did not exit within 10s of SIGTERM")
		}
	}
	if s.host != nil {
		if !s.host.Stop(10 * time.Second) {
			s.t.Errorf("schedplug-host did not exit within 10s of SIGTERM")
		}
	}
	if s.t.Failed() {
		for _, p := range []*testenv.Process{s.processOf(s.host), s.processOf(s.scheduler)} {
			if p != nil {
				s.t.Logf("----- last lines of %s (%s) -----\n%s", p.Name, p.LogFile, p.LogTail(80))
			}
		}
	}
	s.keepLogs()
	s.cp.Stop()
}

func (s *stack) processOf(v any) *testenv.Process {
	switch p := v.(type) {
	case *testenv.Host:
		if p != nil {
			return p.Process
		}
	case *testenv.Scheduler:
		if p != nil {
			return p.Process
		}
	}
	return nil
}

// keepLogs copies the logs to $SCHEDPLUG_E2E_LOGS/<test>/ when that is set
// (pass or fail), since the test's temp dir is removed.
func (s *stack) keepLogs() {
	dest := os.Getenv("SCHEDPLUG_E2E_LOGS")
	if dest == "" {
		return
	}
	dest = filepath.Join(dest, s.t.Name())
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return
	}
	for _, name := range []string{"host.log", "scheduler.log", "scheduler-config.yaml"} {
		if data, err := os.ReadFile(filepath.Join(s.dir, name)); err == nil {
			_ = os.WriteFile(filepath.Join(dest, name), data, 0o644)
		}
	}
	s.t.Logf("logs kept in %s", dest)
}

// ctx is a context bounded by the test's deadline.
func (s *stack) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	s.t.Cleanup(cancel)
	return ctx
}

// watchPods watches the pods of ns with a client of its own, without the
// 30 s request timeout that would end the watch part-way through a test.
func (s *stack) watchPods(ns string) watch.Interface {
	s.t.Helper()
	cfg := rest.CopyConfig(s.cp.Config)
	cfg.Timeout = 0
	client, err := kubernetes.NewForConfig(cfg)
	s.must(err)
	w, err := client.CoreV1().Pods(ns).Watch(s.ctx(), metav1.ListOptions{})
	s.must(err)
	s.t.Cleanup(w.Stop)
	return w
}

// namespace creates a namespace named after the test.
func (s *stack) namespace(name string) string {
	s.t.Helper()
	if err := testenv.CreateNamespace(s.ctx(), s.client, name); err != nil {
		s.t.Fatal(err)
	}
	return name
}

// createNodes creates nodes and, while kube-scheduler runs, waits until
// its cache holds every node of the cluster, so that pods created next are
// scheduled on the whole cluster (testenv.Scheduler.WaitForCachedNodes).
func (s *stack) createNodes(ctx context.Context, nodes ...*corev1.Node) {
	s.t.Helper()
	s.must(testenv.CreateNodes(ctx, s.client, nodes...))
	if s.scheduler == nil || !s.scheduler.Running() {
		return
	}
	all, err := s.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	s.must(err)
	s.must(s.scheduler.WaitForCachedNodes(ctx, len(all.Items), 30*time.Second))
}

// mustf fails the test now if err is not nil.
func (s *stack) must(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

// placementError explains a pod on a node the policy forbids.
func placementError(pod, node, why string) error {
	return fmt.Errorf("pod %s is on node %s, which %s", pod, node, why)
}
