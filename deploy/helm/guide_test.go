// TestDeployGuide: docs/deploy.md's code blocks, parsed and carried out by
// marker. One file: the guide parser and what each marker does are one
// interpreter over the same guide state.

package helm

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"
)

// guideFile is the admin's guide this test follows.
const guideFile = "docs/deploy.md"

// guideBlock is one fenced code block of the guide with its marker:
//
//	```sh setup     what the test command has already done (checked, not run)
//	```sh step      run verbatim by bash, in a copy of the checkout's layout
//	```sh cluster   commands against a cluster: each one carried out as far
//	                as a machine without a cluster can (see clusterCommand)
//	```yaml apply   an object the reader applies: server-side dry run
//
// Every sh block needs a marker, so no command of the guide goes untested.
type guideBlock struct {
	line int // of the opening fence, from 1
	lang string
	kind string
	text string
}

var guideFence = regexp.MustCompile("^```([A-Za-z0-9_+-]*)[ \t]*(.*)$")

func parseGuide(markdown string) ([]guideBlock, error) {
	var blocks []guideBlock
	var cur *guideBlock
	var body []string
	sc := bufio.NewScanner(strings.NewReader(markdown))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur != nil {
			if strings.TrimSpace(line) == "```" {
				cur.text = strings.Join(body, "\n") + "\n"
				blocks = append(blocks, *cur)
				cur, body = nil, nil
			} else {
				body = append(body, line)
			}
			continue
		}
		m := guideFence.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		b := guideBlock{line: n, lang: m[1], kind: strings.TrimSpace(m[2])}
		switch {
		case b.lang == "sh" && (b.kind == "setup" || b.kind == "step" || b.kind == "cluster"):
		case b.lang == "yaml" && (b.kind == "apply" || b.kind == ""):
		case b.lang == "sh":
			return nil, fmt.Errorf("line %d: a sh block needs the marker setup, step or cluster (```sh step), not %q", n, b.kind)
		case b.kind != "":
			return nil, fmt.Errorf("line %d: unknown marker %q after ```%s", n, b.kind, b.lang)
		}
		cur = &b
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: the code block is never closed", cur.line)
	}
	return blocks, sc.Err()
}

// commandLines splits a sh block into commands: comments dropped, one
// command per line (the guide uses no continuations or quotes, so the
// words are what strings.Fields gives).
func commandLines(b guideBlock) ([]guideCommand, error) {
	var out []guideCommand
	for i, line := range strings.Split(strings.TrimRight(b.text, "\n"), "\n") {
		if j := strings.Index(line, " #"); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, `'"\`) {
			return nil, fmt.Errorf("%s:%d: the guide test splits commands into words without a shell; write %q without quotes or backslashes", guideFile, b.line+1+i, line)
		}
		out = append(out, guideCommand{line: b.line + 1 + i, text: line, words: strings.Fields(line)})
	}
	return out, nil
}

type guideCommand struct {
	line  int
	text  string
	words []string
}

// release is what a helm command did, as far as the test tracks it.
type release struct {
	namespace string
	revisions int
	rendered  string // the last render's objects
}

// guide is the state of a reader following the guide in dir, a directory
// laid out like the checkout (its entries are links to the repository's,
// build/ is its own with build/plugins.d linked to the plugins the test
// command built), so the guide's relative paths work and what they write
// stays out of the repository.
type guide struct {
	t          *testing.T
	repo, dir  string
	env        []string
	releases   map[string]*release
	configMaps map[string]string // namespace/name -> the YAML file written
	dryRun     []string          // files for the final server-side dry run
	cluster    []string          // what only a real cluster can show
	cli        string            // schedplug, on the reader's PATH
}

func newGuide(t *testing.T, repo string) *guide {
	g := &guide{t: t, repo: repo, dir: t.TempDir(), releases: map[string]*release{}, configMaps: map[string]string{}}
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "build" {
			if err := os.Symlink(filepath.Join(repo, e.Name()), filepath.Join(g.dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	plugins := os.Getenv("SCHEDPLUG_PLUGIN_DIR")
	if plugins == "" {
		plugins = filepath.Join(repo, "build", "plugins.d")
	}
	cli := os.Getenv("SCHEDPLUG_CLI_BIN")
	if cli == "" {
		cli = filepath.Join(repo, "build", "tools", "schedplug", "schedplug")
	}
	for _, f := range []string{plugins, cli} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v: build the tree first (bash tools/dev/test.sh), or set SCHEDPLUG_PLUGIN_DIR and SCHEDPLUG_CLI_BIN", err)
		}
	}
	bin := filepath.Join(g.dir, ".guide-bin")
	for _, d := range []string{filepath.Join(g.dir, "build"), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(plugins, filepath.Join(g.dir, "build", "plugins.d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cli, filepath.Join(bin, "schedplug")); err != nil {
		t.Fatal(err)
	}
	g.env, g.cli = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH")), cli
	// What deploy/build-images.sh takes from build/ by default: this build/
	// has only plugins.d, so the others are named.
	for _, v := range [][2]string{
		{"SCHEDPLUG_HOST_BIN", "build/host/schedplug-host"},
		{"SCHEDPLUG_SCHEDULER_BIN", "build/go/kube-scheduler"},
		{"SCHEDPLUG_CLI_BIN", "build/tools/schedplug/schedplug"},
	} {
		if os.Getenv(v[0]) == "" {
			g.env = append(g.env, v[0]+"="+filepath.Join(repo, v[1]))
		}
	}
	return g
}

// setup: the build machine's commands are the ones the README's quick start
// runs; the test command that runs this test has done them.
func (g *guide) setup(b guideBlock) {
	cmds, err := commandLines(b)
	if err != nil {
		g.t.Fatal(err)
	}
	for _, c := range cmds {
		if c.text != "bash tools/dev/install-deps.sh" && c.text != "bash tools/dev/test.sh" {
			g.t.Errorf("%s:%d: %q in a setup block; setup blocks hold only what the test command has done (install-deps, test.sh): move it to a step block", guideFile, c.line, c.text)
		}
	}
}

func (g *guide) step(b guideBlock) {
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", b.text)
	cmd.Dir, cmd.Env = g.dir, g.env
	out, err := cmd.CombinedOutput()
	g.t.Logf("%s:%d:\n%s%s", guideFile, b.line, b.text, out)
	if err != nil {
		g.t.Fatalf("%s:%d: the step failed: %v\n%s", guideFile, b.line, err, out)
	}
}

// flags takes the -x VALUE options out of words; positional words remain.
func flags(words []string, withValue ...string) (map[string][]string, []string) {
	opts, rest := map[string][]string{}, []string(nil)
	for i := 0; i < len(words); i++ {
		w := words[i]
		if k, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
			opts[k] = append(opts[k], v)
			continue
		}
		if slices.Contains(withValue, w) && i+1 < len(words) {
			opts[w] = append(opts[w], words[i+1])
			i++
		} else if strings.HasPrefix(w, "-") {
			opts[w] = append(opts[w], "")
		} else {
			rest = append(rest, w)
		}
	}
	return opts, rest
}

func (g *guide) fail(c guideCommand, format string, args ...any) {
	g.t.Errorf("%s:%d: %s: %s", guideFile, c.line, c.text, fmt.Sprintf(format, args...))
}

// clusterCommand carries out one command meant for a real cluster as far
// as this machine allows, and notes what only a cluster shows.
func (g *guide) clusterCommand(c guideCommand) {
	w := c.words
	switch {
	case len(w) >= 2 && (w[0] == "docker" || w[0] == "podman") && w[1] == "load",
		len(w) >= 6 && w[0] == "ctr" && strings.Join(w[3:5], " ") == "image import":
		opts, rest := flags(w, "-i", "-n")
		archive := rest[len(rest)-1]
		if w[0] != "ctr" {
			archive = first(opts["-i"])
		}
		g.checkOCIArchive(c, archive)
		g.cluster = append(g.cluster, fmt.Sprintf("%s (line %d): a container runtime loads %s", w[0], c.line, archive))
	case len(w) >= 3 && w[0] == "kubectl" && w[1] == "create" && w[2] == "configmap":
		g.createConfigMap(c)
	case len(w) >= 2 && w[0] == "kubectl" && w[1] == "apply":
		g.kubectlApply(c)
	case len(w) >= 2 && w[0] == "helm" && (w[1] == "install" || w[1] == "upgrade"):
		g.helmInstall(c)
	case len(w) >= 2 && w[0] == "helm" && (w[1] == "rollback" || w[1] == "uninstall"):
		opts, rest := flags(w[2:], "-n")
		r := g.release(c, rest, opts)
		if r == nil {
			return
		}
		if w[1] == "rollback" {
			if r.revisions < 2 {
				g.fail(c, "the release has %d revision(s): nothing to roll back to (the guide upgrades it first)", r.revisions)
			}
			r.revisions++
		} else {
			delete(g.releases, rest[0])
		}
		g.cluster = append(g.cluster, fmt.Sprintf("helm %s (line %d)", w[1], c.line))
	case len(w) >= 3 && w[0] == "kubectl" && w[1] == "rollout" && w[2] == "restart":
		opts, rest := flags(w[3:], "-n")
		ns := first(opts["-n"])
		kind, name, _ := strings.Cut(first(rest), "/")
		found := false
		for _, r := range g.releases {
			found = found || (r.namespace == ns && hasObject(r.rendered, "Deployment", ns, name))
		}
		if kind != "deployment" || !found {
			g.fail(c, "no installed release has a Deployment %s/%s", ns, name)
		}
		g.cluster = append(g.cluster, fmt.Sprintf("kubectl rollout restart (line %d): the scheduler restarts on the new plugins", c.line))
	case len(w) >= 3 && w[0] == "kubectl" && w[1] == "delete" && w[2] == "configmap":
		opts, rest := flags(w[3:], "-n")
		key := first(opts["-n"]) + "/" + first(rest)
		if g.configMaps[key] == "" {
			g.fail(c, "deletes ConfigMap %s, which the guide never created", key)
		}
		delete(g.configMaps, key)
		g.cluster = append(g.cluster, fmt.Sprintf("kubectl delete configmap (line %d)", c.line))
	default:
		g.fail(c, "the guide test does not know this command; teach clusterCommand in deploy/helm/guide_test.go what it does")
	}
}

// lastApplied is the annotation in which a client-side `kubectl apply`
// keeps the object it applied.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// kubectlApply sends the file's objects to the dry run as kubectl sends
// them: as they are with --server-side; otherwise (client-side apply) each
// with the last-applied annotation kubectl adds, the object itself as JSON,
// which the API server counts against its 256 KiB limit on annotations.
func (g *guide) kubectlApply(c guideCommand) {
	opts, rest := flags(c.words[2:], "-f")
	for k := range opts {
		if k != "-f" && k != "--server-side" {
			g.fail(c, "the guide test does not know the option %s of kubectl apply", k)
		}
	}
	file := first(opts["-f"])
	if len(rest) > 0 || file == "" {
		g.fail(c, "the test knows `kubectl apply [--server-side] -f FILE`")
		return
	}
	data, err := os.ReadFile(filepath.Join(g.dir, file))
	if err != nil {
		g.fail(c, "%s does not exist: no command before it wrote it", file)
		return
	}
	if _, ok := opts["--server-side"]; ok {
		g.dryRun = append(g.dryRun, filepath.Join(g.dir, file))
		return
	}
	var docs []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			g.fail(c, "%s does not parse: %v", file, err)
			return
		}
		if obj == nil {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			obj["metadata"] = meta
		}
		annotations, _ := meta["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
		}
		delete(annotations, lastApplied)
		meta["annotations"] = annotations
		if len(annotations) == 0 {
			delete(meta, "annotations")
		}
		original, err := json.Marshal(obj)
		if err != nil {
			g.t.Fatal(err)
		}
		annotations[lastApplied] = string(original) + "\n"
		meta["annotations"] = annotations
		out, err := yaml.Marshal(obj)
		if err != nil {
			g.t.Fatal(err)
		}
		docs = append(docs, string(out))
	}
	applied := filepath.Join(g.t.TempDir(), fmt.Sprintf("client-side-apply-line%d.yaml", c.line))
	if err := os.WriteFile(applied, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.dryRun = append(g.dryRun, applied)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func (g *guide) release(c guideCommand, rest []string, opts map[string][]string) *release {
	if len(rest) == 0 {
		g.fail(c, "names no release")
		return nil
	}
	r := g.releases[rest[0]]
	if r == nil || r.namespace != first(opts["-n"]) {
		g.fail(c, "release %s is not installed in namespace %q", rest[0], first(opts["-n"]))
		return nil
	}
	return r
}

func (g *guide) checkOCIArchive(c guideCommand, archive string) {
	out, err := exec.Command("tar", "-tf", filepath.Join(g.dir, archive)).CombinedOutput()
	if err != nil {
		g.fail(c, "%s is not a tar archive a step built: %v\n%s", archive, err, out)
		return
	}
	// The OCI layout (podman, containerd) and the docker-archive manifest
	// (Docker's classic image store).
	for _, want := range []string{"oci-layout", "index.json", "manifest.json"} {
		if !regexp.MustCompile(`(?m)^(\./)?` + regexp.QuoteMeta(want) + `$`).Match(out) {
			g.fail(c, "%s has no %s, which %s needs to load it", archive, want, c.words[0])
		}
	}
}

// createConfigMap does what `kubectl create configmap NAME --from-file=DIR/
// --dry-run=client -o yaml > FILE` does: a key per regular file of DIR,
// UTF-8 text in data and anything else in binaryData. The keys are then
// projected as a ConfigMap volume would (a file per key) into a plugin
// directory, which must pass its own SHA256SUMS.
func (g *guide) createConfigMap(c guideCommand) {
	words := c.words[3:]
	var file string
	for i, w := range words {
		if w == ">" && i+1 < len(words) {
			file, words = words[i+1], words[:i]
			break
		}
	}
	opts, rest := flags(words, "-n", "-o")
	dir := first(opts["--from-file"])
	if len(rest) != 1 || dir == "" || file == "" || first(opts["--dry-run"]) != "client" || first(opts["-o"]) != "yaml" {
		g.fail(c, "the test knows `kubectl create configmap NAME -n NS --from-file=DIR/ --dry-run=client -o yaml > FILE`")
		return
	}
	entries, err := os.ReadDir(filepath.Join(g.dir, dir))
	if err != nil {
		g.fail(c, "%v", err)
		return
	}
	data, binary := map[string]string{}, map[string][]byte{}
	projected := filepath.Join(g.t.TempDir(), "plugins.d")
	if err := os.Mkdir(projected, 0o755); err != nil {
		g.t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(g.dir, dir, e.Name()))
		if err != nil {
			g.t.Fatal(err)
		}
		if utf8.Valid(b) {
			data[e.Name()] = string(b)
		} else {
			binary[e.Name()] = b
		}
		if err := os.WriteFile(filepath.Join(projected, e.Name()), b, 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": rest[0], "namespace": first(opts["-n"])}, "data": data, "binaryData": binary}
	text, err := yaml.Marshal(cm)
	if err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.dir, file), text, 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.configMaps[first(opts["-n"])+"/"+rest[0]] = projected
	g.checkSums(c, projected)
}

// checkSums is the host's --plugin-sha256 rule on a projected directory:
// every .so listed with its digest, every listed file present.
func (g *guide) checkSums(c guideCommand, dir string) {
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		g.fail(c, "the ConfigMap has no SHA256SUMS key, which the chart's default plugins.enforceChecksums needs: %v", err)
		return
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			g.fail(c, "SHA256SUMS line %q is not `DIGEST  FILE`", line)
			continue
		}
		name := strings.TrimPrefix(f[1], "*")
		listed[name] = true
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			g.fail(c, "SHA256SUMS lists %s, which the ConfigMap lacks", name)
			continue
		}
		if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != f[0] {
			g.fail(c, "%s in the ConfigMap does not match its SHA256SUMS digest", name)
		}
	}
	sos, _ := filepath.Glob(filepath.Join(dir, "*.so"))
	if len(sos) == 0 {
		g.fail(c, "the ConfigMap holds no plugin .so")
	}
	for _, so := range sos {
		if !listed[filepath.Base(so)] {
			g.fail(c, "%s is in the ConfigMap but not in its SHA256SUMS", filepath.Base(so))
		}
	}
}

// helmInstall renders the chart with the command's values (helm install
// and upgrade render the same way), keeps the objects for the dry run, and
// checks the rendered scheduler configuration with `schedplug check`
// against the plugins the release mounts: the ConfigMap the guide made,
// else the bundle the test command built.
func (g *guide) helmInstall(c guideCommand) {
	opts, rest := flags(c.words[2:], "-n", "-f")
	if len(rest) != 2 {
		g.fail(c, "want helm %s RELEASE CHART", c.words[1])
		return
	}
	name, chartPath, ns := rest[0], rest[1], first(opts["-n"])
	r := g.releases[name]
	switch {
	case c.words[1] == "install" && r != nil:
		g.fail(c, "release %s is already installed", name)
		return
	case c.words[1] == "upgrade" && (r == nil || r.namespace != ns):
		g.fail(c, "release %s is not installed in %s", name, ns)
		return
	}
	ch, err := loader.LoadDir(filepath.Join(g.dir, chartPath))
	if err != nil {
		g.fail(c, "loading the chart: %v", err)
		return
	}
	vals := map[string]any{}
	for _, f := range opts["-f"] {
		v, err := common.ReadValuesFile(filepath.Join(g.dir, f))
		if err != nil {
			g.fail(c, "%v", err)
			return
		}
		for k, x := range v {
			vals[k] = x
		}
	}
	if len(opts["-f"]) > 1 {
		g.fail(c, "the test merges one -f file, not %d", len(opts["-f"]))
	}
	all, err := render(ch, vals)
	if err != nil {
		g.fail(c, "rendering: %v", err)
		return
	}
	file := filepath.Join(g.t.TempDir(), fmt.Sprintf("%s-line%d.yaml", name, c.line))
	if err := os.WriteFile(file, []byte(all), 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.dryRun = append(g.dryRun, file)
	if r == nil {
		r = &release{namespace: ns}
		g.releases[name] = r
	}
	r.revisions++
	r.rendered = all

	config := schedulerConfig(all)
	if config == "" {
		g.fail(c, "the rendered chart has no ConfigMap with scheduler-config.yaml")
		return
	}
	plugins := filepath.Join(g.dir, "build", "plugins.d")
	if p := g.configMaps[ns+"/schedplug-plugins"]; p != "" {
		plugins = p
	}
	cfgFile := filepath.Join(g.t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(cfgFile, []byte(config), 0o644); err != nil {
		g.t.Fatal(err)
	}
	if out, err := exec.Command(g.cli, "check", "--config", cfgFile, "--plugins", plugins).CombinedOutput(); err != nil {
		g.fail(c, "schedplug check of the rendered profile against %s: %v\n%s", plugins, err, out)
	}
	g.cluster = append(g.cluster, fmt.Sprintf("helm %s (line %d): the pods start, the host loads the plugins, kube-scheduler takes the lease", c.words[1], c.line))
}

// schedulerConfig is the scheduler-config.yaml key of the rendered objects.
func schedulerConfig(objects string) string {
	for _, doc := range strings.Split(objects, "\n---\n") {
		var obj struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
		}
		if yaml.Unmarshal([]byte(doc), &obj) == nil && obj.Kind == "ConfigMap" && obj.Data["scheduler-config.yaml"] != "" {
			return obj.Data["scheduler-config.yaml"]
		}
	}
	return ""
}

func hasObject(objects, kind, ns, name string) bool {
	for _, doc := range strings.Split(objects, "\n---\n") {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if yaml.Unmarshal([]byte(doc), &obj) == nil && obj.Kind == kind && obj.Metadata.Name == name && obj.Metadata.Namespace == ns {
			return true
		}
	}
	return false
}

// apply: the object goes to the dry run; a workload must name the
// scheduler an installed release runs.
func (g *guide) apply(b guideBlock) {
	var obj struct {
		Spec struct {
			Template struct {
				Spec struct {
					SchedulerName string `json:"schedulerName"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(b.text), &obj); err != nil {
		g.t.Errorf("%s:%d: the YAML does not parse: %v", guideFile, b.line, err)
		return
	}
	if s := obj.Spec.Template.Spec.SchedulerName; s != "" {
		found := false
		for _, r := range g.releases {
			found = found || strings.Contains(schedulerConfig(r.rendered), "schedulerName: "+s+"\n")
		}
		if !found {
			g.t.Errorf("%s:%d: the workload names scheduler %s, which no release installed before it runs", guideFile, b.line, s)
		}
	}
	// kubectl puts an object without a namespace into its context's, which
	// is "default" unless the reader chose another.
	var generic map[string]any
	if err := yaml.Unmarshal([]byte(b.text), &generic); err != nil {
		g.t.Fatal(err)
	}
	if meta, ok := generic["metadata"].(map[string]any); ok && meta["namespace"] == nil {
		meta["namespace"] = "default"
	}
	text, err := yaml.Marshal(generic)
	if err != nil {
		g.t.Fatal(err)
	}
	file := filepath.Join(g.t.TempDir(), fmt.Sprintf("apply-line%d.yaml", b.line))
	if err := os.WriteFile(file, text, 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.dryRun = append(g.dryRun, file)
}

// readGuide returns the checkout's root and the guide's blocks.
func readGuide(t *testing.T) (string, []guideBlock) {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(repo, guideFile))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseGuide(string(text))
	if err != nil {
		t.Fatalf("%s: %v", guideFile, err)
	}
	return repo, blocks
}

// TestDeployGuide follows docs/deploy.md on a machine without a cluster:
// its build steps run verbatim (schedplug bundle, the image builds), and
// its cluster commands are carried out as far as a real kube-apiserver
// without nodes allows: the ConfigMap is made as kubectl makes it and
// checked as the host checks it, each helm install and upgrade is rendered
// and its profile checked against the plugins it mounts, and everything the
// reader applies passes a server-side dry run. It logs what only a real
// cluster can show.
func TestDeployGuide(t *testing.T) {
	repo, blocks := readGuide(t)
	g := newGuide(t, repo)
	kinds := map[string]int{}
	for _, b := range blocks {
		kinds[b.kind]++
		switch b.kind {
		case "setup":
			g.setup(b)
		case "step":
			g.step(b)
		case "cluster":
			cmds, err := commandLines(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cmds {
				g.clusterCommand(c)
			}
		case "apply":
			g.apply(b)
		}
	}
	for _, k := range []string{"setup", "step", "cluster", "apply"} {
		if kinds[k] == 0 {
			t.Errorf("%s has no ```%s block: the test follows nothing of that kind", guideFile, k)
		}
	}
	if t.Failed() {
		return
	}
	out, err := exec.Command(dryRunBinary(t), append([]string{"--log", filepath.Join(t.TempDir(), "apiserver.log")}, g.dryRun...)...).CombinedOutput()
	t.Logf("server-side dry run of what the guide applies:\n%s", out)
	if err != nil {
		t.Errorf("the apiserver refused objects the guide applies: %v", err)
	}
	t.Logf("what only a real cluster shows:\n  %s", strings.Join(g.cluster, "\n  "))
}
