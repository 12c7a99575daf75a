package e2e

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"

	"schedplug.dev/integration/testbed/testenv"
)

// The manifests in config/manifests/ are applied to a real apiserver with a
// server-side dry run (server-side apply, strict field validation), so a
// typo, an unknown field or a missing role fails here, not on an admin's
// cluster. The plugin ConfigMap is filled from the real build, as its
// comment tells admins to do, which also checks the 1 MiB ConfigMap limit.
func TestManifestsApplyWithServerSideDryRun(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pluginDir, err := testenv.PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := testenv.StartControlPlane(t, shared.etcd, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	ctx := context.Background()

	dryRun, err := testenv.NewDryRunner(cp.Config)
	if err != nil {
		t.Fatal(err)
	}

	files, err := filepath.Glob(filepath.Join(root, "config", "manifests", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in config/manifests (%v)", err)
	}
	sort.Strings(files)
	kinds := map[string]bool{}
	for _, file := range files {
		for _, obj := range readObjects(t, file) {
			where := filepath.Base(file) + ": " + obj.GetKind() + " " + obj.GetName()
			kinds[obj.GetKind()] = true
			if obj.GetKind() == "ConfigMap" && obj.GetName() == "schedplug-plugins" {
				fillPlugins(t, obj, pluginDir)
			}
			if obj.GetKind() == "ConfigMap" && obj.GetName() == "schedplug-scheduler-config" {
				checkSchedulerConfigMap(t, obj, filepath.Join(root, "config", "scheduler-config.yaml"))
			}
			if err := dryRun.Apply(ctx, obj); err != nil {
				t.Errorf("%s: %v", where, err)
			} else {
				t.Logf("%s: accepted", where)
			}
		}
	}
	for _, k := range []string{"Deployment", "ConfigMap", "ServiceAccount", "ClusterRoleBinding", "RoleBinding", "Role"} {
		if !kinds[k] {
			t.Errorf("config/manifests has no %s", k)
		}
	}
}

// readObjects decodes every YAML document of file.
func readObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return objs
}

// fillPlugins puts every .so of dir, stripped as the admin instructions
// say, into the ConfigMap's binaryData, as `kubectl create configmap
// --from-file` would. A ConfigMap holds at most 1 MiB.
func fillPlugins(t *testing.T, obj *unstructured.Unstructured, dir string) {
	t.Helper()
	sos, _ := filepath.Glob(filepath.Join(dir, "*.so"))
	stripped := t.TempDir()
	binary := map[string]any{}
	total := 0
	for _, so := range sos {
		data, err := os.ReadFile(so)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(stripped, filepath.Base(so))
		if err := os.WriteFile(out, data, 0o755); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command("strip", "--strip-unneeded", out).CombinedOutput(); err != nil {
			t.Fatalf("strip --strip-unneeded %s: %v\n%s", so, err, msg)
		}
		if data, err = os.ReadFile(out); err != nil {
			t.Fatal(err)
		}
		total += len(data)
		binary[filepath.Base(so)] = base64.StdEncoding.EncodeToString(data)
	}
	t.Logf("plugin ConfigMap: %d stripped plugins, %d bytes", len(sos), total)
	if total > 1<<20 {
		t.Errorf("the stripped plugins in %s take %d bytes, more than a ConfigMap holds (1 MiB)", dir, total)
	}
	if err := unstructured.SetNestedField(obj.Object, binary, "binaryData"); err != nil {
		t.Fatal(err)
	}
}

// checkSchedulerConfigMap verifies the ConfigMap carries exactly
// config/scheduler-config.yaml, and that kube-scheduler's own loader and
// validation accept that file.
func checkSchedulerConfigMap(t *testing.T, obj *unstructured.Unstructured, file string) {
	t.Helper()
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedString(obj.Object, "data", "scheduler-config.yaml")
	if strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
		t.Errorf("config/manifests/10-scheduler-config.yaml does not carry the same text as %s; regenerate it (see its header)", file)
	}
	cfg, err := options.LoadConfigFromFile(klog.Background(), file)
	if err != nil {
		t.Fatalf("kube-scheduler cannot load %s: %v", file, err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Errorf("kube-scheduler rejects %s: %v", file, err)
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName != "schedplug-scheduler" {
		t.Errorf("%s: want one profile named schedplug-scheduler, so it runs beside the default scheduler", file)
	}
}

// The cluster configuration is also what schedplug-host reads in the
// sidecar: it must load every plugin config/scheduler-config.yaml enables,
// with those args, and start serving.
func TestClusterSchedulerConfigLoadsInHost(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	hostBin, err := testenv.HostBinary()
	if err != nil {
		t.Fatal(err)
	}
	pluginDir, err := testenv.PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "sp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	host := testenv.NewHost(hostBin, pluginDir, filepath.Join(root, "config", "scheduler-config.yaml"), sockDir, filepath.Join(t.TempDir(), "host.log"))
	if err := host.StartAndWait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !host.Stop(10 * time.Second) {
		t.Errorf("schedplug-host did not exit within 10s of SIGTERM")
	}
	log := host.LogTail(50)
	for _, plugin := range []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"} {
		if !strings.Contains(log, "loaded plugin "+plugin) {
			t.Errorf("schedplug-host did not report loading %s; its log:\n%s", plugin, log)
		}
	}
}
