package image

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Bundle is a directory of plugins as the bundle image carries them, made
// by `schedplug bundle` (stripped copies, each loaded with the host's own
// checks, manifest.json, and the SHA256SUMS schedplug-host enforces with
// --plugin-sha256).
type Bundle struct {
	Plugins      []BundlePlugin
	ManifestJSON []byte
	// Sums is sha256sum's format: "DIGEST  FILE.so" per line.
	Sums []byte
}

// BundlePlugin is one entry of manifest.json.
type BundlePlugin struct {
	File       string `json:"file"`
	Name       string `json:"name"`
	Version    string `json:"version"`
	ABIVersion int    `json:"abiVersion"`
	Size       int64  `json:"size"`
	SHA256     string `json:"sha256"`
	path       string
}

// BundleSchemaVersion is the manifest format this builder understands.
const BundleSchemaVersion = 1

// ReadBundle runs `schedplug bundle dir -o work` and reads what it wrote.
// The CLI is the one place that decides what ships, so a bundle made by an
// admin by hand and the bundle image agree to the byte.
func ReadBundle(cli, dir, work string) (*Bundle, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(cli, "bundle", "--json", dir, "-o", work)
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		return nil, fmt.Errorf("%s bundle %s: %v\n%s", cli, dir, err, stderr.String())
	}
	b := &Bundle{}
	var err error
	if b.ManifestJSON, err = os.ReadFile(filepath.Join(work, BundleManif)); err != nil {
		return nil, err
	}
	if b.Sums, err = os.ReadFile(filepath.Join(work, BundleSums)); err != nil {
		return nil, err
	}
	var m struct {
		SchemaVersion int            `json:"schemaVersion"`
		Plugins       []BundlePlugin `json:"plugins"`
	}
	if err := json.Unmarshal(b.ManifestJSON, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(work, BundleManif), err)
	}
	if m.SchemaVersion != BundleSchemaVersion {
		return nil, fmt.Errorf("%s writes bundle manifests of schema %d; this builder reads %d: use the CLI of the same schedplug build",
			cli, m.SchemaVersion, BundleSchemaVersion)
	}
	for i := range m.Plugins {
		p := &m.Plugins[i]
		p.path = filepath.Join(work, p.File)
		data, err := os.ReadFile(p.path)
		if err != nil {
			return nil, err
		}
		if got := sha256Hex(data); got != p.SHA256 || int64(len(data)) != p.Size {
			return nil, fmt.Errorf("%s: the manifest says %d bytes with SHA-256 %s, the file has %d bytes with %s",
				p.path, p.Size, p.SHA256, len(data), got)
		}
	}
	b.Plugins = m.Plugins
	return b, nil
}
