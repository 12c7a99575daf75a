package shim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/internal/shimtest"
)

// The Handshake carries, per profile, what kube-scheduler read for each
// native plugin: weight, args (as decoded), failure policy and timeout.
func TestHandshakeSendsPluginSettings(t *testing.T) {
	host := newFakeHost(t, filterScorePlugin("HwEncrypt"), filterScorePlugin("Latency"))
	m, err := NewManager(Config{
		Target:         host.target(),
		ConnectTimeout: 300 * time.Millisecond,
		Profiles: []Profile{{
			SchedulerName: profileName,
			Plugins:       []string{"HwEncrypt", "Latency"},
			Configs: []PluginConfig{
				{Name: "HwEncrypt", Args: &runtime.Unknown{Raw: []byte(`{"label":"x","schedplug":{"failurePolicy":"Ignore","timeout":"250ms"}}`)}},
				{Name: "Latency", Weight: 3},
			},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if err := m.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	host.mu.Lock()
	got := host.lastHandshake.GetProfiles()[0].GetSettings()
	host.mu.Unlock()
	want := []*pb.PluginSettings{
		{Name: "HwEncrypt", ArgsJson: `{"label":"x","schedplug":{"failurePolicy":"Ignore","timeout":"250ms"}}`, FailurePolicy: "Ignore", TimeoutMs: 250},
		{Name: "Latency", Weight: 3, FailurePolicy: "Fail"},
	}
	if len(got) != len(want) {
		t.Fatalf("settings sent: %v, want %v", got, want)
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("settings[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// logLines collects what the shim logs through the context's logger
// (funcr writes an error log with an "error" key, info logs with "level").
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) context() context.Context {
	logger := funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 0})
	return klog.NewContext(context.Background(), logger)
}

func (l *logLines) find(substrings ...string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
next:
	for _, line := range l.lines {
		for _, s := range substrings {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		return line
	}
	return ""
}

// A host that restarted with another config refuses the next Handshake
// (config skew): the shim logs the host's message at error level, keeps
// retrying, and every cycle meanwhile applies the failure policies.
func TestConfigSkewRefusalAppliesFailurePolicies(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	nodes := asList(testNode("a", nil, 0))
	pod := testPod("p", nil)
	if _, st := pl.PreFilter(context.Background(), framework.NewCycleState(), pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}

	const refusal = `handshake refused: kube-scheduler and schedplug-host read different KubeSchedulerConfigurations (1 difference):
  error: profile "default-scheduler", plugin "HwEncrypt": args.label is "x" in kube-scheduler and "y" in the host's config`
	e.host.reset() // the restarted host knows no session
	e.host.mu.Lock()
	e.host.handshakeErr = status.Error(codes.InvalidArgument, refusal)
	e.host.mu.Unlock()

	var logs logLines
	ctx := logs.context()
	state := framework.NewCycleState()
	pl.PreFilter(ctx, state, pod, nodes)
	if st := pl.Filter(ctx, state, pod, nodes[0]); st.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("Filter while the host refuses the session: %v, want the Fail policy's UnschedulableAndUnresolvable", st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for logs.find(`"error"=`, "rejected this scheduler's native plugins", `args.label is \"x\" in kube-scheduler`) == "" {
		if time.Now().After(deadline) {
			logs.mu.Lock()
			t.Fatalf("no error log with the host's refusal within 10s; logged:\n%s", strings.Join(logs.lines, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e.mgr.Connected() {
		t.Fatal("the shim has a session although the host refused it")
	}

	// The host comes back with the scheduler's config: the shim reconnects.
	e.host.mu.Lock()
	e.host.handshakeErr = nil
	e.host.mu.Unlock()
	waitReady(t, e.mgr)
}

// Against the real host: kube-scheduler's own reader of the same file
// yields settings the host accepts (its numbers and key order differ from
// the host's YAML reader), and a weight changed in kube-scheduler's copy
// makes Start fail with the host's message naming the field.
func TestConfigSkewAgainstRealHost(t *testing.T) {
	target, configFile := shimtest.StartRealHostWithConfig(t)
	names := []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"}
	profilesOf := func(file string) []Profile {
		cfg, err := options.LoadConfigFromFile(klog.Background(), file)
		if err != nil {
			t.Fatal(err)
		}
		return []Profile{{SchedulerName: "schedplug-scheduler", Plugins: names, Configs: PluginConfigs(&cfg.Profiles[0], names)}}
	}
	start := func(profiles []Profile) error {
		m, err := NewManager(Config{Target: target, ConnectTimeout: 5 * time.Second, Profiles: profiles})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		return m.Start(context.Background())
	}
	same := profilesOf(configFile)
	if len(same[0].Configs) != 3 || same[0].Configs[2].Weight != 5 || same[0].Configs[0].Args == nil {
		t.Fatalf("PluginConfigs from the shipped config: %+v", same[0].Configs)
	}
	if err := start(same); err != nil {
		t.Fatalf("Start with kube-scheduler's reading of the host's own config: %v", err)
	}

	text, err := os.ReadFile(configFile)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(text), "weight: 5", "weight: 7", 1)
	// Spelt differently, the same value: not a difference.
	changed = strings.Replace(changed, "defaultLatencyMs: 100", "defaultLatencyMs: 100.0", 1)
	if changed == string(text) || !strings.Contains(changed, "100.0") {
		t.Fatal("config/scheduler-config.yaml changed; update this test's edits")
	}
	other := filepath.Join(t.TempDir(), "kube-scheduler-config.yaml")
	if err := os.WriteFile(other, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	err = start(profilesOf(other))
	want := `profile "schedplug-scheduler", plugin "NetworkLatency": the score weight is 7 in kube-scheduler and 5 in the host's config`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "(1 difference)") {
		t.Fatalf("Start with a changed weight: %v\nwant the host's refusal containing %q and only that difference", err, want)
	}
}
