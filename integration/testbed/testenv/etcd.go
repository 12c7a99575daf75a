package testenv

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Etcd is an embedded, single-member etcd serving on 127.0.0.1 with a
// throw-away data directory. It runs in this process, so tests and the demo
// need no etcd binary (Debian's etcd-server 3.4 is older than what
// Kubernetes 1.37 supports).
type Etcd struct {
	ClientURL string
	server    *embed.Etcd
	dir       string
}

// StartEtcd starts etcd with its data under a new directory inside parentDir
// and waits until it serves clients.
func StartEtcd(parentDir string) (*Etcd, error) {
	for attempt := 1; ; attempt++ {
		e, err := startEtcd(parentDir)
		// The ports were free when picked; another process may have bound
		// one since.
		if err == nil || attempt == portAttempts || !strings.Contains(err.Error(), "address already in use") {
			return e, err
		}
	}
}

func startEtcd(parentDir string) (*Etcd, error) {
	dir, err := os.MkdirTemp(parentDir, "etcd-")
	if err != nil {
		return nil, fmt.Errorf("creating the etcd data directory in %s: %w", parentDir, err)
	}
	ports, err := freePorts(2)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}

	cfg := embed.NewConfig()
	cfg.Dir = dir
	// A test store is never restarted or kept: skipping fsync makes every
	// write (each pod binding, each event) much cheaper.
	cfg.UnsafeNoFsync = true
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting embedded etcd on %s: %w", clientURL.String(), err)
	}
	select {
	case <-server.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		server.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("embedded etcd on %s was not ready after 60s", clientURL.String())
	}
	return &Etcd{ClientURL: clientURL.String(), server: server, dir: dir}, nil
}

// Stop shuts etcd down and removes its data.
func (e *Etcd) Stop() {
	e.server.Close()
	os.RemoveAll(e.dir)
}

// portAttempts bounds the starts of a process whose port another process
// took between the pick and the bind.
const portAttempts = 5

// freePorts asks the kernel for n unused TCP ports on 127.0.0.1. They are
// free now, not when the process they are for binds them (kube-scheduler
// does seconds after its start): on a busy machine another process can
// take one first. The callers detect exactly that failure in what the
// process reports (portTaken) and start again on new ports.
func freePorts(n int) ([]int, error) {
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free TCP port on 127.0.0.1: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// freePort is freePorts(1) as a string.
func freePort() (string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return "", err
	}
	return strconv.Itoa(ports[0]), nil
}

// portTaken reports whether a process's log has a line that says the
// address was in use, naming addr.
func portTaken(log, addr string) bool {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, addr) && strings.Contains(line, "address already in use") {
			return true
		}
	}
	return false
}
