// One test and its steps: building the images twice, unpacking them with umoci,
// running each entry point in a read-only chroot. One file: each step hands the
// next the unpacked roots, which nothing else uses.

package image

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The images are built twice by deploy/build-images.sh from the same build
// outputs: the archives must be the same bytes. Then each image is unpacked
// by umoci (an OCI implementation independent of the one that wrote it) and
// its entry point runs from the unpacked root filesystem in a chroot, as
// the image's own user, the root read-only but for the declared volume: the scheduler prints its version; the host, with
// the bundle image's layer as its plugin directory, loads every plugin the
// bundle's manifest names, answers its health check, and refuses the
// bundle once a plugin file no longer matches the manifest.
func TestImagesReproducibleAndRunFromUnpackedRoot(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"umoci", "unshare", "chroot", "ldd", "strip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (tools/dev/install-deps.sh installs it): %v", tool, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatal("this test runs the images' entry points in a chroot, which needs root")
	}
	out1, out2 := t.TempDir(), t.TempDir()
	first := buildImages(t, root, out1)
	second := buildImages(t, root, out2)
	if first != second {
		t.Errorf("two builds of the same inputs printed different digests:\n%s\n%s", first, second)
	}
	minors := otherMinors(t, root)
	names := []string{HostImage, SchedImage, BundleImage}
	for minor := range minors {
		names = append(names, SchedImage+"-"+minor)
	}
	for _, name := range names {
		a, b := fileSHA(t, filepath.Join(out1, name+".oci.tar")), fileSHA(t, filepath.Join(out2, name+".oci.tar"))
		if a != b {
			t.Errorf("%s.oci.tar differs between two builds (%s, %s)", name, a, b)
		}
	}
	t.Logf("images (file, name, manifest digest, archive size):\n%s", first)

	unpacked := t.TempDir()
	sched := unpack(t, filepath.Join(out1, SchedImage+".oci.tar"), filepath.Join(unpacked, "scheduler"))
	host := unpack(t, filepath.Join(out1, HostImage+".oci.tar"), filepath.Join(unpacked, "host"))
	bundle := unpack(t, filepath.Join(out1, BundleImage+".oci.tar"), filepath.Join(unpacked, "bundle"))

	for _, b := range []*runtimeBundle{sched, host, bundle} {
		if b.Process.User.UID != UID || b.Process.User.GID != UID {
			t.Errorf("%s runs as %d:%d, want the non-root %d:%d", b.dir, b.Process.User.UID, b.Process.User.GID, UID, UID)
		}
		for _, l := range []string{"org.opencontainers.image.source", "org.opencontainers.image.version", "org.opencontainers.image.revision"} {
			if b.Annotations[l] == "" {
				t.Errorf("%s: label %s is %q", b.dir, l, b.Annotations[l])
			}
		}
	}

	t.Run("scheduler prints its version", func(t *testing.T) {
		args := append(append([]string{}, sched.Process.Args[0]), "--version")
		out, err := chroot(sched.rootfs(), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v from the image root: %v\n%s", args, err, out)
		}
		if !regexp.MustCompile(`^Kubernetes v1\.[0-9]+\.[0-9]+`).Match(out) {
			t.Errorf("kube-scheduler --version printed %q, want Kubernetes v1.x.y", out)
		}
		t.Logf("kube-scheduler --version: %s", bytes.TrimSpace(out))
		f, err := elf.Open(sched.rootfs() + sched.Process.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, s := range f.Sections {
			if s.Name == ".symtab" || strings.HasPrefix(s.Name, ".debug") {
				t.Errorf("the image's %s is not stripped: it has a %s section", sched.Process.Args[0], s.Name)
			}
		}
	})

	// One more kube-scheduler image per other supported minor, tagged with
	// its upstream version, whose binary is that version.
	for minor, version := range minors {
		t.Run("scheduler for Kubernetes "+minor, func(t *testing.T) {
			tag := " " + defaultRepos + "/" + SchedImage + ":" + version + "-schedplug."
			if !strings.Contains(first, SchedImage+"-"+minor+".oci.tar ") || !strings.Contains(first, tag) {
				t.Errorf("no image %s...: built\n%s", tag, first)
			}
			b := unpack(t, filepath.Join(out1, SchedImage+"-"+minor+".oci.tar"), filepath.Join(unpacked, "scheduler-"+minor))
			out, err := chroot(b.rootfs(), b.Process.Args[0], "--version").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "Kubernetes "+version {
				t.Errorf("kube-scheduler --version from the %s image printed %q (%v), want Kubernetes %s", minor, out, err, version)
			}
		})
	}

	t.Run("demo schedules pods with the host and kube-scheduler from the image roots", func(t *testing.T) {
		runDemoFromImageRoots(t, root, host, sched, bundle)
	})

	t.Run("host serves the bundle's plugins", func(t *testing.T) {
		r := host.rootfs()
		if out, err := exec.Command("cp", "-a", bundle.rootfs()+"/.", r+PluginsDir).CombinedOutput(); err != nil {
			t.Fatalf("copying the bundle layer into the host's plugin directory: %v\n%s", err, out)
		}
		writeFile(t, r+ConfigDir+"/scheduler-config.yaml", readFile(t, filepath.Join(root, "config", "scheduler-config.yaml")))
		writeFile(t, r+"/etc/schedplug/latency/latency.txt", []byte("worker-1 2.5\n"))
		// What the pod's emptyDir gives the host: a directory it may write.
		if err := os.Chown(r+SocketDir, UID, UID); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{}, host.Process.Args...), "--plugin-sha256="+PluginsDir+"/"+BundleSums)
		logFile := filepath.Join(t.TempDir(), "host.log")
		stop := startHost(t, r, args, logFile)
		probe := []string{host.Process.Args[0], "probe", "--listen=unix://" + SocketDir + "/host/host.sock", "--timeout=2"}
		var out []byte
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, err = chroot(r, probe...).CombinedOutput()
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		stop()
		log := string(readFile(t, logFile))
		if err != nil {
			t.Fatalf("%v did not answer SERVING within 30s: %v\n%s\nhost log:\n%s", probe, err, out, log)
		}
		t.Logf("%s", bytes.TrimSpace(out))
		var m struct {
			Plugins []BundlePlugin `json:"plugins"`
		}
		if err := json.Unmarshal(readFile(t, r+PluginsDir+"/"+BundleManif), &m); err != nil || len(m.Plugins) == 0 {
			t.Fatalf("the bundle's %s: %v (%d plugins)", BundleManif, err, len(m.Plugins))
		}
		for _, p := range m.Plugins {
			want := fmt.Sprintf("loaded plugin %s %s from %s/%s", p.Name, p.Version, PluginsDir, p.File)
			if !strings.Contains(log, want) {
				t.Errorf("host log lacks %q:\n%s", want, log)
			}
		}

		// A plugin file changed after the bundle was made: refused.
		so := r + PluginsDir + "/" + m.Plugins[0].File
		f, err := os.OpenFile(so, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte{0})
		f.Close()
		out, err = chroot(r, args...).CombinedOutput()
		if err == nil {
			t.Fatalf("the host started with %s changed after the bundle was made:\n%s", m.Plugins[0].File, out)
		}
		if !strings.Contains(string(out), m.Plugins[0].File) || !strings.Contains(string(out), m.Plugins[0].SHA256) {
			t.Errorf("the host's refusal does not name %s and its expected SHA-256 %s:\n%s", m.Plugins[0].File, m.Plugins[0].SHA256, out)
		}
		t.Logf("tampered bundle refused: %s", lastLine(out))
	})
}

// The end-to-end smoke test: schedplug-demo (an in-process etcd and
// kube-apiserver, six nodes, six pods) runs schedplug-host and
// kube-scheduler from the unpacked image roots, the host loading the
// bundle image's layer, and the pods land where the sample plugins send
// them.
func runDemoFromImageRoots(t *testing.T, root string, host, sched, bundle *runtimeBundle) {
	demo := os.Getenv("SCHEDPLUG_DEMO_BIN")
	if demo == "" {
		demo = filepath.Join(root, "build", "go", "schedplug-demo")
	}
	if _, err := os.Stat(demo); err != nil {
		t.Fatalf("schedplug-demo is not built (%v): cd integration && go build -o ../build/go/schedplug-demo ./testbed/cmd/schedplug-demo, or set SCHEDPLUG_DEMO_BIN", err)
	}
	scripts, logs := t.TempDir(), t.TempDir()
	cmd := exec.Command(demo, "-plugins", bundle.rootfs(), "-keep-logs", logs, "-timeout", "60s")
	cmd.Env = append(os.Environ(),
		"SCHEDPLUG_HOST_BIN="+entryPointScript(t, scripts, host),
		"SCHEDPLUG_SCHEDULER_BIN="+entryPointScript(t, scripts, sched))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	hostLog, _ := os.ReadFile(filepath.Join(logs, "host.log"))
	if err != nil {
		t.Fatalf("schedplug-demo with the images' entry points: %v\n%s%s\nhost log:\n%s", err, stderr.String(), out, hostLog)
	}
	t.Logf("schedplug-demo, host and kube-scheduler from the image roots:\n%s", out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^payments-[12] +hardware encryption +node-[ab] +-$`),
		regexp.MustCompile(`(?m)^batch-owner +may use dedicated nodes +node-e +-$`),
		regexp.MustCompile(`(?m)^vault +hardware encryption, 7\.5 CPUs +Pending +0/6 nodes are available: .*didn't have hardware encryption`),
	} {
		if !want.Match(out) {
			t.Errorf("the demo's table has no line matching %q", want)
		}
	}
	if regexp.MustCompile(`(?m)^web-[12] .* node-e `).Match(out) {
		t.Errorf("a web pod went to the dedicated node-e")
	}
	if !strings.Contains(string(hostLog), "from "+bundle.rootfs()+"/hw_encrypt.so") {
		t.Errorf("the host's log does not show hw_encrypt.so loaded from the bundle layer %s:\n%s", bundle.rootfs(), hostLog)
	}
}

// entryPointScript writes an executable that runs the image's entry point
// from its root filesystem the way testenv starts a binary: same PID (so
// signals reach it), a private mount namespace with /proc, /dev, the root
// read-only, and the temporary directory mounted at the same path (in
// place of the pod's volumes), so that the files and the socket the demo
// makes there are where it looks for them. As root:
// the demo's work directory is private to the user running the test.
func entryPointScript(t *testing.T, dir string, b *runtimeBundle) string {
	t.Helper()
	r := b.rootfs()
	tmp := os.TempDir()
	for _, d := range []string{"/proc", "/dev", tmp} {
		if err := os.MkdirAll(r+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\n" +
		"exec unshare --mount sh -c " + shellQuote(`r=$0 && `+readOnlyRoot()+` && mount --rbind "$1" "$r$1" && shift && exec chroot "$r" "$@"`) + " " +
		shellQuote(r) + " " + shellQuote(tmp) + " " + shellQuote(b.Process.Args[0]) + " \"$@\"\n"
	file := filepath.Join(dir, filepath.Base(b.Process.Args[0]))
	if err := os.WriteFile(file, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return file
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func buildImages(t *testing.T, root, out string) string {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("bash", filepath.Join(root, "deploy", "build-images.sh"), out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("deploy/build-images.sh %s: %v\n%s", out, err, stderr.String())
	}
	t.Logf("deploy/build-images.sh took %s", time.Since(start).Round(time.Millisecond))
	return strings.ReplaceAll(string(stdout), out, "OUT")
}

// otherMinors are the Kubernetes minors but the default that
// integration/k8s/minors lists, with their upstream versions: each gets a
// kube-scheduler image of its own.
func otherMinors(t *testing.T, root string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "integration", "k8s", "minors"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([0-9]+\.[0-9]+) +(v\S+) *$`).FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = m[2]
	}
	if len(out) == 0 {
		t.Fatalf("integration/k8s/minors lists no minor besides the default")
	}
	return out
}

// runtimeBundle is the part of the OCI runtime bundle (config.json) umoci
// writes that the test reads: the image's entry point, user and labels.
type runtimeBundle struct {
	dir     string
	Process struct {
		Args []string `json:"args"`
		User struct {
			UID int `json:"uid"`
			GID int `json:"gid"`
		} `json:"user"`
	} `json:"process"`
	Annotations map[string]string `json:"annotations"`
}

func (b *runtimeBundle) rootfs() string { return filepath.Join(b.dir, "rootfs") }

// unpack extracts the archive's OCI layout and lets umoci unpack the one
// image it names into a runtime bundle at dir.
func unpack(t *testing.T, archive, dir string) *runtimeBundle {
	t.Helper()
	layout := dir + ".layout"
	if err := os.MkdirAll(layout, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xf", archive, "-C", layout).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf %s: %v\n%s", archive, err, out)
	}
	var index struct {
		Manifests []struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(layout, "index.json")), &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("%s: index.json: %v, want one image", archive, err)
	}
	ref := index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]
	checkDockerArchive(t, archive, layout, ref)
	if out, err := exec.Command("umoci", "unpack", "--image", layout+":"+ref, dir).CombinedOutput(); err != nil {
		t.Fatalf("umoci unpack %s:%s: %v\n%s", layout, ref, err, out)
	}
	b := &runtimeBundle{dir: dir}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "config.json")), b); err != nil {
		t.Fatal(err)
	}
	if len(b.Process.Args) == 0 {
		b.Process.Args = []string{""}
	}
	return b
}

// checkDockerArchive reads the archive as Docker's classic store loads it
// (manifest.json, not the OCI index) and checks that it is the same image:
// the tag, the config blob, and each layer, whose uncompressed digest must
// be the config's diff ID as docker load verifies.
func checkDockerArchive(t *testing.T, archive, layoutDir, ref string) {
	t.Helper()
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(archive) })
	if err != nil || len(m) != 1 || len(m[0].RepoTags) != 1 || m[0].RepoTags[0] != ref {
		t.Fatalf("%s: manifest.json %+v (%v), want one image tagged %s", archive, m, err, ref)
	}
	img, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		t.Fatalf("%s as a docker archive: %v", archive, err)
	}
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	oci, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	a, errA := img.ConfigName()
	b, errB := oci.ConfigName()
	if errA != nil || errB != nil || a != b {
		t.Errorf("%s: manifest.json names config %s, the OCI index %s (%v, %v)", archive, a, b, errA, errB)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != len(cf.RootFS.DiffIDs) {
		t.Fatalf("%s: %d layers in manifest.json, %d diff IDs in the config (%v)", archive, len(layers), len(cf.RootFS.DiffIDs), err)
	}
	for i, l := range layers {
		r, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != cf.RootFS.DiffIDs[i].String() {
			t.Errorf("%s: layer %d of manifest.json uncompresses to %s, the config says %s", archive, i, got, cf.RootFS.DiffIDs[i])
		}
	}
}

// readOnlyRoot is the shell that makes the root filesystem "$r" read-only
// in the current mount namespace (as the chart's readOnlyRootFilesystem
// does), then each directory of the words after it writable again: what an
// image needs to write must be in its declared volumes.
func readOnlyRoot(writable ...string) string {
	s := `mount --bind "$r" "$r" && mount -o remount,bind,ro "$r"`
	for _, w := range writable {
		s += ` && mount --bind "$r` + w + `" "$r` + w + `" && mount -o remount,bind,rw "$r` + w + `"`
	}
	return s + ` && mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev"`
}

// chroot runs args inside root as the images' user, in a mount namespace
// of its own with /proc and /dev, as a container runtime provides them,
// and the root read-only but for SocketDir, the images' declared volume.
func chroot(root string, args ...string) *exec.Cmd {
	script := `r=$1 && shift && ` + readOnlyRoot(SocketDir) + ` && exec chroot --userspec=` +
		fmt.Sprintf("%d:%d", UID, UID) + ` "$r" "$@"`
	for _, d := range []string{"proc", "dev"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	cmd := exec.Command("unshare", append([]string{"--mount", "--fork", "sh", "-c", script, "sh", root}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// startHost starts the host from root; the returned function stops it
// (SIGTERM to its process group) and waits for it.
func startHost(t *testing.T, root string, args []string, logFile string) func() {
	t.Helper()
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := chroot(root, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(done) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

func fileSHA(t *testing.T, file string) string {
	s := sha256.Sum256(readFile(t, file))
	return hex.EncodeToString(s[:])
}

func readFile(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, file string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
