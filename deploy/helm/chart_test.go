// Package helm holds the test of the Helm chart in schedplug/: linted and
// rendered with Helm's own Go library, the rendered objects of the default
// values and of every variant in schedplug/ci/ applied with a server-side
// dry run to a real kube-apiserver, bad values refused by values.schema.json.
package helm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "schedplug"
	namespace = "kube-system"
)

// variants are the default values and every documented variant.
func variants(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{"default": {}}
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no variants in %s/ci (%v)", chartDir, err)
	}
	for _, f := range files {
		vals, err := common.ReadValuesFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), "-values.yaml")] = vals
	}
	return out
}

// render renders the chart as `helm template` does for a cluster of the
// default Kubernetes minor and joins its objects into one YAML stream, in
// file order (NOTES.txt and empty files left out).
func render(ch *chart.Chart, vals map[string]any) (string, error) {
	return renderFor(ch, vals, defaultKubeVersion())
}

// renderFor is render for a cluster of kube (v1.36.3).
func renderFor(ch *chart.Chart, vals map[string]any, kube *common.KubeVersion) (string, error) {
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = *kube
	top, err := util.ToRenderValues(ch, vals, common.ReleaseOptions{Name: "schedplug", Namespace: namespace, IsInstall: true}, caps)
	if err != nil {
		return "", err
	}
	rendered, err := engine.Render(ch, top)
	if err != nil {
		return "", err
	}
	var keys []string
	for k := range rendered {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var all strings.Builder
	for _, k := range keys {
		if !strings.HasSuffix(k, ".txt") && strings.TrimSpace(rendered[k]) != "" {
			all.WriteString("---\n# Source: " + k + "\n" + rendered[k] + "\n")
		}
	}
	return all.String(), nil
}

func TestChartLintRenderDryRun(t *testing.T) {
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	outDir := t.TempDir()
	var files []string
	for name, vals := range variants(t) {
		l := lint.RunAll(chartDir, vals, namespace, lint.WithKubeVersion(defaultKubeVersion()))
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint (%s values): %s", name, m.Error())
			}
		}
		all, err := render(ch, vals)
		if err != nil {
			t.Fatalf("rendering with the %s values: %v", name, err)
		}
		file := filepath.Join(outDir, name+".yaml")
		if err := os.WriteFile(file, []byte(all), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
		checkRendered(t, name, vals, all)
	}
	sort.Strings(files)

	cmd := exec.Command(dryRunBinary(t), append([]string{"--log", filepath.Join(outDir, "apiserver.log")}, files...)...)
	out, err := cmd.CombinedOutput()
	t.Logf("server-side dry run of the rendered chart:\n%s", out)
	if err != nil {
		t.Errorf("the apiserver refused rendered objects: %v", err)
	}
	for _, f := range files {
		if !strings.Contains(string(out), filepath.Base(f)+": Deployment "+namespace+"/") {
			t.Errorf("the dry run did not report the Deployment of %s", filepath.Base(f))
		}
	}
}

// dryRunBinary is schedplug-dryrun (integration/testbed/cmd), which applies
// YAML files to a kube-apiserver it starts, with a server-side dry run.
func dryRunBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("SCHEDPLUG_DRYRUN_BIN")
	if bin == "" {
		bin = "../../build/go/schedplug-dryrun"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("schedplug-dryrun not built (%v): cd integration && go build -o ../build/go/schedplug-dryrun ./testbed/cmd/schedplug-dryrun, or set SCHEDPLUG_DRYRUN_BIN", err)
	}
	return bin
}

// checkRendered checks what the values promise shows in the objects.
func checkRendered(t *testing.T, name string, vals map[string]any, text string) {
	t.Helper()
	var deploy map[string]any
	for _, doc := range strings.Split(text, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%s values: rendered YAML does not parse: %v\n%s", name, err, doc)
		}
		if obj["kind"] == "Deployment" {
			deploy = obj
		}
	}
	if deploy == nil {
		t.Fatalf("%s values: no Deployment rendered", name)
	}
	checkAPIToken(t, name, deploy)
	spec := deploy["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	sidecar := spec["initContainers"].([]any)[0].(map[string]any)
	if sidecar["restartPolicy"] != "Always" || sidecar["livenessProbe"] == nil || sidecar["readinessProbe"] == nil {
		t.Errorf("%s values: the host is not a native sidecar with probes: %v", name, sidecar)
	}
	var plugins map[string]any
	for _, v := range spec["volumes"].([]any) {
		if v.(map[string]any)["name"] == "plugins" {
			plugins = v.(map[string]any)
		}
	}
	source := "configMap"
	if p, ok := vals["plugins"].(map[string]any); ok && p["source"] != nil {
		source = p["source"].(string)
	}
	if plugins[source] == nil {
		t.Errorf("%s values: plugins.source %s, but the plugins volume is %v", name, source, plugins)
	}
	checkNetwork(t, name, vals, spec)
	schedulerName := "schedplug-scheduler"
	if s, ok := vals["schedulerName"].(string); ok {
		schedulerName = s
	}
	if !strings.Contains(text, "- schedulerName: "+schedulerName+"\n") {
		t.Errorf("%s values: the scheduler configuration has no profile %s", name, schedulerName)
	}
}

// checkNetwork: hostNetwork puts the pod in the node's network namespace
// with cluster DNS still first, and kube-scheduler serves and is probed on
// scheduler.securePort, which a control-plane node's own kube-scheduler
// may hold at its default.
func checkNetwork(t *testing.T, name string, vals map[string]any, spec map[string]any) {
	t.Helper()
	wantHost, _ := vals["hostNetwork"].(bool)
	if got, _ := spec["hostNetwork"].(bool); got != wantHost {
		t.Errorf("%s values: hostNetwork %v renders hostNetwork %v", name, wantHost, got)
	}
	if wantHost && spec["dnsPolicy"] != "ClusterFirstWithHostNet" {
		t.Errorf("%s values: a host-network pod has dnsPolicy %v; without ClusterFirstWithHostNet kube-scheduler resolves no cluster name", name, spec["dnsPolicy"])
	}
	port := 10259.0
	if s, ok := vals["scheduler"].(map[string]any); ok {
		if p, ok := s["securePort"].(float64); ok {
			port = p
		}
	}
	sched := spec["containers"].([]any)[0].(map[string]any)
	if !slices.Contains(sched["command"].([]any), any(fmt.Sprintf("--secure-port=%d", int(port)))) {
		t.Errorf("%s values: kube-scheduler is not started with --secure-port=%d: %v", name, int(port), sched["command"])
	}
	declared := sched["ports"].([]any)[0].(map[string]any)
	if declared["name"] != "https" || declared["containerPort"] != port {
		t.Errorf("%s values: kube-scheduler's probes go to port %v, not scheduler.securePort %d", name, declared, int(port))
	}
}

// checkAPIToken: kube-scheduler alone gets the service account's API token,
// where client-go's in-cluster configuration reads it. The host runs
// plugin code, which must not hold the scheduler's rights.
func checkAPIToken(t *testing.T, name string, deploy map[string]any) {
	t.Helper()
	text, err := yaml.Marshal(deploy)
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(text, &d); err != nil {
		t.Fatalf("%s values: the Deployment: %v", name, err)
	}
	spec := d.Spec.Template.Spec
	if got := apiTokenContainers(spec); !slices.Equal(got, []string{"kube-scheduler"}) {
		t.Errorf("%s values: containers %v get an API token (the pod does not set automountServiceAccountToken: false, or they mount one); only kube-scheduler may, so that plugin code in the host cannot act as the scheduler", name, got)
	}
	for _, c := range spec.Containers {
		if c.Name == "kube-scheduler" && apiTokenVolume(spec) == nil && !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == serviceAccountDir }) {
			t.Errorf("%s values: kube-scheduler mounts no API token at %s, where client-go's in-cluster configuration reads it", name, serviceAccountDir)
		}
	}
}

// values.schema.json refuses bad values before anything renders, saying
// which value is wrong.
func TestChartSchemaRefusesBadValues(t *testing.T) {
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		values string
		want   string
	}{
		{"plugins:\n  source: tarball\n", "plugins/source"},
		{"replicas: 0\n", "replicas"},
		{"schedulerName: Schedplug_Scheduler\n", "schedulerName"},
		{"images:\n  host:\n    digest: latest\n", "digest"},
		{"profile:\n  plugins:\n    - name: HwEncrypt\n      weight: 1000\n", "weight"},
		{"hostt: {}\n", "hostt"},
		{"host:\n  metricsAddress: localhost\n", "metricsAddress"},
		{"scheduler:\n  securePort: 0\n", "securePort"},
		{"hostNetwork: \"yes\"\n", "hostNetwork"},
	} {
		vals, err := common.ReadValues([]byte(c.values))
		if err != nil {
			t.Fatal(err)
		}
		_, err = render(ch, vals)
		if err == nil {
			t.Errorf("values %q rendered; the schema should refuse them", c.values)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("values %q refused without naming %s: %v", c.values, c.want, err)
		}
		t.Logf("%q refused: %v", c.values, err)
	}
}
