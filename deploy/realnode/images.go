package realnode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"schedplug.dev/deploy/image"
)

// PauseImage is the sandbox image's name: the one the guide's example
// workload also runs, so neither is pulled from a registry.
const PauseImage = "registry.k8s.io/pause:3.10.2"

// BuildPauseImage compiles ./realnode/pause (static) and packs it as
// PauseImage into dir/pause.oci.tar.
func BuildPauseImage(deployDir, dir string) (string, error) {
	bin := filepath.Join(dir, "pause")
	cmd := exec.Command("go", "build", "-o", bin, "./realnode/pause")
	cmd.Dir = deployDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the pause program: %v: %s", err, out)
	}
	t := image.NewTree()
	if err := t.CopyFile("/pause", bin); err != nil {
		return "", err
	}
	s := image.Spec{
		Name:       PauseImage,
		Layers:     []image.Layer{{Tree: t, Comment: "pause, built by the real-node test"}},
		User:       "65535:65535",
		Entrypoint: []string{"/pause"},
		Created:    time.Unix(0, 0),
	}
	img, err := image.Build(s)
	if err != nil {
		return "", err
	}
	archive := filepath.Join(dir, "pause.oci.tar")
	return archive, image.WriteArchive(img, s.Name, s.Created, archive)
}

// ImportImage loads an OCI archive into the kubelet's containerd namespace.
func (c *Cluster) ImportImage(archive string) error {
	_, err := c.Ctr("images", "import", archive)
	return err
}

// TagByDigest gives the loaded image name (repository:tag) its
// repository@digest name too: what a pull by digest from a registry
// leaves, so pods that pin the digest find the image on the node.
func (c *Cluster) TagByDigest(name, digest string) error {
	repo := name
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		repo = name[:i]
	}
	_, err := c.Ctr("images", "tag", "--force", name, repo+"@"+digest)
	return err
}
