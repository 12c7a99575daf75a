package testenv

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A port another process binds between the pick and the bind (a busy
// machine) costs the host and kube-scheduler a second start on another
// port, not the test.
func TestStartsAgainOnAnotherPortWhenItsPortWasTaken(t *testing.T) {
	hostBin, err := HostBinary()
	if err != nil {
		t.Fatal(err)
	}
	plugins, err := PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	schedBin, err := SchedulerBinary(dir)
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := StartEtcd(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	cp, err := StartControlPlane(t, etcd, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	config := filepath.Join(dir, "scheduler-config.yaml")
	if err := (SchedulerConfig{Kubeconfig: cp.Kubeconfig, Plugins: []NativePlugin{{Name: "HwEncrypt"}}}).WriteFile(config); err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "sp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })

	// take binds the port of url (http://127.0.0.1:N/...) as another
	// process would.
	take := func(url string) {
		t.Helper()
		addr := strings.SplitN(strings.SplitN(url, "://", 2)[1], "/", 2)[0]
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}

	host := NewHost(hostBin, plugins, config, sockDir, filepath.Join(dir, "host.log"))
	if err := host.ServeMetrics(); err != nil {
		t.Fatal(err)
	}
	takenMetrics := host.metricsURL
	take(takenMetrics)
	if err := host.StartAndWait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Stop(10 * time.Second) })
	if host.metricsURL == takenMetrics {
		t.Errorf("the host serves its metrics at %s, the port another process holds", takenMetrics)
	}
	if _, err := host.Metrics(); err != nil {
		t.Errorf("the host's metrics after the second start: %v", err)
	}

	sched, err := NewScheduler(schedBin, config, cp.Kubeconfig, host.Address, filepath.Join(dir, "scheduler-certs"), filepath.Join(dir, "scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	taken := sched.URL
	take(taken)
	if err := sched.StartAndWait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sched.Stop(10 * time.Second) })
	if sched.URL == taken {
		t.Errorf("kube-scheduler serves at %s, the port another process holds", taken)
	}
	for _, p := range []*Process{host.Process, sched.Process} {
		log, err := os.ReadFile(p.LogFile)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(log), "===== "); n != 3 {
			t.Errorf("%s's log shows %d lines of starts and exits, want 3 (two starts, the first one's exit):\n%s", p.Name, n, p.LogTail(40))
		}
	}
}
