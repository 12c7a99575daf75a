package image

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Paths inside the images; the chart and config/manifests use the same.
const (
	BinDir       = "/usr/local/bin"
	PluginsDir   = "/etc/schedplug/plugins.d"
	ConfigDir    = "/etc/schedplug/config"
	SocketDir    = "/run/schedplug"
	UID          = 65532
	HostImage    = "schedplug-host"
	SchedImage   = "kube-scheduler"
	BundleImage  = "schedplug-plugins"
	BundleSums   = "SHA256SUMS"
	BundleManif  = "manifest.json"
	defaultRepos = "localhost/schedplug"
)

// Inputs are the build outputs that go into the images and what the labels
// say about them.
type Inputs struct {
	HostBin, CLIBin, SchedulerBin string
	PluginDir                     string
	// Version is schedplug's version (CMake project version); SchedulerVersion
	// the Kubernetes version kube-scheduler is built from.
	Version, SchedulerVersion string
	Revision, Source          string
	// Created is the commit time: a rebuild of one commit gives one digest.
	Created time.Time
	// Repository prefixes the image names (default localhost/schedplug).
	Repository string
	// WorkDir holds stripped copies.
	WorkDir string
	// Minors are kube-scheduler builds for other Kubernetes minors than
	// SchedulerBin's, one more image each (kube-scheduler-<minor>.oci.tar).
	Minors []MinorScheduler
}

// MinorScheduler is kube-scheduler built for one more Kubernetes minor.
type MinorScheduler struct {
	Bin     string
	Version string // the upstream version it is built from, v1.36.3
}

// minorOf is the minor of an upstream version: v1.36.3 -> 1.36.
func minorOf(version string) string {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}

// Result is one written image archive.
type Result struct {
	Name    string
	File    string
	Digest  v1.Hash
	Size    int64 // of the archive
	Content []string
}

// BuildAll builds the host, scheduler and plugin-bundle images into outDir.
func BuildAll(in Inputs, outDir string) ([]Result, error) {
	if in.Created.IsZero() {
		return nil, fmt.Errorf("no creation time: pass the commit time (SOURCE_DATE_EPOCH) so rebuilds are identical")
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	specs, err := Specs(in)
	if err != nil {
		return nil, err
	}
	if in.Repository == "" {
		in.Repository = defaultRepos
	}
	files := []string{HostImage, SchedImage, BundleImage}
	for _, m := range in.Minors {
		minor := in
		minor.SchedulerBin, minor.SchedulerVersion = m.Bin, m.Version
		spec, err := schedulerSpec(minor, nil)
		if err != nil {
			return nil, fmt.Errorf("kube-scheduler for Kubernetes %s: %w", m.Version, err)
		}
		specs = append(specs, spec)
		files = append(files, SchedImage+"-"+minorOf(m.Version))
	}
	var out []Result
	for i, name := range files {
		spec := specs[i]
		img, err := Build(spec)
		if err != nil {
			return nil, err
		}
		file := filepath.Join(outDir, name+".oci.tar")
		if err := WriteArchive(img, spec.Name, in.Created, file); err != nil {
			return nil, err
		}
		dig, err := img.Digest()
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(file)
		if err != nil {
			return nil, err
		}
		var content []string
		for _, l := range spec.Layers {
			content = append(content, l.Tree.Paths()...)
		}
		out = append(out, Result{Name: spec.Name, File: file, Digest: dig, Size: st.Size(), Content: content})
	}
	return out, nil
}

// Specs are the host, scheduler and plugin-bundle images, in that order, as
// BuildAll builds them (the chart's test runs its pod from their roots).
func Specs(in Inputs) ([]Spec, error) {
	if in.Repository == "" {
		in.Repository = defaultRepos
	}
	bundle, err := ReadBundle(in.CLIBin, in.PluginDir, filepath.Join(in.WorkDir, "plugins"))
	if err != nil {
		return nil, err
	}
	var specs []Spec
	for _, specOf := range []func(Inputs, *Bundle) (Spec, error){hostSpec, schedulerSpec, bundleSpec} {
		spec, err := specOf(in, bundle)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

func labels(in Inputs, title, version string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    title,
		"org.opencontainers.image.source":   in.Source,
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": in.Revision,
		"org.opencontainers.image.created":  in.Created.UTC().Format(time.RFC3339),
	}
}

// baseLayer holds the non-root user and the mount points.
func baseLayer(dirs ...string) (Layer, error) {
	t := NewTree()
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nschedplug:x:%d:%d:schedplug:/nonexistent:/sbin/nologin\n", UID, UID)
	group := fmt.Sprintf("root:x:0:\nschedplug:x:%d:\n", UID)
	if err := t.File("/etc/passwd", []byte(passwd), 0o644); err != nil {
		return Layer{}, err
	}
	if err := t.File("/etc/group", []byte(group), 0o644); err != nil {
		return Layer{}, err
	}
	for _, d := range dirs {
		if err := t.Dir(d, 0o755); err != nil {
			return Layer{}, err
		}
	}
	return Layer{Tree: t, Comment: fmt.Sprintf("user schedplug (%d:%d), mount points", UID, UID)}, nil
}

// strip writes a copy of src without symbols into dir.
func strip(src, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if out, err := exec.Command("strip", "--strip-unneeded", "-o", dst, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("strip %s: %v\n%s", src, err, out)
	}
	return dst, nil
}

func hostSpec(in Inputs, b *Bundle) (Spec, error) {
	base, err := baseLayer(PluginsDir, ConfigDir, SocketDir)
	if err != nil {
		return Spec{}, err
	}
	// The plugins are dlopened by the host: what they need must be here too.
	need := []string{in.HostBin, in.CLIBin}
	for _, p := range b.Plugins {
		need = append(need, p.path)
	}
	libs, err := LibraryClosure(need...)
	if err != nil {
		return Spec{}, err
	}
	lt := NewTree()
	var list []string
	for _, lib := range libs {
		if err := lt.CopyFile(lib, lib); err != nil {
			return Spec{}, err
		}
		pkg, version, copyright := debianPackage(lib)
		list = append(list, fmt.Sprintf("%s %s %s", lib, pkg, version))
		doc := "/usr/share/doc/" + pkg + "/copyright"
		if copyright != "" && !lt.Has(doc) {
			if err := lt.CopyFile(doc, copyright); err != nil {
				return Spec{}, err
			}
		}
	}
	if err := lt.File("/usr/share/doc/schedplug/libraries.txt", []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		return Spec{}, err
	}
	app := NewTree()
	for _, bin := range []string{in.HostBin, in.CLIBin} {
		s, err := strip(bin, filepath.Join(in.WorkDir, "bin"))
		if err != nil {
			return Spec{}, err
		}
		if err := app.CopyFile(BinDir+"/"+filepath.Base(bin), s); err != nil {
			return Spec{}, err
		}
	}
	return Spec{
		Name:       in.Repository + "/" + HostImage + ":" + in.Version,
		Layers:     []Layer{base, {Tree: lt, Comment: fmt.Sprintf("the %d shared libraries the host, the CLI and the sample plugins need (ldd), from Debian packages", len(libs))}, {Tree: app, Comment: "schedplug-host and schedplug"}},
		User:       fmt.Sprintf("%d:%d", UID, UID),
		Entrypoint: []string{BinDir + "/schedplug-host"},
		Cmd: []string{"--config=" + ConfigDir + "/scheduler-config.yaml", "--plugins=" + PluginsDir,
			"--listen=unix://" + SocketDir + "/host/host.sock"},
		Env:     []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Volumes: []string{SocketDir},
		Labels:  labels(in, "schedplug-host", in.Version),
		Created: in.Created,
	}, nil
}

func schedulerSpec(in Inputs, _ *Bundle) (Spec, error) {
	if err := CheckStatic(in.SchedulerBin); err != nil {
		return Spec{}, err
	}
	base, err := baseLayer(ConfigDir, SocketDir)
	if err != nil {
		return Spec{}, err
	}
	// Without its symbol table and DWARF; Go's own tables (stack traces,
	// --version) stay.
	stripped, err := strip(in.SchedulerBin, filepath.Join(in.WorkDir, "bin"))
	if err != nil {
		return Spec{}, err
	}
	app := NewTree()
	if err := app.CopyFile(BinDir+"/kube-scheduler", stripped); err != nil {
		return Spec{}, err
	}
	version := in.SchedulerVersion + "-schedplug." + in.Version
	return Spec{
		Name:       in.Repository + "/" + SchedImage + ":" + version,
		Layers:     []Layer{base, {Tree: app, Comment: "kube-scheduler with the schedplug shim (static, stripped)"}},
		User:       fmt.Sprintf("%d:%d", UID, UID),
		Entrypoint: []string{BinDir + "/kube-scheduler"},
		Cmd:        []string{"--config=" + ConfigDir + "/scheduler-config.yaml"},
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Volumes:    []string{SocketDir},
		Labels:     labels(in, "kube-scheduler with schedplug", version),
		Created:    in.Created,
	}, nil
}

func bundleSpec(in Inputs, b *Bundle) (Spec, error) {
	t := NewTree()
	for _, p := range b.Plugins {
		if err := t.CopyFile("/"+p.File, p.path); err != nil {
			return Spec{}, err
		}
	}
	if err := t.File("/"+BundleManif, b.ManifestJSON, 0o644); err != nil {
		return Spec{}, err
	}
	if err := t.File("/"+BundleSums, b.Sums, 0o644); err != nil {
		return Spec{}, err
	}
	var names []string
	for _, p := range b.Plugins {
		names = append(names, p.Name+"@"+p.Version)
	}
	sort.Strings(names)
	l := labels(in, "schedplug plugin bundle", in.Version)
	l["dev.schedplug.plugins"] = strings.Join(names, ",")
	return Spec{
		Name:    in.Repository + "/" + BundleImage + ":" + in.Version,
		Layers:  []Layer{{Tree: t, Comment: "plugins: " + strings.Join(names, ", ")}},
		User:    fmt.Sprintf("%d:%d", UID, UID),
		Labels:  l,
		Created: in.Created,
	}, nil
}

// debianPackage names the Debian package that installed lib, its version
// and its copyright file ("" when dpkg does not know the file).
func debianPackage(lib string) (pkg, version, copyright string) {
	candidates := []string{lib}
	if real, err := filepath.EvalSymlinks(lib); err == nil && real != lib {
		candidates = append(candidates, real)
	}
	for _, c := range candidates {
		out, err := exec.Command("dpkg-query", "-S", c).Output()
		if err != nil {
			continue
		}
		pkg = strings.SplitN(strings.TrimSpace(string(out)), ":", 2)[0]
		v, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output()
		if err != nil {
			continue
		}
		version = string(v)
		base := strings.SplitN(pkg, ":", 2)[0]
		if _, err := os.Stat("/usr/share/doc/" + base + "/copyright"); err == nil {
			copyright = "/usr/share/doc/" + base + "/copyright"
		}
		return base, version, copyright
	}
	return "unknown", "unknown", ""
}

func sha256Hex(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}
