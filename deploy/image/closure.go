package image

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// LibraryClosure returns the absolute paths of every shared library (and
// the dynamic loader) the ELF files need, as the system's dynamic loader
// resolves them here (ldd). A library it cannot find is an error naming
// the file that needs it.
func LibraryClosure(files ...string) ([]string, error) {
	seen := map[string]bool{}
	for _, f := range files {
		out, err := exec.Command("ldd", f).CombinedOutput()
		text := string(out)
		if err != nil {
			if strings.Contains(text, "not a dynamic executable") || strings.Contains(text, "statically linked") {
				continue
			}
			return nil, fmt.Errorf("ldd %s: %v\n%s", f, err, text)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.Contains(line, "statically linked") {
				continue
			}
			if strings.Contains(line, "=> not found") {
				return nil, fmt.Errorf("%s needs %s, which the dynamic loader does not find on this machine: install it or fix the library path", f, strings.Fields(line)[0])
			}
			var p string
			if i := strings.Index(line, "=> "); i >= 0 {
				p = strings.Fields(line[i+3:])[0]
			} else {
				p = strings.Fields(line)[0]
			}
			if !strings.HasPrefix(p, "/") {
				continue // linux-vdso.so.1: provided by the kernel
			}
			seen[p] = true
		}
	}
	libs := make([]string, 0, len(seen))
	for p := range seen {
		libs = append(libs, p)
	}
	sort.Strings(libs)
	return libs, nil
}

// CheckStatic fails unless file is an ELF executable with no program
// interpreter and no shared library it needs: one that runs in an image
// holding nothing else.
func CheckStatic(file string) error {
	f, err := elf.Open(file)
	if err != nil {
		return fmt.Errorf("%s: not an ELF file: %w", file, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (it has a program interpreter); build it with CGO_ENABLED=0", file)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("%s: reading its dynamic section: %w", file, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("%s needs shared libraries %v; build it with CGO_ENABLED=0", file, libs)
	}
	return nil
}
