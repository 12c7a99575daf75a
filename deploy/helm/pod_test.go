// TestChartPodRunsTheBuiltBinaries and the pod runner it needs (namespaces,
// mounts, users, probes, as a kubelet would). One file: pod and process serve
// this test only, and their steps follow the pod spec's fields in order.

package helm

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"schedplug.dev/deploy/image"
)

// podIP is the address the sandbox gives its pod, as a CNI plugin would.
const podIP = "10.244.0.2"

// TestChartPodRunsTheBuiltBinaries renders the chart with the default
// values and each ci/ variant and runs the Deployment's pod the way the
// kubelet runs it on a node, from the images' root filesystems
// (deploy/image builds them from the build tree): one network namespace
// with a pod IP, each container chrooted into its image's root (read-only
// where readOnlyRootFilesystem says so) as the pod's user, its volumeMounts
// bound from volumes filled as the kubelet fills them, and the
// ServiceAccount admission plugin's token mount where the pod spec lets it
// add one. So every flag the chart passes meets the real command line that
// parses it:
//   - the host sidecar starts with the rendered args and passes its
//     startup, liveness and readiness probes as the kubelet runs them;
//   - its metrics answer where host.metricsAddress promises: on the pod's
//     loopback only by default, on the pod IP when opted in, and every
//     port the container declares answers on the pod IP;
//   - kube-scheduler runs its rendered command (with --write-config-to, so
//     it stops once it is set up): its flags and configuration are
//     accepted, client-go's in-cluster configuration finds the API token,
//     and the shim's plugins are built against the running host.
func TestChartPodRunsTheBuiltBinaries(t *testing.T) {
	for _, tool := range []string{"unshare", "nsenter", "chroot", "ip", "strip", "ldd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (tools/dev/install-deps.sh installs it): %v", tool, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatal("this test runs the chart's pod in namespaces and chroots of its own, which needs root")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	specs, err := image.Specs(image.Inputs{
		HostBin:      buildOutput(t, repo, "SCHEDPLUG_HOST_BIN", "build/host/schedplug-host"),
		CLIBin:       buildOutput(t, repo, "SCHEDPLUG_CLI_BIN", "build/tools/schedplug/schedplug"),
		SchedulerBin: buildOutput(t, repo, "SCHEDPLUG_SCHEDULER_BIN", "build/go/kube-scheduler"),
		PluginDir:    buildOutput(t, repo, "SCHEDPLUG_PLUGIN_DIR", "build/plugins.d"),
		Version:      "0.0.0-test", SchedulerVersion: "v0.0.0-test", Created: time.Unix(1, 0),
		WorkDir: filepath.Join(work, "image-work"),
	})
	if err != nil {
		t.Fatalf("the images' contents from the build tree: %v", err)
	}
	roots := map[string]image.Spec{}
	for i, name := range []string{"host", "scheduler", "bundle"} {
		dir := filepath.Join(work, "images", name)
		if err := specs[i].Extract(dir); err != nil {
			t.Fatal(err)
		}
		roots[name] = specs[i]
	}
	img := images{dir: filepath.Join(work, "images"), specs: roots}

	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for name, vals := range variants(t) {
		t.Run(name, func(t *testing.T) {
			all, err := render(ch, vals)
			if err != nil {
				t.Fatal(err)
			}
			runPod(t, img, vals, all)
		})
	}
}

// buildOutput is a build output the test command names in env (relative
// to the checkout otherwise), which must exist.
func buildOutput(t *testing.T, repo, env, rel string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join(repo, rel)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%v: build the tree first (bash tools/dev/test.sh), or set %s", err, env)
	}
	return p
}

// images are the extracted roots: host, scheduler and bundle.
type images struct {
	dir   string
	specs map[string]image.Spec
}

// forContainer is the image root a container of the chart runs from.
func (im images) forContainer(c corev1.Container) (string, image.Spec) {
	name := "scheduler"
	if strings.Contains(c.Image, "schedplug-host") {
		name = "host"
	}
	return filepath.Join(im.dir, name), im.specs[name]
}

// pod is one sandboxed run of the rendered pod.
type pod struct {
	t     *testing.T
	spec  corev1.PodSpec
	img   images
	vols  string // a directory per volume
	pause *exec.Cmd
	logs  string
}

func runPod(t *testing.T, img images, vals map[string]any, rendered string) {
	var deploy *appsv1.Deployment
	configMaps := map[string]map[string]string{}
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Deployment":
			deploy = &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict([]byte(doc), deploy); err != nil {
				t.Fatalf("the rendered Deployment: %v", err)
			}
		case "ConfigMap":
			configMaps[meta.Metadata.Name] = meta.Data
		}
	}
	if deploy == nil {
		t.Fatal("no Deployment rendered")
	}
	p := &pod{t: t, spec: deploy.Spec.Template.Spec, img: img, vols: t.TempDir(), logs: t.TempDir()}
	p.fillVolumes(configMaps)
	p.start()

	var sidecars, containers []corev1.Container
	for _, c := range p.spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			t.Fatalf("init container %s is not a native sidecar; the sandbox runs only those", c.Name)
		}
		sidecars = append(sidecars, c)
	}
	containers = p.spec.Containers
	if len(sidecars) != 1 || sidecars[0].Name != "schedplug-host" || len(containers) != 1 || containers[0].Name != "kube-scheduler" {
		t.Fatalf("the pod runs %d sidecars and %d containers; the test knows the host sidecar and kube-scheduler", len(sidecars), len(containers))
	}
	host, sched := sidecars[0], containers[0]

	// The kubelet starts the sidecar and waits for its startup probe
	// before it starts the next container.
	hostProc := p.run(host, nil)
	if !p.waitProbe(host, hostProc, host.StartupProbe, "startup") {
		return
	}
	for _, pr := range []struct {
		probe *corev1.Probe
		kind  string
	}{{host.LivenessProbe, "liveness"}, {host.ReadinessProbe, "readiness"}} {
		if err := p.probe(host, pr.probe); err != nil {
			t.Errorf("the host's %s probe fails once it started: %v", pr.kind, err)
		}
	}
	p.checkMetrics(host, vals)

	// kube-scheduler with its rendered command, stopped once set up.
	out, err := p.runToEnd(sched, 2*time.Minute, "--write-config-to=/dev/null")
	if err != nil || !strings.Contains(out, "Wrote configuration") {
		t.Errorf("kube-scheduler with the rendered command did not get through its setup: %v\n%s\nhost log:\n%s", err, ends(out), tail(readLog(hostProc), 20))
	} else {
		t.Logf("kube-scheduler set up with the rendered command and configuration, and with the host: %s", lastMatching(out, "Wrote configuration"))
	}
	if strings.Contains(out, "falling back to default config") {
		t.Errorf("kube-scheduler found no in-cluster API credentials:\n%s", tail(out, 40))
	}
	if !regexp.MustCompile(`session \w+ started for client "kube-scheduler `).MatchString(readLog(hostProc)) {
		t.Errorf("the shim in kube-scheduler opened no session with the host; host log:\n%s", tail(readLog(hostProc), 20))
	}
}

// fillVolumes makes a directory per pod volume as the kubelet would fill
// it, and adds what the ServiceAccount admission plugin adds.
func (p *pod) fillVolumes(configMaps map[string]map[string]string) {
	t := p.t
	if token := apiTokenVolume(p.spec); token != nil {
		p.spec.Volumes = append(p.spec.Volumes, *token)
		for _, cs := range [][]corev1.Container{p.spec.InitContainers, p.spec.Containers} {
			for i := range cs {
				if !slices.ContainsFunc(cs[i].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == serviceAccountDir }) {
					cs[i].VolumeMounts = append(cs[i].VolumeMounts, corev1.VolumeMount{Name: token.Name, MountPath: serviceAccountDir, ReadOnly: true})
				}
			}
		}
	}
	for _, v := range p.spec.Volumes {
		dir := filepath.Join(p.vols, v.Name)
		mustMkdir(t, dir, 0o755)
		switch {
		case v.ConfigMap != nil:
			data, ok := configMaps[v.ConfigMap.Name]
			switch {
			case !ok && v.Name == "plugins":
				// The plugin ConfigMap the admin makes from a bundle.
				data = p.bundleFiles()
			case !ok:
				t.Fatalf("volume %s: ConfigMap %s is neither one the chart renders nor the plugins", v.Name, v.ConfigMap.Name)
			}
			writeKeys(t, dir, data, v.ConfigMap.Items, v.ConfigMap.DefaultMode)
		case v.Image != nil:
			for k, b := range p.bundleFiles() {
				writeFile(t, filepath.Join(dir, k), []byte(b), 0o644)
			}
		case v.EmptyDir != nil, v.PersistentVolumeClaim != nil:
			mustChmod(t, dir, 0o777)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				switch {
				case s.ServiceAccountToken != nil:
					writeFile(t, filepath.Join(dir, s.ServiceAccountToken.Path), []byte("sandbox-token"), fileMode(v.Projected.DefaultMode))
				case s.ConfigMap != nil && s.ConfigMap.Name == "kube-root-ca.crt":
					writeKeys(t, dir, map[string]string{"ca.crt": testCA(t)}, s.ConfigMap.Items, v.Projected.DefaultMode)
				case s.DownwardAPI != nil:
					for _, item := range s.DownwardAPI.Items {
						if item.FieldRef == nil || item.FieldRef.FieldPath != "metadata.namespace" {
							t.Fatalf("volume %s: the sandbox knows only metadata.namespace from the downward API", v.Name)
						}
						writeFile(t, filepath.Join(dir, item.Path), []byte(namespace), fileMode(v.Projected.DefaultMode))
					}
				default:
					t.Fatalf("volume %s: the sandbox does not know how the kubelet fills this projected source: %+v", v.Name, s)
				}
			}
		default:
			t.Fatalf("volume %s: the sandbox does not know how the kubelet fills it: %+v", v.Name, v.VolumeSource)
		}
	}
}

// bundleFiles is the plugin bundle (what `schedplug bundle` writes, which
// the bundle image and the guide's ConfigMap hold).
func (p *pod) bundleFiles() map[string]string {
	out := map[string]string{}
	dir := filepath.Join(p.img.dir, "bundle")
	entries, err := os.ReadDir(dir)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			p.t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// apiTokenVolume is the volume the ServiceAccount admission plugin adds
// (and mounts into every container without a mount at serviceAccountDir)
// unless the pod spec says automountServiceAccountToken: false; nil then.
// The chart's ServiceAccount does not say it.
func apiTokenVolume(spec corev1.PodSpec) *corev1.Volume {
	if spec.AutomountServiceAccountToken != nil && !*spec.AutomountServiceAccountToken {
		return nil
	}
	expiry := int64(3607)
	return &corev1.Volume{Name: "kube-api-access-admission", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}

// apiTokenContainers names the containers that get an API token: those
// mounting a volume with a service account token projection, with what
// the admission plugin adds.
func apiTokenContainers(spec corev1.PodSpec) []string {
	tokenVolumes := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				tokenVolumes[v.Name] = tokenVolumes[v.Name] || s.ServiceAccountToken != nil
			}
		}
	}
	admitted := apiTokenVolume(spec) != nil
	var out []string
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		if admitted || slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return tokenVolumes[m.Name] }) {
			out = append(out, c.Name)
		}
	}
	return out
}

// start makes the pod's namespaces: a mount namespace for the containers'
// roots and volumes, and a network namespace with the loopback up and the
// pod IP. The pause process holds them; they go with it.
func (p *pod) start() {
	t := p.t
	p.pause = exec.Command("unshare", "--mount", "--net", "sh", "-c",
		"ip link set lo up && ip addr add "+podIP+"/32 dev lo && echo ready && exec sleep infinity")
	p.pause.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := p.pause.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	p.pause.Stderr = &stderr
	if err := p.pause.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.pause.Process.Kill(); p.pause.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		p.pause.Wait()
		t.Fatalf("making the pod's namespaces: %s", stderr.String())
	}
}

// nsenter runs args in the pod's namespaces as root.
func (p *pod) nsenter(args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--target", strconv.Itoa(p.pause.Process.Pid), "--mount", "--net", "--"}, args...)...)
}

// mountContainer lays out c's root in the pod's mount namespace: its
// image's root (read-only if readOnlyRootFilesystem), /proc, /dev and its
// volumeMounts. It returns the root.
func (p *pod) mountContainer(c corev1.Container) string {
	t := p.t
	root, _ := p.img.forContainer(c)
	for _, d := range []string{"proc", "dev"} {
		mustMkdir(t, filepath.Join(root, d), 0o755)
	}
	for _, m := range c.VolumeMounts {
		// A runtime makes missing mount points in the container's layer.
		mustMkdir(t, filepath.Join(root, m.MountPath), 0o755)
	}
	script := []string{`mount --bind "$0" "$0"`}
	if sc := c.SecurityContext; sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		script = append(script, `mount -o remount,bind,ro "$0"`)
	}
	script = append(script, `mount -t proc proc "$0/proc"`, `mount --rbind /dev "$0/dev"`)
	for _, m := range c.VolumeMounts {
		src, dst := shellQuote(filepath.Join(p.vols, m.Name)), shellQuote(filepath.Join(root, m.MountPath))
		script = append(script, "mount --bind "+src+" "+dst)
		if m.ReadOnly {
			script = append(script, "mount -o remount,bind,ro "+src+" "+dst)
		}
	}
	if out, err := p.nsenter("sh", "-ec", strings.Join(script, "\n"), root).CombinedOutput(); err != nil {
		t.Fatalf("mounting the root and volumes of container %s: %v\n%s", c.Name, err, out)
	}
	return root
}

// user is uid:gid and the supplementary groups c runs with.
func (p *pod) user(c corev1.Container) []string {
	uid, gid := int64(0), int64(0)
	var groups []string
	if sc := p.spec.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = *sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = *sc.RunAsGroup
		}
		if sc.FSGroup != nil {
			groups = append(groups, strconv.FormatInt(*sc.FSGroup, 10))
		}
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = *sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = *sc.RunAsGroup
		}
	}
	out := []string{fmt.Sprintf("--userspec=%d:%d", uid, gid)}
	if len(groups) > 0 {
		out = append(out, "--groups="+strings.Join(groups, ","))
	}
	return out
}

// command is c's process as the runtime starts it: the image's
// entry point and command unless the container replaces them.
func (p *pod) command(c corev1.Container, extra ...string) *exec.Cmd {
	root, spec := p.img.forContainer(c)
	argv := c.Command
	if len(argv) == 0 {
		argv = spec.Entrypoint
		if len(c.Args) == 0 {
			argv = append(slices.Clone(argv), spec.Cmd...)
		}
	}
	argv = append(append(slices.Clone(argv), c.Args...), extra...)
	return p.exec(c, root, spec, argv)
}

// exec runs argv in c's root as c's user, with the environment the
// runtime and the kubelet give it.
func (p *pod) exec(c corev1.Container, root string, spec image.Spec, argv []string) *exec.Cmd {
	chroot, err := exec.LookPath("chroot") // the container's PATH is not ours
	if err != nil {
		p.t.Fatal(err)
	}
	args := append(append([]string{chroot}, p.user(c)...), root)
	cmd := p.nsenter(append(args, argv...)...)
	cmd.Env = append(slices.Clone(spec.Env), "HOSTNAME=sandbox",
		// What the kubelet sets for the kubernetes Service: nothing listens
		// there, so kube-scheduler gets no further than its setup.
		"KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=1")
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			p.t.Fatalf("container %s: env %s comes from %v, which the sandbox does not resolve", c.Name, e.Name, e.ValueFrom)
		}
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	return cmd
}

// process is a started container.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func (pr *process) exited() bool {
	select {
	case <-pr.done:
		return true
	default:
		return false
	}
}

// run starts c (mounting its root first); it is stopped when the test ends.
func (p *pod) run(c corev1.Container, extra []string) *process {
	t := p.t
	p.mountContainer(c)
	cmd := p.command(c, extra...)
	logFile := filepath.Join(p.logs, c.Name+".log")
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr := &process{cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() { cmd.Wait(); f.Close(); close(pr.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-pr.done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-pr.done
		}
	})
	return pr
}

// runToEnd runs c until it exits, and returns its output.
func (p *pod) runToEnd(c corev1.Container, timeout time.Duration, extra ...string) (string, error) {
	pr := p.run(c, extra)
	select {
	case <-pr.done:
	case <-time.After(timeout):
		pr.cmd.Process.Kill()
		<-pr.done
		return readLog(pr), fmt.Errorf("still running after %s", timeout)
	}
	if !pr.cmd.ProcessState.Success() {
		return readLog(pr), fmt.Errorf("it exited: %v", pr.cmd.ProcessState)
	}
	return readLog(pr), nil
}

// waitProbe runs probe as the kubelet runs a startup probe until it
// passes, the container exits, or failureThreshold is reached.
func (p *pod) waitProbe(c corev1.Container, pr *process, probe *corev1.Probe, kind string) bool {
	t := p.t
	if probe == nil {
		t.Errorf("container %s has no %s probe", c.Name, kind)
		return false
	}
	time.Sleep(time.Duration(probe.InitialDelaySeconds) * time.Second)
	period, threshold := max(probe.PeriodSeconds, 1), max(probe.FailureThreshold, 1)
	var err error
	for i := int32(0); i < threshold; i++ {
		if err = p.probe(c, probe); err == nil {
			return true
		}
		if pr.exited() {
			t.Errorf("container %s exited before its %s probe passed (%v); its log:\n%s", c.Name, kind, pr.cmd.ProcessState, tail(readLog(pr), 30))
			return false
		}
		time.Sleep(time.Duration(period) * time.Second)
	}
	t.Errorf("the %s probe of container %s failed %d times: %v; its log:\n%s", kind, c.Name, threshold, err, tail(readLog(pr), 30))
	return false
}

// probe runs one probe as the kubelet does: exec in the container,
// tcpSocket and httpGet against the pod IP.
func (p *pod) probe(c corev1.Container, probe *corev1.Probe) error {
	timeout := time.Duration(max(probe.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch {
	case probe.Exec != nil:
		root, spec := p.img.forContainer(c)
		cmd := p.exec(c, root, spec, probe.Exec.Command)
		done := make(chan error, 1)
		var out []byte
		go func() {
			var err error
			out, err = cmd.CombinedOutput()
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("%v: %v: %s", probe.Exec.Command, err, strings.TrimSpace(string(out)))
			}
			return nil
		case <-ctx.Done():
			cmd.Process.Kill()
			<-done
			return fmt.Errorf("%v: no answer within timeoutSeconds %s", probe.Exec.Command, timeout)
		}
	case probe.TCPSocket != nil:
		conn, err := p.dial(ctx, net.JoinHostPort(podIP, strconv.Itoa(p.port(c, probe.TCPSocket.Port))))
		if err != nil {
			return err
		}
		return conn.Close()
	case probe.HTTPGet != nil:
		url := fmt.Sprintf("%s://%s%s", strings.ToLower(string(probe.HTTPGet.Scheme)),
			net.JoinHostPort(podIP, strconv.Itoa(p.port(c, probe.HTTPGet.Port))), probe.HTTPGet.Path)
		code, _, err := p.get(ctx, url)
		if err == nil && (code < 200 || code >= 400) {
			err = fmt.Errorf("GET %s: HTTP %d", url, code)
		}
		return err
	}
	return fmt.Errorf("the sandbox does not run this kind of probe: %+v", probe.ProbeHandler)
}

// port resolves a probe's port, a number or the name of one of c's ports.
func (p *pod) port(c corev1.Container, port intstr.IntOrString) int {
	if port.Type == intstr.Int {
		return port.IntValue()
	}
	s := port.StrVal
	for _, cp := range c.Ports {
		if cp.Name == s {
			return int(cp.ContainerPort)
		}
	}
	p.t.Fatalf("container %s: a probe names port %q, which the container does not declare", c.Name, s)
	return 0
}

// dial connects to addr from inside the pod's network namespace: the
// socket is made on a thread moved into it and back. (A thread left there
// would have to end with its goroutine, and the end of the thread that
// started a process kills it: Pdeathsig.)
func (p *pod) dial(ctx context.Context, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer own.Close()
		ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", p.pause.Process.Pid))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("entering the pod's network namespace: %w", err)}
			return
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread() // else the thread ends with this goroutine
		}
		ch <- result{conn, err}
	}()
	r := <-ch
	return r.conn, r.err
}

// get is a GET from inside the pod's network namespace (certificates not
// checked, as the kubelet's probes do not).
func (p *pod) get(ctx context.Context, url string) (int, string, error) {
	client := &http.Client{Transport: &http.Transport{
		DialContext:     func(ctx context.Context, _, addr string) (net.Conn, error) { return p.dial(ctx, addr) },
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // what the kubelet's probes do
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// checkMetrics: the host's metrics answer on the pod's loopback, and on
// the pod IP exactly when host.metricsAddress opens them; a port the
// container declares answers on the pod IP.
func (p *pod) checkMetrics(host corev1.Container, vals map[string]any) {
	t := p.t
	address, port := "127.0.0.1", 9464
	if h, ok := vals["host"].(map[string]any); ok {
		if a, ok := h["metricsAddress"].(string); ok {
			address = a
		}
		if n, ok := h["metricsPort"].(float64); ok {
			port = int(n)
		}
	}
	open := !strings.HasPrefix(address, "127.")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, ip := range []string{"127.0.0.1", podIP} {
		url := "http://" + net.JoinHostPort(ip, strconv.Itoa(port)) + "/metrics"
		code, body, err := p.get(ctx, url)
		served := err == nil && code == http.StatusOK && strings.Contains(body, "schedplug_")
		switch {
		case ip == "127.0.0.1" && !served:
			t.Errorf("the host's metrics do not answer on the pod's loopback at %s: HTTP %d, %v", url, code, err)
		case ip == podIP && served && !open:
			t.Errorf("the host's metrics answer on the pod IP at %s although host.metricsAddress is %s: anyone who reaches the pod reads them", url, address)
		case ip == podIP && !served && open:
			t.Errorf("host.metricsAddress is %s, but the metrics do not answer on the pod IP at %s: HTTP %d, %v", address, url, code, err)
		}
	}
	for _, cp := range host.Ports {
		conn, err := p.dial(ctx, net.JoinHostPort(podIP, strconv.Itoa(int(cp.ContainerPort))))
		if err != nil {
			t.Errorf("container %s declares port %s (%d), which nothing serves on the pod IP: %v", host.Name, cp.Name, cp.ContainerPort, err)
			continue
		}
		conn.Close()
	}
}

func readLog(pr *process) string {
	b, _ := os.ReadFile(pr.log)
	return string(b)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ends is the start and the end of a long output (a command line's error
// comes first, before its usage).
func ends(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= 40 {
		return s
	}
	return strings.Join(lines[:8], "\n") + "\n...\n" + strings.Join(lines[len(lines)-30:], "\n")
}

func lastMatching(s, sub string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], sub) {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func fileMode(m *int32) os.FileMode {
	if m == nil {
		return 0o644
	}
	return os.FileMode(*m)
}

// writeKeys writes a ConfigMap's keys (or the listed items) as files.
func writeKeys(t *testing.T, dir string, data map[string]string, items []corev1.KeyToPath, mode *int32) {
	t.Helper()
	if len(items) == 0 {
		for k := range data {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			t.Fatalf("the ConfigMap has no key %s", it.Key)
		}
		m := fileMode(mode)
		if it.Mode != nil {
			m = os.FileMode(*it.Mode)
		}
		writeFile(t, filepath.Join(dir, it.Path), []byte(v), m)
	}
}

func writeFile(t *testing.T, file string, data []byte, mode os.FileMode) {
	t.Helper()
	mustMkdir(t, filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	mustChmod(t, file, mode)
}

func mustMkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, mode); err != nil {
		t.Fatal(err)
	}
}

func mustChmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// testCA is a throw-away self-signed CA certificate (PEM), the cluster CA
// of the sandbox's kube-root-ca.crt.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sandbox-cluster-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
