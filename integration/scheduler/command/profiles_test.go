package command

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"schedplug.dev/integration/scheduler/shim"
)

func TestConfigFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", "/a.yaml", "-v=4"}, "/a.yaml"},
		{[]string{"--v=2", "--config=/b.yaml"}, "/b.yaml"},
		{[]string{"-config", "/c.yaml"}, "/c.yaml"},
		{[]string{"--kubeconfig", "/k"}, ""},
		{[]string{"--", "--config", "/x"}, ""},
	} {
		if got := configFlag(c.args); got != c.want {
			t.Errorf("configFlag(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestNativeProfilesFromConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	err := os.WriteFile(file, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: HwEncrypt
      - name: NetworkLatency
        weight: 3
    filter:
      enabled:
      - name: DedicatedNodes
      - name: NodeAffinity
  pluginConfig:
  - name: HwEncrypt
    args:
      schedplug: {failurePolicy: Ignore}
- schedulerName: plain
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := options.LoadConfigFromFile(klog.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	got := nativeProfiles(cfg, inTreeNames())
	want := []shim.Profile{
		{SchedulerName: "default-scheduler", Plugins: []string{"HwEncrypt", "NetworkLatency", "DedicatedNodes"}},
		{SchedulerName: "plain"},
	}
	if len(got) != len(want) {
		t.Fatalf("nativeProfiles = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].SchedulerName != want[i].SchedulerName || !reflect.DeepEqual(got[i].Plugins, want[i].Plugins) {
			t.Fatalf("nativeProfiles[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	// What kube-scheduler read for each native plugin, for the host's
	// config-skew check: the weight (multiPoint without one: 1; enabled
	// only at filter: 0) and the args as decoded.
	configs := got[0].Configs
	if len(configs) != 3 || len(got[1].Configs) != 0 {
		t.Fatalf("Configs = %+v / %+v, want 3 / none", configs, got[1].Configs)
	}
	for i, w := range []struct {
		name   string
		weight int32
		args   string
	}{{"HwEncrypt", 1, `{"schedplug":{"failurePolicy":"Ignore"}}`}, {"NetworkLatency", 3, ""}, {"DedicatedNodes", 0, ""}} {
		c := configs[i]
		args := ""
		if u, ok := c.Args.(*runtime.Unknown); ok {
			args = string(u.Raw)
		} else if c.Args != nil {
			t.Fatalf("Configs[%d].Args is a %T, want *runtime.Unknown", i, c.Args)
		}
		if c.Name != w.name || c.Weight != w.weight || args != w.args {
			t.Errorf("Configs[%d] = {%s %d %s}, want {%s %d %s}", i, c.Name, c.Weight, args, w.name, w.weight, w.args)
		}
	}
	if names := uniqueNames(got); !reflect.DeepEqual(names, []string{"HwEncrypt", "NetworkLatency", "DedicatedNodes"}) {
		t.Fatalf("uniqueNames = %v", names)
	}
}

// Every extension point of this minor's configuration counts, multiPoint
// first, including those a minor adds (1.38's placementFeasible).
func TestNativeProfilesReadEveryExtensionPoint(t *testing.T) {
	var pl config.Plugins
	v := reflect.ValueOf(&pl).Elem()
	want := []string{"MultiPoint"}
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		set, ok := v.Field(i).Addr().Interface().(*config.PluginSet)
		if !ok {
			continue
		}
		set.Enabled = []config.Plugin{{Name: name}, {Name: "NodeAffinity"}}
		if name != "MultiPoint" {
			want = append(want, name)
		}
	}
	cfg := &config.KubeSchedulerConfiguration{Profiles: []config.KubeSchedulerProfile{{SchedulerName: "s", Plugins: &pl}}}
	got := nativeProfiles(cfg, inTreeNames())
	if len(got) != 1 || !reflect.DeepEqual(got[0].Plugins, want) {
		t.Fatalf("native plugins %v, want %v", got, want)
	}
}
