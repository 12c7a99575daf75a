package shim

import (
	"context"
	"slices"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// kube-scheduler's own framework, with the shim plugins under multiPoint,
// registers Permit, PreBind and PreEnqueue only for the native plugin that
// has those hooks; both are Reserve plugins.
func TestFrameworkRegistersTheHooksOfEachNativePlugin(t *testing.T) {
	schedmetrics.Register() // the framework's own, which kube-scheduler registers at start
	infos := []*pb.PluginInfo{hookedPlugin("DeviceShare"), filterScorePlugin("HwEncrypt")}
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
	defer cancel()
	fw, err := frameworkruntime.NewFramework(ctx, registry, profile)
	if err != nil {
		t.Fatal(err)
	}
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
