package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"schedplug.dev/integration/shim"
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
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("nativeProfiles = %+v, want %+v", got, want)
	}
	if names := uniqueNames(got); !reflect.DeepEqual(names, []string{"HwEncrypt", "NetworkLatency", "DedicatedNodes"}) {
		t.Fatalf("uniqueNames = %v", names)
	}
}
