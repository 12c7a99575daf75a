// TestRealNode: a reader following docs/deploy.md on deploy/realnode's cluster.
// One file: every step is a method of realNode, which carries the cluster, the
// images and the rebuilt plugins from one step to the next.

package helm

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"schedplug.dev/deploy/realnode"
)

// The real-node test's cluster programs, from build/go unless named.
var realNodeBinaries = []struct{ env, rel string }{
	{"SCHEDPLUG_ETCD_BIN", "build/go/etcd"},
	{"SCHEDPLUG_APISERVER_BIN", "build/go/kube-apiserver"},
	{"SCHEDPLUG_CONTROLLER_MANAGER_BIN", "build/go/kube-controller-manager"},
	{"SCHEDPLUG_SCHEDULER_BIN", "build/go/kube-scheduler"},
	{"SCHEDPLUG_KUBELET_BIN", "build/go/kubelet"},
	{"SCHEDPLUG_KUBECTL_BIN", "build/go/kubectl"},
	{"SCHEDPLUG_HELM_BIN", "build/go/helm"},
	{"SCHEDPLUG_CONTAINERD_BIN", "build/go/containerd/containerd"},
}

// realNode is a reader following docs/deploy.md on a real one-node cluster.
type realNode struct {
	*guide
	c       *realnode.Cluster
	plugins string // the plugins the reader builds: a copy, "rebuilt" for bundle-v2
	images  map[string]string
}

// TestRealNode follows docs/deploy.md on a real node: containerd and runc,
// a kubelet, kube-apiserver, kube-controller-manager and etcd started here
// (deploy/realnode), the images deploy/build-images.sh builds loaded with
// ctr, and the guide's kubectl and helm commands run for real. Between
// them it checks what TestDeployGuide cannot: the release becomes Ready,
// the host container holds no API token, the example workload waits with
// HwEncrypt's reason and is placed once its node qualifies, a plugins
// ConfigMap update reaches the host through the kubelet and is reloaded
// without a restart, helm upgrade and rollback take effect, uninstall
// leaves nothing, and the chart takes over as the only scheduler.
func TestRealNode(t *testing.T) {
	repo, blocks := readGuide(t)
	var bins [8]string
	for i, b := range realNodeBinaries {
		bins[i] = buildOutput(t, repo, b.env, b.rel)
	}
	r := &realNode{guide: newGuide(t, repo), images: map[string]string{}}
	r.copyPlugins()
	for _, tool := range []string{bins[5], bins[6], filepath.Join(filepath.Dir(bins[7]), "ctr")} {
		if err := os.Symlink(tool, filepath.Join(r.dir, ".guide-bin", filepath.Base(tool))); err != nil {
			t.Fatal(err)
		}
	}

	work := t.TempDir()
	pause, err := realnode.BuildPauseImage(filepath.Join(repo, "deploy"), work)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c, err := realnode.Start(filepath.Join(work, "cluster"), realnode.Binaries{
		Etcd: bins[0], APIServer: bins[1], ControllerManager: bins[2], Scheduler: bins[3], Kubelet: bins[4], Kubectl: bins[5],
		Containerd: bins[7],
	}, pause, t.Logf)
	t.Cleanup(func() {
		if t.Failed() && c != nil {
			t.Logf("the cluster's logs: %s", c.Dir+"/logs")
		}
		if err := c.Stop(); err != nil {
			t.Errorf("tearing the cluster down: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node Ready %.1f s after start", time.Since(start).Seconds())
	r.c = c
	r.env = append(r.env, c.Env()...)

	for _, b := range blocks {
		switch b.kind {
		case "setup":
			r.setup(b)
		case "step":
			if strings.Contains(b.text, "bundle-v2") {
				r.rebuildPlugin()
			}
			r.step(b)
			if strings.Contains(b.text, "build-images.sh") {
				r.noteImages()
			}
		case "cluster":
			if strings.Contains(b.text, "only-scheduler") {
				// Before the guide replaces the default scheduler.
				r.imageVolume()
			}
			cmds, err := commandLines(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, cmd := range cmds {
				r.run(cmd)
			}
		case "apply":
			r.applyWorkload(b)
		}
		if t.Failed() {
			return
		}
	}
}

// imageVolume: the plugins as an image volume (section 2's other way),
// with ci/image-volume-values.yaml pointed at the bundle image's digest;
// installed, used and uninstalled again.
func (r *realNode) imageVolume() {
	ref, digest := r.imageRef("schedplug-plugins.oci.tar")
	repo := ref[:strings.LastIndex(ref, ":")]
	cmd := guideCommand{text: "helm install schedplug deploy/helm/schedplug -n kube-system -f deploy/helm/schedplug/ci/image-volume-values.yaml --set plugins.image.reference=" + repo + "@" + digest}
	if out, err := r.shell(cmd); err != nil {
		r.t.Fatalf("%v\n%s", err, out)
	}
	r.checkRelease(cmd)
	logs, _ := r.c.Kubectl("logs", r.deployment(), "-n", "kube-system", "-c", "schedplug-host")
	for _, plugin := range []string{"DedicatedNodes", "HwEncrypt", "NetworkLatency"} {
		if !strings.Contains(logs, "loaded plugin "+plugin+" ") {
			r.t.Errorf("with the plugins as an image volume, the host did not load %s; its log:\n%s", plugin, logs)
		}
	}
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"from-image-volume","namespace":"default","annotations":{"myorg.io/require-hw-encrypt":"true"}},` +
		`"spec":{"schedulerName":"schedplug-scheduler","containers":[{"name":"c","image":"` + realnode.PauseImage + `"}]}}`
	file := filepath.Join(r.t.TempDir(), "pod.json")
	if err := os.WriteFile(file, []byte(pod), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.c.Kubectl("apply", "-f", file); err != nil {
		r.t.Fatal(err)
	}
	if !r.eventually(90*time.Second, func() bool {
		out, _ := r.c.Kubectl("get", "pod", "from-image-volume", "-n", "default", "-o", "jsonpath={.spec.nodeName}/{.status.phase}")
		return out == r.c.NodeName+"/Running"
	}) {
		r.t.Errorf("with the plugins as an image volume, a pod was not placed:\n%s\n%s", r.describe("default", ""), r.schedulerLogs())
		return
	}
	r.t.Logf("plugins as an image volume (%s@%s): the host loaded all three and a pod was placed", repo, digest)
	if _, err := r.c.Kubectl("delete", "pod", "from-image-volume", "-n", "default"); err != nil {
		r.t.Error(err)
	}
	cmd = guideCommand{text: "helm uninstall schedplug -n kube-system"}
	if out, err := r.shell(cmd); err != nil {
		r.t.Fatalf("%v\n%s", err, out)
	}
	r.checkUninstalled(cmd)
}

// copyPlugins gives the reader a build/plugins.d of their own, so the test
// can stand in for "after rebuilding the plugin".
func (r *realNode) copyPlugins() {
	link := filepath.Join(r.dir, "build", "plugins.d")
	src, err := os.Readlink(link)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		r.t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", src, link).CombinedOutput(); err != nil {
		r.t.Fatalf("copying the plugins: %v: %s", err, out)
	}
	r.plugins = link
}

// rebuildPlugin changes hw_encrypt.so as a rebuild would (a new SHA-256,
// the same plugin): a note section that names the second version.
func (r *realNode) rebuildPlugin() {
	so := filepath.Join(r.plugins, "hw_encrypt.so")
	note := filepath.Join(r.t.TempDir(), "note")
	if err := os.WriteFile(note, []byte("rebuilt by the real-node test\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if out, err := exec.Command("objcopy", "--add-section", ".note.schedplug-realnode="+note, so).CombinedOutput(); err != nil {
		r.t.Fatalf("rebuilding %s: %v: %s", so, err, out)
	}
}

// noteImages notes the images build-images.sh wrote, by name and digest.
func (r *realNode) noteImages() {
	archives, _ := filepath.Glob(filepath.Join(r.dir, "build", "images", "*.oci.tar"))
	if len(archives) == 0 {
		r.t.Fatal("deploy/build-images.sh wrote no archive into build/images")
	}
	for _, a := range archives {
		r.images[filepath.Base(a)] = a
	}
}

// shell runs one command line of the guide as the reader would.
func (r *realNode) shell(cmd guideCommand) (string, error) {
	sh := exec.Command("bash", "-euo", "pipefail", "-c", cmd.text)
	sh.Dir, sh.Env = r.dir, r.env
	out, err := sh.CombinedOutput()
	where := fmt.Sprintf("%s:%d", guideFile, cmd.line)
	if cmd.line == 0 {
		where = "not in the guide"
	}
	r.t.Logf("%s: $ %s\n%s", where, cmd.text, out)
	return string(out), err
}

// run carries out one cluster command of the guide for real, then checks
// that it took effect.
func (r *realNode) run(cmd guideCommand) {
	w := cmd.words
	switch {
	case w[0] == "docker" || w[0] == "podman":
		r.t.Logf("%s:%d: $ %s: not on this node, whose runtime is containerd (the guide's ctr line loads the same archive)", guideFile, cmd.line, cmd.text)
		return
	case w[0] == "ctr":
		if _, err := r.shell(cmd); err != nil {
			r.fail(cmd, "%v", err)
			return
		}
		// The guide shows the command for one archive; the reader loads
		// each of them so.
		for name, a := range r.images {
			if !strings.Contains(cmd.text, name) {
				if err := r.c.ImportImage(a); err != nil {
					r.fail(cmd, "loading %s the same way: %v", name, err)
				}
			}
		}
		for name := range r.images {
			ref, digest := r.imageRef(name)
			if err := r.c.TagByDigest(ref, digest); err != nil {
				r.fail(cmd, "%v", err)
			}
		}
		out, _ := r.c.Ctr("images", "ls", "-q")
		r.t.Logf("images on the node:\n%s", out)
		return
	case len(w) >= 3 && w[0] == "helm" && w[1] == "install" && strings.Contains(cmd.text, "only-scheduler"):
		r.onlyScheduler(cmd)
		return
	case len(w) >= 2 && w[0] == "helm" && w[1] == "upgrade":
		// The values file pins placeholder digests for a registry; the
		// reader sets the digests of the images they pushed.
		cmd.text += " --set images.scheduler.digest=" + r.digest("kube-scheduler.oci.tar") +
			" --set images.host.digest=" + r.digest("schedplug-host.oci.tar")
	}
	out, err := r.shell(cmd)
	if err != nil {
		r.fail(cmd, "%v\n%s", err, out)
		return
	}
	switch {
	case len(w) >= 2 && w[0] == "helm" && (w[1] == "install" || w[1] == "upgrade" || w[1] == "rollback"):
		r.checkRelease(cmd)
	case len(w) >= 3 && w[0] == "kubectl" && w[1] == "rollout" && w[2] == "restart":
		r.rolledOut(cmd)
	case len(w) >= 2 && w[0] == "kubectl" && w[1] == "apply" && strings.Contains(cmd.text, "-v2"):
		r.checkReload(cmd)
	case len(w) >= 2 && w[0] == "helm" && w[1] == "uninstall":
		r.checkUninstalled(cmd)
	}
}

func (r *realNode) digest(archive string) string {
	_, d := r.imageRef(archive)
	return d
}

// imageRef is the name and manifest digest of a built archive.
func (r *realNode) imageRef(archive string) (name, digest string) {
	a := r.images[archive]
	if a == "" {
		r.t.Fatalf("%s was not built", archive)
	}
	out, err := exec.Command("tar", "-xOf", a, "index.json").Output()
	if err != nil {
		r.t.Fatalf("reading %s's index: %v", a, err)
	}
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(out, &index); err != nil || len(index.Manifests) != 1 {
		r.t.Fatalf("%s's index.json: %v (%d manifests)", a, err, len(index.Manifests))
	}
	m := index.Manifests[0]
	return m.Annotations["io.containerd.image.name"], m.Digest
}

// rolledOut waits until the scheduler's Deployment has its new pods Ready.
func (r *realNode) rolledOut(cmd guideCommand) {
	start := time.Now()
	if _, err := r.c.Kubectl("rollout", "status", r.deployment(), "-n", "kube-system", "--timeout=180s"); err != nil {
		r.fail(cmd, "the release did not become Ready: %v\n%s\n%s", err, r.describe("kube-system", "app.kubernetes.io/instance=schedplug"), r.schedulerLogs())
		return
	}
	r.t.Logf("$ %s: rolled out, Ready after %.1f s", cmd.text, time.Since(start).Seconds())
}

// checkRelease: Ready, the replicas the values asked for, and no API token
// in the host container.
func (r *realNode) checkRelease(cmd guideCommand) {
	r.rolledOut(cmd)
	want := "1"
	if strings.Contains(cmd.text, "ha-values") {
		want = "2"
	}
	out, err := r.c.Kubectl("get", r.deployment(), "-n", "kube-system", "-o", "jsonpath={.status.readyReplicas}")
	if err != nil || strings.TrimSpace(out) != want {
		r.fail(cmd, "ready replicas %q, want %s (%v)", out, want, err)
	}
	for _, p := range r.pods("kube-system", "app.kubernetes.io/instance=schedplug") {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Spec.Containers {
			for _, m := range c.VolumeMounts {
				if c.Name == "schedplug-host" && strings.HasPrefix(m.MountPath, "/var/run/secrets/kubernetes.io") {
					r.fail(cmd, "pod %s: the host container mounts the API token (%s)", p.Name, m.MountPath)
				}
			}
		}
	}
}

// checkReload waits for the kubelet to update the mounted ConfigMap and
// the host to swap the new plugin version in, with no restart.
func (r *realNode) checkReload(cmd guideCommand) {
	start := time.Now()
	restarts := r.restarts()
	var logs string
	for time.Since(start) < 150*time.Second {
		logs, _ = r.c.Kubectl("logs", r.deployment(), "-n", "kube-system", "-c", "schedplug-host")
		if strings.Contains(logs, "reload: plugin set 2 serves from now on") {
			break
		}
		time.Sleep(time.Second)
	}
	if !strings.Contains(logs, "reload: plugin set 2 serves from now on") {
		r.fail(cmd, "the host did not reload the new plugins within %s; its log:\n%s", time.Since(start).Round(time.Second), logs)
		return
	}
	if now := r.restarts(); now != restarts {
		r.fail(cmd, "a container restarted during the reload (restarts %d before, %d after)", restarts, now)
	}
	r.t.Logf("%s:%d: the host reloaded the new plugins %.1f s after the apply, with no restart", guideFile, cmd.line, time.Since(start).Seconds())
}

func (r *realNode) restarts() int32 {
	var n int32
	for _, p := range r.pods("kube-system", "app.kubernetes.io/instance=schedplug") {
		for _, s := range p.Status.ContainerStatuses {
			n += s.RestartCount
		}
	}
	return n
}

// checkUninstalled: nothing of the release is left.
func (r *realNode) checkUninstalled(cmd guideCommand) {
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, err := r.c.Kubectl("get", "all,configmaps,serviceaccounts,roles,rolebindings", "-n", "kube-system", "-l", "app.kubernetes.io/instance=schedplug", "-o", "name")
		if err == nil && strings.TrimSpace(out) == "" {
			return
		}
		if time.Now().After(deadline) {
			r.fail(cmd, "left behind after uninstall: %s %v", out, err)
			return
		}
		time.Sleep(time.Second)
	}
}

// applyWorkload applies the guide's example and follows it: its pods wait
// with HwEncrypt's reason until the node has the label, then run there.
func (r *realNode) applyWorkload(b guideBlock) {
	file := filepath.Join(r.t.TempDir(), "workload.yaml")
	if err := os.WriteFile(file, []byte(b.text), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.c.Kubectl("apply", "--server-side", "-f", file); err != nil {
		r.t.Errorf("%s:%d: %v", guideFile, b.line, err)
		return
	}
	const selector = "app=vault"
	reason := "didn't have hardware encryption"
	var described string
	if !r.eventually(60*time.Second, func() bool {
		for _, p := range r.pods("default", selector) {
			out, _ := r.c.Kubectl("describe", "pod", p.Name, "-n", "default")
			if strings.Contains(out, reason) {
				described = out
				return true
			}
		}
		return false
	}) {
		events, err := r.c.Kubectl("get", "events", "-A")
		r.t.Errorf("%s:%d: the pods never showed HwEncrypt's reason %q:\n%s\n%s\nevents (%v):\n%s", guideFile, b.line, reason, r.describe("default", selector), r.schedulerLogs(), err, events)
		return
	}
	for _, line := range strings.Split(described, "\n") {
		if strings.Contains(line, "FailedScheduling") {
			r.t.Logf("kubectl describe pod, while the node lacks the label:%s", line)
			break
		}
	}
	labelled := time.Now()
	if _, err := r.c.Kubectl("label", "node", r.c.NodeName, "node.kubernetes.io/hw-encrypt=true"); err != nil {
		r.t.Fatal(err)
	}
	if !r.eventually(90*time.Second, func() bool {
		pods := r.pods("default", selector)
		running := 0
		for _, p := range pods {
			if p.Spec.NodeName == r.c.NodeName && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return len(pods) == 2 && running == 2
	}) {
		r.t.Errorf("%s:%d: the pods did not run on %s after it got the label:\n%s\n%s", guideFile, b.line, r.c.NodeName, r.describe("default", selector), r.schedulerLogs())
		return
	}
	r.t.Logf("%s:%d: both pods placed by schedplug-scheduler on %s and Running %.1f s after the node was labelled", guideFile, b.line, r.c.NodeName, time.Since(labelled).Seconds())
}

// onlyScheduler: section 6. The chart takes the default lease: installed
// while the default scheduler runs, its pod is placed and waits as a
// standby; stopping the default scheduler hands it the lease, and a pod
// that names no scheduler is then placed by schedplug.
func (r *realNode) onlyScheduler(cmd guideCommand) {
	if _, err := r.shell(cmd); err != nil {
		r.fail(cmd, "%v", err)
		return
	}
	r.rolledOut(cmd)
	r.c.StopDefaultScheduler()
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"after-takeover","namespace":"default"},"spec":{"containers":[{"name":"c","image":"` + realnode.PauseImage + `"}]}}`
	file := filepath.Join(r.t.TempDir(), "pod.json")
	if err := os.WriteFile(file, []byte(pod), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.c.Kubectl("apply", "-f", file); err != nil {
		r.fail(cmd, "%v", err)
		return
	}
	if !r.eventually(120*time.Second, func() bool {
		out, _ := r.c.Kubectl("get", "pod", "after-takeover", "-n", "default", "-o", "jsonpath={.spec.nodeName}")
		return out == r.c.NodeName
	}) {
		r.fail(cmd, "with the default scheduler stopped, no scheduler placed a pod:\n%s\n%s", r.describe("default", ""), r.schedulerLogs())
		return
	}
	logs, _ := r.c.Kubectl("logs", r.deployment(), "-n", "kube-system", "-c", "kube-scheduler")
	if !strings.Contains(logs, `"Successfully acquired lease" lock="kube-system/kube-scheduler"`) {
		r.fail(cmd, "the release's kube-scheduler never took the default lease; its log:\n%s", logs)
		return
	}
	r.t.Logf("%s:%d: schedplug took the default lease and placed a pod that names no scheduler", guideFile, cmd.line)
}

func (r *realNode) eventually(timeout time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
	return true
}

func (r *realNode) pods(ns, selector string) []corev1.Pod {
	out, err := r.c.Kubectl("get", "pods", "-n", ns, "-l", selector, "-o", "json")
	if err != nil {
		r.t.Logf("%v", err)
		return nil
	}
	var list corev1.PodList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		r.t.Fatalf("kubectl get pods -o json: %v", err)
	}
	return list.Items
}

func (r *realNode) describe(ns, selector string) string {
	args := []string{"describe", "pods", "-n", ns}
	if selector != "" {
		args = append(args, "-l", selector)
	}
	out, err := r.c.Kubectl(args...)
	if err != nil {
		return fmt.Sprint(err)
	}
	return out
}

// schedulerLogs is the end of the release's two containers' logs.
func (r *realNode) schedulerLogs() string {
	var b strings.Builder
	for _, c := range []string{"kube-scheduler", "schedplug-host"} {
		out, err := r.c.Kubectl("logs", r.deployment(), "-n", "kube-system", "-c", c, "--tail=40")
		fmt.Fprintf(&b, "the last lines of %s's log (%v):\n%s\n", c, err, out)
		// A container that crashed said why in its previous run.
		if prev, err := r.c.Kubectl("logs", r.deployment(), "-n", "kube-system", "-c", c, "--previous", "--tail=10"); err == nil {
			fmt.Fprintf(&b, "its previous run's last lines:\n%s\n", prev)
		}
	}
	return b.String()
}

// deployment is the release's Deployment (named after its scheduler name).
func (r *realNode) deployment() string {
	out, err := r.c.Kubectl("get", "deployments", "-n", "kube-system", "-l", "app.kubernetes.io/instance=schedplug", "-o", "name")
	if name := strings.TrimSpace(out); err == nil && name != "" && !strings.Contains(name, "\n") {
		return name
	}
	return "deployment/schedplug-scheduler"
}
