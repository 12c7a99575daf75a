// Package realnode starts a one-node Kubernetes cluster on this machine, as
// an admin would run one, for the chart's real-node test: etcd,
// kube-apiserver, kube-controller-manager and a default kube-scheduler,
// containerd 2 with Debian's runc and a bridge network of Debian's CNI
// plugins, and a kubelet, all in one directory with their own ports,
// sockets and logs.
// Stop takes it all down again and says what it could not: nothing stays
// running or mounted, and the kernel settings the kubelet changes are put
// back.
//
// One file: Start and Stop mirror each other (every program, network namespace
// and sysctl Start sets up, Stop takes down or puts back), and reading them
// side by side is how one checks nothing stays behind.
package realnode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Binaries are the cluster's programs, built from the Go module proxy at the
// Kubernetes version the repository pins (tools/dev/test.sh builds them).
type Binaries struct {
	Etcd, APIServer, ControllerManager, Scheduler, Kubelet, Kubectl string
	// Containerd is containerd 2 (image volumes need it: Debian's 1.6
	// cannot mount them), with its containerd-shim-runc-v2 and ctr beside
	// it; runc is Debian's.
	Containerd string
}

// Cluster is the running cluster.
type Cluster struct {
	Dir        string
	Kubeconfig string // the admin's (system:masters)
	// Containerd is containerd's socket (ctr -a, CONTAINERD_ADDRESS).
	Containerd string
	NodeName   string
	NodeIP     string
	logs       string
	procs      []*process // in start order
	// scheduler is the cluster's default kube-scheduler, which places the
	// chart's own pods; StopDefaultScheduler ends it.
	scheduler   *process
	sysctls     map[string]string // the kernel settings before the kubelet ran
	netnsBefore map[string]bool   // /run/netns before containerd ran
	undo        []func() error    // network rules, in the order added
	bins        Binaries
}

// The kernel settings the kubelet sets at start (its
// setupKernelTunables): restored by Stop.
var kubeletSysctls = []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"}

const (
	// serviceCIDR is the cluster's service range, and apiServerServiceIP
	// the address in-cluster clients (kube-scheduler in its pod) dial: no
	// kube-proxy runs here, so a DNAT rule stands in for it.
	serviceCIDR        = "10.233.0.0/24"
	apiServerServiceIP = "10.233.0.1"
	podCIDR            = "10.234.0.0/24"
	bridgeName         = "schedplug-rn0"
	ruleComment        = "schedplug-realnode"
)

// Start brings the cluster up in dir and waits until its node is Ready.
// On error the caller still calls Stop.
func Start(dir string, bins Binaries, pauseArchive string, logf func(string, ...any)) (*Cluster, error) {
	c := &Cluster{Dir: dir, logs: filepath.Join(dir, "logs"), NodeName: "localhost", bins: bins}
	for _, b := range []string{bins.Etcd, bins.APIServer, bins.ControllerManager, bins.Scheduler, bins.Kubelet, bins.Kubectl,
		bins.Containerd, bins.runtimeTool("containerd-shim-runc-v2"), bins.runtimeTool("ctr")} {
		if _, err := os.Stat(b); err != nil {
			return c, fmt.Errorf("%v: build the cluster's binaries first (bash tools/dev/test.sh builds them into build/go)", err)
		}
	}
	for _, tool := range []string{"runc", "iptables", "ip", "/usr/lib/cni/bridge"} {
		if _, err := exec.LookPath(tool); err != nil {
			return c, fmt.Errorf("%s is not installed: the real-node test needs Debian's runc, containernetworking-plugins, iptables and iproute2 (bash tools/dev/install-deps.sh)", tool)
		}
	}
	if err := os.MkdirAll(c.logs, 0o755); err != nil {
		return c, err
	}
	ip, err := nodeIP()
	if err != nil {
		return c, err
	}
	c.NodeIP = ip
	ports, err := freePorts(6)
	if err != nil {
		return c, err
	}
	etcdClient, etcdPeer, apiPort, kcmPort, schedPort, kubeletPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]

	p, err := newPKI(filepath.Join(dir, "pki"))
	if err != nil {
		return c, err
	}
	server := fmt.Sprintf("https://%s:%d", ip, apiPort)
	if err := p.issue("apiserver", "kube-apiserver", nil, "localhost", "127.0.0.1", ip, apiServerServiceIP,
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"); err != nil {
		return c, err
	}
	for _, u := range [][3]string{
		{"admin", "realnode-admin", "system:masters"},
		{"kubelet", "system:node:" + c.NodeName, "system:nodes"},
		{"controller-manager", "system:kube-controller-manager", ""},
		{"scheduler", "system:kube-scheduler", ""},
	} {
		var groups []string
		if u[2] != "" {
			groups = []string{u[2]}
		}
		if err := p.issue(u[0], u[1], groups); err != nil {
			return c, err
		}
		if _, err := p.kubeconfig(u[0], server); err != nil {
			return c, err
		}
	}
	if err := p.serviceAccountKey(); err != nil {
		return c, err
	}
	c.Kubeconfig = p.path("admin.kubeconfig")

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	if err := c.start("etcd", bins.Etcd, "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeer),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeer),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", etcdPeer)); err != nil {
		return c, err
	}
	if err := c.start("kube-apiserver", bins.APIServer,
		"--etcd-servers="+etcdURL, "--bind-address="+ip, "--advertise-address="+ip,
		"--secure-port="+strconv.Itoa(apiPort),
		"--tls-cert-file="+p.path("apiserver.crt"), "--tls-private-key-file="+p.path("apiserver.key"),
		"--client-ca-file="+p.path("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+p.path("sa.pub"), "--service-account-signing-key-file="+p.path("sa.key"),
		"--service-cluster-ip-range="+serviceCIDR, "--authorization-mode=Node,RBAC",
		// The node is named localhost: kubectl logs and exec reach its
		// kubelet by that name.
		"--kubelet-preferred-address-types=Hostname,InternalIP",
		"--kubelet-client-certificate="+p.path("admin.crt"), "--kubelet-client-key="+p.path("admin.key")); err != nil {
		return c, err
	}
	if err := c.waitFor("kube-apiserver to serve", 90*time.Second, func() error {
		_, err := c.Kubectl("get", "--raw", "/readyz")
		return err
	}); err != nil {
		return c, err
	}
	// Without the controller manager no Deployment makes pods and no
	// service account gets a token or the root CA.
	kcm := p.path("controller-manager.kubeconfig")
	if err := c.start("kube-controller-manager", bins.ControllerManager,
		"--kubeconfig="+kcm, "--authentication-kubeconfig="+kcm, "--authorization-kubeconfig="+kcm,
		"--root-ca-file="+p.path("ca.crt"), "--service-account-private-key-file="+p.path("sa.key"),
		"--use-service-account-credentials=true", "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(kcmPort)); err != nil {
		return c, err
	}
	// The default scheduler holds the default lease (kube-system/kube-scheduler),
	// as on a kubeadm control plane.
	sched := p.path("scheduler.kubeconfig")
	if err := c.start("default-scheduler", bins.Scheduler,
		"--kubeconfig="+sched, "--authentication-kubeconfig="+sched, "--authorization-kubeconfig="+sched,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(schedPort)); err != nil {
		return c, err
	}
	c.scheduler = c.procs[len(c.procs)-1]

	c.netnsBefore = netNamespaces()
	if err := c.startContainerd(); err != nil {
		return c, err
	}
	if err := c.ImportImage(pauseArchive); err != nil {
		return c, err
	}
	if err := c.serviceRoute(ip, apiPort); err != nil {
		return c, err
	}
	if c.sysctls, err = readSysctls(); err != nil {
		return c, err
	}
	if err := c.startKubelet(p, kubeletPort); err != nil {
		return c, err
	}
	if err := c.waitFor("node "+c.NodeName+" to be Ready", 120*time.Second, func() error {
		out, err := c.Kubectl("get", "node", c.NodeName, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "True" {
			return fmt.Errorf("Ready is %q", out)
		}
		return nil
	}); err != nil {
		return c, err
	}
	// The kubelet sets its kernel settings once, at start: put the
	// machine's back now rather than run the test with kernel.panic=10.
	if err := writeSysctls(c.sysctls); err != nil {
		return c, err
	}
	logf("cluster up in %s: node %s (%s), API server %s, containerd %s", dir, c.NodeName, ip, server, c.Containerd)
	return c, nil
}

// runtimeTool is a program that comes with containerd.
func (b Binaries) runtimeTool(name string) string {
	return filepath.Join(filepath.Dir(b.Containerd), name)
}

func (c *Cluster) start(name, bin string, args ...string) error {
	return c.startWithEnv(nil, name, bin, args...)
}

func (c *Cluster) startWithEnv(env []string, name, bin string, args ...string) error {
	p, err := startProcess(c.logs, env, name, bin, args...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

func (c *Cluster) startContainerd() error {
	d := filepath.Join(c.Dir, "containerd")
	cni := filepath.Join(c.Dir, "cni")
	for _, sub := range []string{d, filepath.Join(cni, "net.d")} {
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
	}
	c.Containerd = filepath.Join(d, "containerd.sock")
	// restrict_oom_score_adj: the kubelet asks for OOM score adjustments
	// that need CAP_SYS_RESOURCE, which these machines do not grant.
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
`, filepath.Join(d, "root"), filepath.Join(d, "state"), c.Containerd, PauseImage, filepath.Join(cni, "net.d"))
	if err := os.WriteFile(filepath.Join(d, "config.toml"), []byte(config), 0o644); err != nil {
		return err
	}
	network := map[string]any{
		"cniVersion": "1.0.0", "name": "schedplug-realnode",
		"plugins": []any{
			map[string]any{"type": "bridge", "bridge": bridgeName, "isGateway": true, "ipMasq": false,
				"ipam": map[string]any{"type": "host-local", "ranges": [][]map[string]string{{{"subnet": podCIDR}}},
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}}, "dataDir": filepath.Join(cni, "ipam")}},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
			map[string]any{"type": "loopback"},
		},
	}
	data, _ := json.MarshalIndent(network, "", "  ")
	if err := os.WriteFile(filepath.Join(cni, "net.d", "10-realnode.conflist"), data, 0o644); err != nil {
		return err
	}
	// containerd finds its shim on PATH.
	path := "PATH=" + filepath.Dir(c.bins.Containerd) + ":" + os.Getenv("PATH")
	if err := c.startWithEnv([]string{path}, "containerd", c.bins.Containerd, "--config", filepath.Join(d, "config.toml")); err != nil {
		return err
	}
	return c.waitFor("containerd to serve", 30*time.Second, func() error {
		_, err := c.Ctr("version")
		return err
	})
}

// serviceRoute sends what dials the kubernetes service to the API server,
// as kube-proxy would: from the node (host-network pods) and from pods.
// The firewall as it was (IPv4 and IPv6) is restored by Stop, which also
// removes what the kubelet adds there. The rules themselves are removed by
// their comment, before and after: a snapshot taken before the nat table
// existed does not mention it, so restoring it leaves them, and a rule
// left by an earlier cluster (or a run killed before Stop) that comes first
// in its chain sends the service's connections to a port nobody serves.
func (c *Cluster) serviceRoute(ip string, port int) error {
	if err := removeServiceRules(); err != nil {
		return err
	}
	for _, family := range []string{"iptables", "ip6tables"} {
		saved, err := exec.Command(family + "-save").Output()
		if err != nil {
			return fmt.Errorf("saving the firewall rules (%s-save): %w", family, err)
		}
		c.undo = append(c.undo, func() error {
			restore := exec.Command(family + "-restore")
			restore.Stdin = bytes.NewReader(saved)
			if out, err := restore.CombinedOutput(); err != nil {
				return fmt.Errorf("restoring the firewall rules (%s-restore): %v: %s", family, err, out)
			}
			return nil
		})
	}
	c.undo = append(c.undo, removeServiceRules)
	for _, chain := range []string{"OUTPUT", "PREROUTING"} {
		rule := []string{"-t", "nat", "-I", chain, "1", "-d", apiServerServiceIP + "/32", "-p", "tcp", "--dport", "443",
			"-m", "comment", "--comment", ruleComment, "-j", "DNAT", "--to-destination", fmt.Sprintf("%s:%d", ip, port)}
		if out, err := exec.Command("iptables", rule...).CombinedOutput(); err != nil {
			return fmt.Errorf("adding the iptables rule for the kubernetes service: %v: %s", err, out)
		}
	}
	return nil
}

// removeServiceRules deletes every nat rule that carries ruleComment.
func removeServiceRules() error {
	for _, chain := range []string{"OUTPUT", "PREROUTING"} {
		out, err := exec.Command("iptables", "-t", "nat", "-S", chain).CombinedOutput()
		if err != nil {
			return fmt.Errorf("listing the nat rules of %s (iptables -t nat -S %s): %v: %s", chain, chain, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 2 || fields[0] != "-A" || !strings.Contains(line, "--comment "+ruleComment) {
				continue
			}
			del := append([]string{"-t", "nat", "-D"}, fields[1:]...)
			if out, err := exec.Command("iptables", del...).CombinedOutput(); err != nil {
				return fmt.Errorf("removing the nat rule %q: %v: %s", line, err, out)
			}
		}
	}
	return nil
}

func (c *Cluster) startKubelet(p *pki, port int) error {
	d := filepath.Join(c.Dir, "kubelet")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	// failCgroupV1: these machines have cgroup v1. The eviction thresholds
	// are low because the test shares a disk that may be mostly full.
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %q}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%s
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
port: %d
readOnlyPort: 0
healthzPort: 0
resolvConf: /etc/resolv.conf
makeIPTablesUtilChains: false
# How soon a ConfigMap update reaches the mounted files (default 1m).
syncFrequency: 10s
`, p.path("ca.crt"), c.Containerd, port)
	if err := os.WriteFile(filepath.Join(d, "config.yaml"), []byte(config), 0o644); err != nil {
		return err
	}
	return c.start("kubelet", c.bins.Kubelet, "--config="+filepath.Join(d, "config.yaml"),
		"--kubeconfig="+p.path("kubelet.kubeconfig"), "--hostname-override="+c.NodeName,
		"--node-ip="+c.NodeIP, "--root-dir="+filepath.Join(d, "root"), "--cert-dir="+filepath.Join(d, "pki"))
}

// StopDefaultScheduler ends the cluster's default kube-scheduler, as an
// admin moves its static pod away before schedplug takes its place.
func (c *Cluster) StopDefaultScheduler() {
	c.scheduler.stop(10 * time.Second)
}

// Kubectl runs kubectl as the admin and returns its standard output.
func (c *Cluster) Kubectl(args ...string) (string, error) {
	cmd := exec.Command(c.bins.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Ctr runs containerd's ctr in the kubelet's namespace.
func (c *Cluster) Ctr(args ...string) (string, error) {
	out, err := exec.Command(c.bins.runtimeTool("ctr"), append([]string{"-a", c.Containerd, "-n", "k8s.io"}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Env is what a shell following the guide needs to reach this cluster.
func (c *Cluster) Env() []string {
	return []string{"KUBECONFIG=" + c.Kubeconfig, "CONTAINERD_ADDRESS=" + c.Containerd, "CONTAINERD_NAMESPACE=k8s.io"}
}

// waitFor polls check until it passes, a daemon exits or timeout passes.
func (c *Cluster) waitFor(what string, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		for _, p := range c.procs {
			if done, perr := p.exited(); done && p != c.scheduler {
				return fmt.Errorf("waiting for %s: %s exited (%v); the end of %s:\n%s", what, p.name, perr, p.log, p.tail(20))
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not happen within %s: %v (logs in %s)", what, timeout, err, c.logs)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Stop takes the cluster down: the pods' containers and sandboxes first
// (through the kubelet, so their networks are torn down), then the
// daemons, then whatever is still mounted or running under Dir, the network
// rules and the bridge; last the kernel settings. It returns every step
// that failed, and what it found left behind.
func (c *Cluster) Stop() error {
	var errs []error
	if c.Kubeconfig != "" && len(c.procs) > 0 {
		errs = append(errs, c.drain())
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(15 * time.Second)
	}
	if c.Containerd != "" {
		for _, pid := range processesMentioning(c.Containerd) {
			if proc, err := os.FindProcess(pid); err == nil {
				_ = proc.Kill()
			}
		}
	}
	for _, m := range mountsUnder(c.Dir) {
		if out, err := exec.Command("umount", "-l", m).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("unmounting %s: %v: %s", m, err, out))
		}
	}
	// A pod's network namespace, should its sandbox not have been stopped.
	for _, ns := range c.newNetNamespaces() {
		_ = exec.Command("umount", ns).Run()
		if err := os.Remove(ns); err != nil {
			errs = append(errs, fmt.Errorf("removing the pod network namespace %s: %w", ns, err))
		}
	}
	for _, u := range c.undo {
		errs = append(errs, u())
	}
	if err := exec.Command("ip", "link", "show", bridgeName).Run(); err == nil {
		if out, err := exec.Command("ip", "link", "delete", bridgeName).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("deleting the bridge %s: %v: %s", bridgeName, err, out))
		}
	}
	if c.sysctls != nil {
		errs = append(errs, writeSysctls(c.sysctls))
	}
	time.Sleep(200 * time.Millisecond)
	if left := processesMentioning(c.Dir); len(left) > 0 {
		errs = append(errs, fmt.Errorf("processes still running from %s: %v", c.Dir, left))
	}
	if left := mountsUnder(c.Dir); len(left) > 0 {
		errs = append(errs, fmt.Errorf("still mounted under %s: %v", c.Dir, left))
	}
	return errors.Join(errs...)
}

// drain deletes every pod and waits until containerd runs none of them, so
// the kubelet has stopped their sandboxes and torn down their networks.
func (c *Cluster) drain() error {
	for _, kind := range []string{"deployments,replicasets,daemonsets,statefulsets,jobs", "pods"} {
		if _, err := c.Kubectl("delete", kind, "--all", "--all-namespaces", "--grace-period=1", "--wait=false"); err != nil {
			return err
		}
	}
	return c.waitFor("the node's pods to stop", 90*time.Second, func() error {
		out, err := c.Ctr("tasks", "ls")
		if err != nil {
			return err
		}
		running := 0
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[2] == "RUNNING" {
				running++
			}
		}
		if running > 0 {
			return fmt.Errorf("%d containers still run", running)
		}
		// The kubelet stops a sandbox's pause container before it tears
		// down the pod's network.
		if ns := c.newNetNamespaces(); len(ns) > 0 {
			return fmt.Errorf("the network namespaces %v are still there", ns)
		}
		return nil
	})
}

// netNamespaces lists the named network namespaces (ip netns, CNI).
func netNamespaces() map[string]bool {
	m := map[string]bool{}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		m[filepath.Join("/run/netns", e.Name())] = true
	}
	return m
}

// newNetNamespaces are the ones the cluster's pods made.
func (c *Cluster) newNetNamespaces() []string {
	if c.netnsBefore == nil {
		return nil
	}
	var out []string
	for ns := range netNamespaces() {
		if !c.netnsBefore[ns] {
			out = append(out, ns)
		}
	}
	return out
}

func readSysctls() (map[string]string, error) {
	m := map[string]string{}
	for _, k := range kubeletSysctls {
		v, err := os.ReadFile(filepath.Join("/proc/sys", k))
		if err != nil {
			return nil, fmt.Errorf("reading the kernel setting %s: %w", k, err)
		}
		m[k] = strings.TrimSpace(string(v))
	}
	return m, nil
}

func writeSysctls(m map[string]string) error {
	var errs []error
	for k, v := range m {
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restoring the kernel setting %s=%s: %w", k, v, err))
		}
	}
	return errors.Join(errs...)
}

// nodeIP is the machine's first IPv4 address that is not loopback: the
// API server's advertised address must not be (its endpoint reconciler
// refuses 127.0.0.0/8).
func nodeIP() (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 || strings.HasPrefix(i.Name, bridgeName) {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				return n.IP.String(), nil
			}
		}
	}
	return "", errors.New("this machine has no IPv4 address outside loopback for the API server to advertise")
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
