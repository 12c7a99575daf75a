package image

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Spec is one image: its layers (lowest first) and its run configuration.
type Spec struct {
	// Name is the reference docker/podman/ctr give the loaded image,
	// e.g. localhost/schedplug/schedplug-host:0.1.0.
	Name   string
	Layers []Layer
	// User is uid:gid; images never run as root.
	User       string
	Entrypoint []string
	Cmd        []string
	Env        []string
	Volumes    []string
	Labels     map[string]string
	// Created dates the image and every file in it (from the commit, so a
	// rebuild of the same commit gives the same digest).
	Created time.Time
}

// Layer is one filesystem layer and the history line that explains it.
type Layer struct {
	Tree    *Tree
	Comment string
}

// Build assembles the OCI image (OCI media types throughout).
func Build(s Spec) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	created := v1.Time{Time: s.Created.UTC().Truncate(time.Second)}
	for _, l := range s.Layers {
		data, err := l.Tree.Tar(s.Created)
		if err != nil {
			return nil, err
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, fmt.Errorf("%s: layer %q: %w", s.Name, l.Comment, err)
		}
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:     layer,
			MediaType: types.OCILayer,
			History:   v1.History{Created: created, CreatedBy: "schedplug-image", Comment: l.Comment},
		})
		if err != nil {
			return nil, fmt.Errorf("%s: adding layer %q: %w", s.Name, l.Comment, err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = created
	cf.Config.User = s.User
	cf.Config.Entrypoint = s.Entrypoint
	cf.Config.Cmd = s.Cmd
	cf.Config.Env = s.Env
	cf.Config.WorkingDir = "/"
	cf.Config.Labels = s.Labels
	if len(s.Volumes) > 0 {
		cf.Config.Volumes = map[string]struct{}{}
		for _, v := range s.Volumes {
			cf.Config.Volumes[v] = struct{}{}
		}
	}
	return mutate.ConfigFile(img, cf)
}

// WriteArchive writes img as an OCI image layout packed in one tar file
// with a docker-archive manifest.json beside the index (what `docker
// load`, `podman load` and `ctr import` read), naming it
// name in the index. The archive is the same bytes for the same image.
func WriteArchive(img v1.Image, name string, created time.Time, file string) error {
	dir, err := os.MkdirTemp(filepath.Dir(file), ".oci-layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("writing the OCI layout for %s: %w", name, err)
	}
	err = p.AppendImage(img,
		layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"}),
		layout.WithAnnotations(map[string]string{
			// ctr import and podman load name the image after these.
			"io.containerd.image.name":          name,
			"org.opencontainers.image.ref.name": name,
		}))
	if err != nil {
		return fmt.Errorf("writing %s into the OCI layout: %w", name, err)
	}
	if err := writeDockerManifest(img, name, dir); err != nil {
		return fmt.Errorf("writing the docker-archive manifest.json for %s: %w", name, err)
	}
	return tarDir(dir, created, file)
}

// writeDockerManifest adds the manifest.json of the docker-archive format,
// pointing at the layout's own blobs as `docker save` has written it since
// Docker 25: Docker's classic image store loads only archives that have it,
// while podman and containerd read the OCI index.
func writeDockerManifest(img v1.Image, name, dir string) error {
	cfg, err := img.ConfigName()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	d := tarball.Descriptor{Config: "blobs/sha256/" + cfg.Hex, RepoTags: []string{name}}
	for _, l := range layers {
		h, err := l.Digest()
		if err != nil {
			return err
		}
		d.Layers = append(d.Layers, "blobs/sha256/"+h.Hex)
	}
	data, err := json.Marshal(tarball.Manifest{d})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644)
}

// tarDir packs dir into file: sorted entries, owner 0:0, one mtime.
func tarDir(dir string, mtime time.Time, file string) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	tmp := file + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	w := tar.NewWriter(out)
	for _, p := range names {
		rel, _ := filepath.Rel(dir, p)
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime.UTC().Truncate(time.Second), Mode: 0o644}
		if st.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
		} else {
			h.Typeflag, h.Size = tar.TypeReg, st.Size()
		}
		if err := w.WriteHeader(h); err != nil {
			return err
		}
		if !st.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if _, err := w.Write(data); err != nil {
				return err
			}
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
