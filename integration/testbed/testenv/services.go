package testenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Host is a running schedplug-host.
type Host struct {
	*Process
	// Address is what the shim dials (env SCHEDPLUG_HOST).
	Address    string
	socket     string
	metricsURL string // guarded by mu; "" until ServeMetrics
}

// NewHost prepares schedplug-host serving on a unix socket in sockDir
// (keep it short: unix socket paths are limited to 107 bytes).
func NewHost(bin, pluginDir, configFile, sockDir, logFile string) *Host {
	socket := filepath.Join(sockDir, "host.sock")
	args := []string{"--config", configFile, "--plugins", pluginDir, "--listen", "unix://" + socket}
	return &Host{
		Process: NewProcess("schedplug-host", logFile, bin, args, nil),
		Address: "unix://" + socket,
		socket:  socket,
	}
}

// SetPluginDir makes the next Start load the plugins of dir (a restart
// with other plugin builds).
func (h *Host) SetPluginDir(dir string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.args {
		if h.args[i] == "--plugins" && i+1 < len(h.args) {
			h.args[i+1] = dir
		}
	}
}

// ServeMetrics makes the next Start serve the host's Prometheus metrics on
// a free loopback port, which Metrics then reads.
func (h *Host) ServeMetrics() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	addr := "127.0.0.1:" + port
	for i := range h.args {
		if h.args[i] == "--metrics-listen" && i+1 < len(h.args) {
			h.args[i+1] = addr
			h.metricsURL = "http://" + addr + "/metrics"
			return nil
		}
	}
	h.args = append(h.args, "--metrics-listen", addr)
	h.metricsURL = "http://" + addr + "/metrics"
	return nil
}

// metricsPortTaken reports whether the host's last run could not serve
// its metrics on the port ServeMetrics picked (another process bound it).
func (h *Host) metricsPortTaken() bool {
	h.mu.Lock()
	url := h.metricsURL
	h.mu.Unlock()
	if url == "" {
		return false
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/metrics")
	return strings.Contains(h.RunLog(), "cannot serve metrics on --metrics-listen "+addr)
}

// Metrics returns the host's Prometheus text exposition (after
// ServeMetrics).
func (h *Host) Metrics() (string, error) {
	h.mu.Lock()
	url := h.metricsURL
	h.mu.Unlock()
	if url == "" {
		return "", fmt.Errorf("the host serves no metrics: call ServeMetrics before Start")
	}
	return httpGet(http.DefaultClient, url)
}

// StartAndWait starts the host and waits until its socket accepts
// connections. A start that fails because another process holds the
// metrics port ServeMetrics picked (free when picked, and again after each
// stop of the host) is made again on another port.
func (h *Host) StartAndWait(timeout time.Duration) error {
	for attempt := 1; ; attempt++ {
		err := h.startAndWait(timeout)
		if err == nil || attempt == portAttempts || !h.metricsPortTaken() {
			return err
		}
		if err := h.ServeMetrics(); err != nil {
			return err
		}
	}
}

func (h *Host) startAndWait(timeout time.Duration) error {
	if err := h.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !h.Running() {
			return fmt.Errorf("schedplug-host exited during startup (%v); its log %s ends with:\n%s", h.ExitError(), h.LogFile, h.LogTail(30))
		}
		if conn, err := net.DialTimeout("unix", h.socket, time.Second); err == nil {
			conn.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("schedplug-host did not accept connections on %s within %s; its log %s ends with:\n%s", h.socket, timeout, h.LogFile, h.LogTail(30))
}

// Scheduler is a running kube-scheduler (cmd/kube-scheduler of this module).
type Scheduler struct {
	*Process
	// URL of its secure port, e.g. https://127.0.0.1:12345.
	URL  string
	port string
}

// NewScheduler prepares kube-scheduler with the given configuration, its
// shim pointed at hostAddress. The secure port serves /metrics without
// authentication, so tests can read the shim's counters.
func NewScheduler(bin, configFile, kubeconfig, hostAddress, certDir, logFile string) (*Scheduler, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--config=" + configFile,
		"--bind-address=127.0.0.1",
		"--secure-port=" + port,
		"--cert-dir=" + certDir,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--authentication-skip-lookup",
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
		// Pods rejected while the host was down wait in the unschedulable
		// pool for a cluster event; a real cluster has plenty, a test
		// cluster few. Upstream flushes the pool every 30s; this bounds how
		// long a pod may stay there.
		"--pod-max-in-unschedulable-pods-duration=10s",
		"-v=2",
	}
	env := []string{"SCHEDPLUG_HOST=" + hostAddress}
	return &Scheduler{
		Process: NewProcess("kube-scheduler", logFile, bin, args, env),
		URL:     "https://127.0.0.1:" + port,
		port:    port,
	}, nil
}

// movePort makes the next start serve on another free port.
func (s *Scheduler) movePort() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, a := range s.args {
		if a == "--secure-port="+s.port {
			s.args[i] = "--secure-port=" + port
		}
	}
	s.port, s.URL = port, "https://127.0.0.1:"+port
	return nil
}

var insecureClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, // self-signed test cert
}

// StartAndWait starts the scheduler and waits until /readyz answers ok.
// Its secure port was free when picked, but kube-scheduler binds it only
// seconds after it starts: a start that fails because another process
// took the port meanwhile is made again on another port (URL changes).
func (s *Scheduler) StartAndWait(timeout time.Duration) error {
	for attempt := 1; ; attempt++ {
		err := s.startAndWait(timeout)
		if err == nil || attempt == portAttempts || !portTaken(s.RunLog(), "127.0.0.1:"+s.port) {
			return err
		}
		if err := s.movePort(); err != nil {
			return err
		}
	}
}

func (s *Scheduler) startAndWait(timeout time.Duration) error {
	if err := s.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !s.Running() {
			return fmt.Errorf("kube-scheduler exited during startup (%v); its log %s ends with:\n%s", s.ExitError(), s.LogFile, s.LogTail(40))
		}
		if body, err := s.get("/readyz"); err == nil && strings.TrimSpace(body) == "ok" {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("kube-scheduler was not ready at %s/readyz within %s; its log %s ends with:\n%s", s.URL, timeout, s.LogFile, s.LogTail(40))
}

func (s *Scheduler) get(path string) (string, error) {
	return httpGet(insecureClient, s.URL+path)
}

// httpGet is the body of a GET of url; an error for any status but 200
// (with the body, which says why).
func httpGet(client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("GET %s: HTTP %d: %s", url, resp.StatusCode, body)
	}
	return string(body), nil
}

// Metrics returns the scheduler's Prometheus text exposition.
func (s *Scheduler) Metrics() (string, error) {
	return s.get("/metrics")
}

// cachedNodesMetric is kube-scheduler's count of the nodes its cache
// holds, refreshed every second.
const cachedNodesMetric = `scheduler_cache_size{type="nodes"}`

// WaitForCachedNodes waits until kube-scheduler's cache holds at least n
// nodes. Its pod and node informers watch apart, so a pod created right
// after its nodes may otherwise be scheduled on a cluster that lacks them.
func (s *Scheduler) WaitForCachedNodes(ctx context.Context, n int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "no answer"
	for {
		body, err := s.Metrics()
		switch v, found := MetricSum(body, cachedNodesMetric); {
		case err != nil:
			last = err.Error()
		case !found:
			last = "no " + cachedNodesMetric + " sample"
		case int(v) >= n:
			return nil
		default:
			last = fmt.Sprintf("%d node(s)", int(v))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-scheduler's cache did not hold %d node(s) within %s (last: %s); its log %s ends with:\n%s", n, timeout, last, s.LogFile, s.LogTail(20))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// MetricSum adds up every sample of the named metric (all label sets) in a
// Prometheus text exposition; found is false when no sample exists.
func MetricSum(exposition, name string) (sum float64, found bool) {
	for _, line := range strings.Split(exposition, "\n") {
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue // a longer metric name with the same prefix
		}
		fields := strings.Fields(line[strings.LastIndex(line, "}")+1:])
		if rest[0] == ' ' {
			fields = strings.Fields(rest)
		}
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}
