package helm

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"
)

// minorsFile lists the Kubernetes minors kube-scheduler is built and
// tested for (docs/kubernetes-versions.md).
const minorsFile = "../../integration/k8s/minors"

// k8sMinor is one line of minorsFile.
type k8sMinor struct {
	Minor, Version string // 1.36, v1.36.3
	Default        bool
}

func readMinors() ([]k8sMinor, error) {
	f, err := os.Open(minorsFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []k8sMinor
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		out = append(out, k8sMinor{Minor: fields[0], Version: fields[1], Default: len(fields) > 2 && fields[2] == "default"})
	}
	return out, sc.Err()
}

func minors(t *testing.T) []k8sMinor {
	t.Helper()
	m, err := readMinors()
	if err != nil || len(m) == 0 {
		t.Fatalf("reading the supported Kubernetes minors from %s: %v", minorsFile, err)
	}
	return m
}

// defaultKubeVersion is a cluster of the default minor, the one the chart's
// tests render for unless they say otherwise.
func defaultKubeVersion() *common.KubeVersion {
	m, err := readMinors()
	if err != nil {
		panic(err)
	}
	for _, k := range m {
		if k.Default {
			return kubeVersion(k.Version)
		}
	}
	panic(minorsFile + " marks no minor default")
}

func kubeVersion(v string) *common.KubeVersion {
	kv, err := common.ParseKubeVersion(v)
	if err != nil {
		panic(err)
	}
	return kv
}

// schedulerImage is the kube-scheduler container's image in a rendering.
func schedulerImage(t *testing.T, text string) string {
	t.Helper()
	for _, doc := range strings.Split(text, "\n---\n") {
		var obj struct {
			Kind string
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct{ Name, Image string }
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		for _, c := range obj.Spec.Template.Spec.Containers {
			if obj.Kind == "Deployment" && c.Name == "kube-scheduler" {
				return c.Image
			}
		}
	}
	t.Fatal("no kube-scheduler container rendered")
	return ""
}

// imageTag is the tag deploy/build-images.sh gives the kube-scheduler of
// an upstream version.
func imageTag(t *testing.T, upstream string) string {
	t.Helper()
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return upstream + "-schedplug." + ch.Metadata.AppVersion
}

// For a cluster of each supported minor (the release itself and a
// provider's build of it) the chart picks the kube-scheduler built for that
// minor; values.yaml has an image for exactly the supported minors.
func TestChartPicksTheSchedulerOfTheClusterMinor(t *testing.T) {
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	byMinor := ch.Values["images"].(map[string]any)["scheduler"].(map[string]any)["byMinor"].(map[string]any)
	var listed []string
	for _, m := range minors(t) {
		listed = append(listed, m.Minor)
		want := "localhost/schedplug/kube-scheduler:" + imageTag(t, m.Version)
		if byMinor[m.Minor] != imageTag(t, m.Version) {
			t.Errorf("values.yaml images.scheduler.byMinor[%q] = %v, want %s", m.Minor, byMinor[m.Minor], imageTag(t, m.Version))
		}
		for _, cluster := range []string{"v" + m.Minor + ".0", m.Version + "-gke.1245000"} {
			all, err := renderFor(ch, map[string]any{}, kubeVersion(cluster))
			if err != nil {
				t.Errorf("a %s cluster: %v", cluster, err)
				continue
			}
			if got := schedulerImage(t, all); got != want {
				t.Errorf("a %s cluster gets kube-scheduler %s, want %s", cluster, got, want)
			} else {
				t.Logf("a %s cluster: %s", cluster, got)
			}
		}
	}
	var keys []string
	for k := range byMinor {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, listed) {
		t.Errorf("values.yaml images.scheduler.byMinor has %v, %s lists %v", keys, minorsFile, listed)
	}
}

// A cluster of a minor with no kube-scheduler build is refused, with the
// supported minors; a pinned image renders for it (the user's choice).
func TestChartRefusesAnUnsupportedMinor(t *testing.T) {
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	var supported []string
	for _, m := range minors(t) {
		supported = append(supported, m.Minor)
	}
	for _, cluster := range []string{"v1.34.2", "v1.99.0"} {
		_, err := renderFor(ch, map[string]any{}, kubeVersion(cluster))
		minor := regexp.MustCompile(`^v(1\.[0-9]+)`).FindStringSubmatch(cluster)[1]
		if err == nil || !strings.Contains(err.Error(), "no kube-scheduler for Kubernetes "+minor) ||
			!strings.Contains(err.Error(), "the supported minors are "+strings.Join(supported, ", ")) {
			t.Errorf("a %s cluster: %v; want a refusal naming %s and the supported minors %v", cluster, err, minor, supported)
			continue
		}
		t.Logf("a %s cluster: %v", cluster, err)
	}
	pinned := map[string]any{"images": map[string]any{"scheduler": map[string]any{"tag": "v1.34.2-mine"}}}
	all, err := renderFor(ch, pinned, kubeVersion("v1.34.2"))
	if err != nil {
		t.Fatalf("a pinned tag on a 1.34 cluster: %v", err)
	}
	if got := schedulerImage(t, all); got != "localhost/schedplug/kube-scheduler:v1.34.2-mine" {
		t.Errorf("a pinned tag renders kube-scheduler %s", got)
	}
}

// The README's table of supported minors has one row per minor the build
// lists, with its upstream version and image tag.
func TestReadmeTableOfMinors(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (1\\.[0-9]+)[^|]*\\| `(v[^`]+)` \\| `(kube-scheduler:[^`]+)` \\|")
	got := row.FindAllStringSubmatch(string(data), -1)
	ms := minors(t)
	if len(got) != len(ms) {
		t.Fatalf("README.md's table of Kubernetes minors has %d rows, %s lists %d minors", len(got), minorsFile, len(ms))
	}
	for i, m := range ms {
		want := []string{m.Minor, m.Version, "kube-scheduler:" + imageTag(t, m.Version)}
		if !slices.Equal(got[i][1:], want) {
			t.Errorf("README.md's row %d is %q, want %q", i+1, got[i][1:], want)
		}
	}
}

// Each minor builds with the Go module file that pins its version:
// integration/go.mod for the default, integration/k8s/<minor>.mod for the
// others (tools/dev/k8s-modfile.sh writes them), each with its .sum.
func TestMinorsMatchTheGoModuleFiles(t *testing.T) {
	pinned := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)`)
	for _, m := range minors(t) {
		file := "../../integration/k8s/" + m.Minor + ".mod"
		if m.Default {
			file = "../../integration/go.mod"
		} else if _, err := os.Stat(strings.TrimSuffix(file, ".mod") + ".sum"); err != nil {
			t.Errorf("Kubernetes %s has no go.sum beside its module file: bash tools/dev/k8s-modfile.sh %s (%v)", m.Minor, m.Minor, err)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("Kubernetes %s has no module file: bash tools/dev/k8s-modfile.sh %s (%v)", m.Minor, m.Minor, err)
			continue
		}
		got := "nothing"
		if v := pinned.FindSubmatch(data); v != nil {
			got = string(v[1])
		}
		if got != m.Version {
			t.Errorf("%s pins k8s.io/kubernetes %s; %s lists %s for %s", file, got, minorsFile, m.Version, m.Minor)
		}
	}
}
