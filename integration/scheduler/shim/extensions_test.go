package shim

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// kube-scheduler's own framework, with the shim plugins under multiPoint,
// registers Permit, PreBind and PreEnqueue only for the native plugin that
// has those hooks; both are Reserve plugins.
// newShimFramework is kube-scheduler's own framework for one profile with
// the shim plugins of `infos` under multiPoint, on a fake host.
func newShimFramework(t *testing.T, infos ...*pb.PluginInfo) (framework.Framework, *fakeHost) {
	t.Helper()
	schedmetrics.Register() // the framework's own, which kube-scheduler registers at start
	host := newFakeHost(t, infos...)
	m := newTestManager(t, host.target(), infos)
	registry := frameworkruntime.Registry{
		queuesort.Name:     frameworkruntime.PluginFactory(queuesort.New),
		defaultbinder.Name: frameworkruntime.PluginFactory(defaultbinder.New),
	}
	profile := &config.KubeSchedulerProfile{SchedulerName: profileName, Plugins: &config.Plugins{
		QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
		Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
	}}
	for _, info := range infos {
		registry[info.Name] = frameworkruntime.PluginFactory(FactoryFor(func() (*Manager, error) { return m, nil }, info.Name))
		profile.Plugins.MultiPoint.Enabled = append(profile.Plugins.MultiPoint.Enabled, config.Plugin{Name: info.Name})
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	fw, err := frameworkruntime.NewFramework(ctx, registry, profile, frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()))
	if err != nil {
		t.Fatal(err)
	}
	return fw, host
}

// kube-scheduler's own framework, with the shim plugins under multiPoint,
// registers Permit, PreBind and PreEnqueue only for the native plugin that
// has those hooks; both are Reserve plugins.
func TestFrameworkRegistersTheHooksOfEachNativePlugin(t *testing.T) {
	fw, _ := newShimFramework(t, hookedPlugin("DeviceShare"), filterScorePlugin("HwEncrypt"))
	plugins := fw.ListPlugins()
	names := func(set *config.PluginSet) []string {
		var out []string
		for _, p := range set.Enabled {
			out = append(out, p.Name)
		}
		return out
	}
	for point, want := range map[string]struct {
		got, want []string
	}{
		"reserve": {names(&plugins.Reserve), []string{"DeviceShare", "HwEncrypt"}},
		"permit":  {names(&plugins.Permit), []string{"DeviceShare"}},
		"preBind": {names(&plugins.PreBind), []string{"DeviceShare"}},
		"filter":  {names(&plugins.Filter), []string{"DeviceShare", "HwEncrypt"}},
	} {
		if !slices.Equal(want.got, want.want) {
			t.Errorf("%s plugins %q, want %q", point, want.got, want.want)
		}
	}
	var preEnqueue []string
	for _, p := range fw.PreEnqueuePlugins() {
		preEnqueue = append(preEnqueue, p.Name())
	}
	if !slices.Equal(preEnqueue, []string{"DeviceShare"}) {
		t.Errorf("preEnqueue plugins %q, want [DeviceShare]", preEnqueue)
	}
}

// The framework's waiting pod waits for each native plugin that made it
// wait, by name, until the host's decisions come on the watch stream.
func TestFrameworkWaitingPodFollowsTheHostsDecisions(t *testing.T) {
	fw, host := newShimFramework(t, hookedPlugin("DeviceShare"), hookedPlugin("Quota"))
	ctx := context.Background()

	allowed := testPod("allowed", map[string]string{"wait-DeviceShare": "10000", "wait-Quota": "10000"})
	if st := runPermit(ctx, fw, framework.NewCycleState(), allowed, "n1"); !st.IsWait() {
		t.Fatalf("Permit: %v, want Wait", st)
	}
	if wp := fw.GetWaitingPod(allowed.UID); wp == nil || !slices.Equal(sorted(wp.GetPendingPlugins()), []string{"DeviceShare", "Quota"}) {
		t.Fatalf("waiting pod %v, want one pending on DeviceShare and Quota", wp)
	}
	host.decide(&pb.WaitingPodDecision{SchedulerName: profileName, Plugin: "DeviceShare", PodUid: string(allowed.UID), Allow: true})
	host.decide(&pb.WaitingPodDecision{SchedulerName: profileName, Plugin: "Quota", PodUid: string(allowed.UID), Allow: true})
	if st := fw.WaitOnPermit(ctx, allowed); !st.IsSuccess() {
		t.Fatalf("WaitOnPermit after both plugins allowed: %v", st)
	}

	rejected := testPod("rejected", map[string]string{"wait-Quota": "10000"})
	if st := runPermit(ctx, fw, framework.NewCycleState(), rejected, "n1"); !st.IsWait() {
		t.Fatalf("Permit: %v, want Wait", st)
	}
	host.decide(&pb.WaitingPodDecision{SchedulerName: profileName, Plugin: "Quota", PodUid: string(rejected.UID), Reason: "quota of team-a used up"})
	if st := fw.WaitOnPermit(ctx, rejected); !st.IsRejected() || !strings.Contains(st.Message(), "quota of team-a used up") || st.Plugin() != "Quota" {
		t.Fatalf("WaitOnPermit after Quota rejected: %v (plugin %q)", st, st.Plugin())
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
