package testenv

import (
	"fmt"
	"path"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// ControlPlane is a real kube-apiserver (upstream's in-process test server)
// backed by an embedded etcd. There is no controller-manager and no kubelet:
// tests create Node objects themselves and the scheduler binds pods.
type ControlPlane struct {
	// Config is a privileged (loopback) client config.
	Config *rest.Config
	Client kubernetes.Interface
	// Kubeconfig is a file with the same credentials, for child processes
	// such as kube-scheduler.
	Kubeconfig string
	tearDown   func()
}

// APIServerFlags are the flags every test apiserver gets.
var APIServerFlags = []string{
	// No endpoints reconciler: 127.0.0.1 is not a valid Endpoint address.
	"--endpoint-reconciler-type=none",
	// No controller-manager creates the "default" ServiceAccount, so the
	// ServiceAccount admission plugin would reject every pod.
	// TaintNodesByCondition would give every new node the not-ready taint,
	// which only an update can lift: kube-scheduler could try a pod created
	// right after the nodes while it still sees a node tainted.
	"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
}

// StartControlPlane starts kube-apiserver in this process, storing its data
// in etcd under a fresh prefix, and writes a kubeconfig into workDir.
// tb receives the apiserver's log lines. extraFlags follow APIServerFlags
// (e.g. --feature-gates, --runtime-config); the apiserver runs in this
// process, so its feature gates hold for the process until tb's cleanup.
func StartControlPlane(tb TB, etcd *Etcd, workDir string, extraFlags ...string) (*ControlPlane, error) {
	storage := storagebackend.NewDefaultConfig(path.Join(uuid.New().String(), "registry"), nil)
	storage.Transport.ServerList = []string{etcd.ClientURL}

	opts := apiservertesting.NewDefaultTestServerOptions()
	disableInvariantChecks(opts)
	server, err := apiservertesting.StartTestServer(tb, opts, append(append([]string(nil), APIServerFlags...), extraFlags...), storage)
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver (etcd %s): %w", etcd.ClientURL, err)
	}
	cfg := rest.CopyConfig(server.ClientConfig)
	cfg.Timeout = 30 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		server.TearDownFn()
		return nil, fmt.Errorf("creating a client for the test apiserver at %s: %w", cfg.Host, err)
	}
	kubeconfig := filepath.Join(workDir, "kubeconfig")
	if err := WriteKubeconfig(cfg, kubeconfig); err != nil {
		server.TearDownFn()
		return nil, err
	}
	return &ControlPlane{Config: cfg, Client: client, Kubeconfig: kubeconfig, tearDown: server.TearDownFn}, nil
}

// Stop shuts the apiserver down (etcd is stopped separately).
func (c *ControlPlane) Stop() {
	if c.tearDown != nil {
		c.tearDown()
		c.tearDown = nil
	}
}

// WriteKubeconfig writes cfg (host, CA, server name, bearer token) as a
// kubeconfig file that kube-scheduler and kubectl understand.
func WriteKubeconfig(cfg *rest.Config, file string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.TLSClientConfig.CAData,
		TLSServerName:            cfg.TLSClientConfig.ServerName,
		InsecureSkipTLSVerify:    cfg.TLSClientConfig.Insecure,
	}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		ClientCertificateData: cfg.TLSClientConfig.CertData,
		ClientKeyData:         cfg.TLSClientConfig.KeyData,
	}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kc, file); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", file, err)
	}
	return nil
}
