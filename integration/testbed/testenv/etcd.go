package testenv

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
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
	dir, err := os.MkdirTemp(parentDir, "etcd-")
	if err != nil {
		return nil, fmt.Errorf("creating the etcd data directory in %s: %w", parentDir, err)
	}
	ports, err := freePorts(2)
	if err != nil {
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

// freePorts asks the kernel for n unused TCP ports on 127.0.0.1. Another
// process could take one before we bind it; on a test machine that is rare.
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
