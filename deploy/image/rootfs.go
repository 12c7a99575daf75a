package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Tree is the content of one image layer: absolute paths inside the image
// to regular files, directories and symlinks. Its tar form is the same
// bytes for the same content: entries sorted by path, every parent
// directory listed, owner 0:0 and one fixed modification time.
type Tree struct {
	entries map[string]*tar.Header
	data    map[string][]byte
}

// NewTree returns an empty tree.
func NewTree() *Tree {
	return &Tree{entries: map[string]*tar.Header{}, data: map[string][]byte{}}
}

func clean(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("image path %q is not absolute", p)
	}
	c := path.Clean(p)
	if c == "/" {
		return "", fmt.Errorf("image path %q names the root", p)
	}
	return strings.TrimPrefix(c, "/"), nil
}

func (t *Tree) put(h *tar.Header, data []byte) error {
	name, err := clean(h.Name)
	if err != nil {
		return err
	}
	if old, ok := t.entries[name]; ok {
		if old.Typeflag == tar.TypeDir && h.Typeflag == tar.TypeDir {
			return nil
		}
		return fmt.Errorf("image path /%s added twice", name)
	}
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if old, ok := t.entries[dir]; ok && old.Typeflag != tar.TypeDir {
			return fmt.Errorf("image path /%s is below /%s, which is not a directory", name, dir)
		}
		if _, ok := t.entries[dir]; !ok {
			t.entries[dir] = &tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755}
		}
	}
	h.Name = name
	if h.Typeflag == tar.TypeDir {
		h.Name += "/"
	}
	t.entries[name] = h
	t.data[name] = data
	return nil
}

// File adds a regular file with the given bytes and permission bits.
func (t *Tree) File(p string, data []byte, mode int64) error {
	return t.put(&tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(data))}, data)
}

// CopyFile adds the file at src (symlinks followed) under p, keeping only
// whether it is executable: 0755 or 0644.
func (t *Tree) CopyFile(p, src string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("reading %s for image path %s: %w", src, p, err)
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	mode := int64(0o644)
	if st.Mode()&0o111 != 0 {
		mode = 0o755
	}
	return t.File(p, data, mode)
}

// Dir adds a directory with the given permission bits.
func (t *Tree) Dir(p string, mode int64) error {
	return t.put(&tar.Header{Name: p, Typeflag: tar.TypeDir, Mode: mode}, nil)
}

// Symlink adds a symbolic link p pointing at target.
func (t *Tree) Symlink(p, target string) error {
	return t.put(&tar.Header{Name: p, Typeflag: tar.TypeSymlink, Linkname: target, Mode: 0o777}, nil)
}

// Has reports whether p is in the tree.
func (t *Tree) Has(p string) bool {
	name, err := clean(p)
	if err != nil {
		return false
	}
	_, ok := t.entries[name]
	return ok
}

// Paths lists the tree's regular files and symlinks, sorted.
func (t *Tree) Paths() []string {
	var out []string
	for name, h := range t.entries {
		if h.Typeflag != tar.TypeDir {
			out = append(out, "/"+name)
		}
	}
	sort.Strings(out)
	return out
}

// Tar returns the tree as an uncompressed tar stream, every entry owned by
// 0:0 and dated mtime.
func (t *Tree) Tar(mtime time.Time) ([]byte, error) {
	names := make([]string, 0, len(t.entries))
	for name := range t.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, name := range names {
		h := *t.entries[name]
		h.ModTime = mtime.UTC().Truncate(time.Second)
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := w.WriteHeader(&h); err != nil {
			return nil, fmt.Errorf("tar header for /%s: %w", name, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := w.Write(t.data[name]); err != nil {
				return nil, err
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Extract writes the tree into dir as a container runtime unpacks a layer:
// files, directories and symlinks at their paths below dir, with their
// permission bits, owned by the caller. A later tree extracted into the same
// dir adds to it and replaces its files.
func (t *Tree) Extract(dir string) error {
	names := make([]string, 0, len(t.entries))
	for name := range t.entries {
		names = append(names, name)
	}
	sort.Strings(names) // parents first
	for _, name := range names {
		h := t.entries[name]
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(name, "/")))
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		switch {
		case err != nil:
		case h.Typeflag == tar.TypeDir:
			if err = os.MkdirAll(p, 0o755); err == nil {
				err = os.Chmod(p, os.FileMode(h.Mode))
			}
		case h.Typeflag == tar.TypeSymlink:
			os.Remove(p)
			err = os.Symlink(h.Linkname, p)
		default:
			os.Remove(p)
			if err = os.WriteFile(p, t.data[name], 0o600); err == nil {
				err = os.Chmod(p, os.FileMode(h.Mode))
			}
		}
		if err != nil {
			return fmt.Errorf("extracting image path /%s into %s: %w", name, dir, err)
		}
	}
	return nil
}

// Extract writes every layer of the image into dir, lowest first: the
// image's root filesystem.
func (s Spec) Extract(dir string) error {
	for _, l := range s.Layers {
		if err := l.Tree.Extract(dir); err != nil {
			return err
		}
	}
	return nil
}
