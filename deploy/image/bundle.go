package image

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Bundle is a directory of plugins as the bundle image carries them:
// stripped copies, a manifest and the SHA-256 list schedplug-host enforces
// with --plugin-sha256.
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

type inspected struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	SHA256     string `json:"sha256"`
	ABIVersion int    `json:"abi_version"`
	Error      string `json:"error"`
}

// ReadBundle strips a copy of every .so in dir into work, checks each with
// `schedplug inspect` (the loader's own checks, in a child process) and
// describes them.
func ReadBundle(cli, dir, work string) (*Bundle, error) {
	sos, err := filepath.Glob(filepath.Join(dir, "*.so"))
	if err != nil {
		return nil, err
	}
	if len(sos) == 0 {
		return nil, fmt.Errorf("no .so files in %s: build the plugins first (cmake --build build)", dir)
	}
	sort.Strings(sos)
	b := &Bundle{}
	var sums strings.Builder
	for _, so := range sos {
		s, err := strip(so, work)
		if err != nil {
			return nil, err
		}
		out, err := exec.Command(cli, "inspect", "--json", s).Output()
		var info inspected
		if jerr := json.Unmarshal(out, &info); jerr != nil || err != nil || info.Error != "" {
			return nil, fmt.Errorf("%s is not a plugin schedplug-host can load (%s inspect: %v %s)", so, cli, err, info.Error)
		}
		data, err := os.ReadFile(s)
		if err != nil {
			return nil, err
		}
		if got := sha256Hex(data); got != info.SHA256 {
			return nil, fmt.Errorf("%s: inspect reports SHA-256 %s, the file has %s", s, info.SHA256, got)
		}
		b.Plugins = append(b.Plugins, BundlePlugin{
			File: filepath.Base(so), Name: info.Name, Version: info.Version, ABIVersion: info.ABIVersion,
			Size: int64(len(data)), SHA256: info.SHA256, path: s,
		})
		fmt.Fprintf(&sums, "%s  %s\n", info.SHA256, filepath.Base(so))
	}
	b.Sums = []byte(sums.String())
	m, err := json.MarshalIndent(struct {
		SchemaVersion int            `json:"schemaVersion"`
		Plugins       []BundlePlugin `json:"plugins"`
	}{1, b.Plugins}, "", "  ")
	if err != nil {
		return nil, err
	}
	b.ManifestJSON = append(m, '\n')
	return b, nil
}
