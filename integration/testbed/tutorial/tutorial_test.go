// Package tutorial tests docs/tutorial.md by following it.
package tutorial

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"schedplug.dev/integration/testbed/testenv"
)

// block is one fenced code block of the tutorial.
type block struct {
	line int    // of the opening fence, counted from 1
	kind string // "file", "step", "output" or "" (not used by the test)
	path string // for "file": where the reader creates it
	text string
}

var fence = regexp.MustCompile("^```([A-Za-z0-9_+-]*)(.*)$")

// parse returns the fenced blocks of a Markdown file, with their markers:
// "```lang file=PATH" (a file the reader creates), "```sh step" (commands
// the reader runs) and "```text output" (lines the step before prints).
func parse(markdown string) ([]block, error) {
	var blocks []block
	var cur *block
	var body []string
	scanner := bufio.NewScanner(strings.NewReader(markdown))
	for n := 1; scanner.Scan(); n++ {
		line := scanner.Text()
		if cur != nil {
			if strings.TrimSpace(line) == "```" {
				cur.text = strings.Join(body, "\n") + "\n"
				blocks = append(blocks, *cur)
				cur, body = nil, nil
			} else {
				body = append(body, line)
			}
			continue
		}
		m := fence.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		b := block{line: n}
		for _, word := range strings.Fields(m[2]) {
			switch {
			case strings.HasPrefix(word, "file="):
				b.kind, b.path = "file", strings.TrimPrefix(word, "file=")
			case word == "step" || word == "output":
				b.kind = word
			default:
				return nil, fmt.Errorf("line %d: unknown marker %q after ```%s (use file=PATH, step or output)", n, word, m[1])
			}
		}
		cur = &b
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: the code block is never closed", cur.line)
	}
	return blocks, scanner.Err()
}

// matchOutput checks that the lines of `want` appear in `got` in order,
// each within one line of got; a line "..." stands for any lines. It
// returns "" or what is missing.
func matchOutput(got, want string) string {
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	at := 0
	for _, w := range strings.Split(strings.TrimRight(want, "\n"), "\n") {
		w = strings.TrimRight(w, " ")
		if strings.TrimSpace(w) == "..." || w == "" {
			continue
		}
		found := false
		for ; at < len(lines); at++ {
			if strings.Contains(strings.TrimRight(lines[at], " "), w) {
				found = true
				at++
				break
			}
		}
		if !found {
			return fmt.Sprintf("the line %q (or the lines before it, in this order) is not in the output", w)
		}
	}
	return ""
}

// logicLines counts the lines of a C or C++ source that are not blank,
// comments or #include lines.
func logicLines(src string) int {
	n := 0
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#include") ||
			(strings.HasPrefix(t, "/*") && strings.HasSuffix(t, "*/")) {
			continue
		}
		n++
	}
	return n
}

// TestTutorial follows docs/tutorial.md in an empty directory: it writes
// the files the reader creates and runs the reader's commands, verbatim
// from the file, with SCHEDPLUG set to this repository (whose build/ the
// test command has made: the schedplug CLI, schedplug-host and
// kube-scheduler). The demo step starts a kube-apiserver and the scheduler
// for real.
func TestTutorial(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"build/tools/schedplug/schedplug", "build/host/schedplug-host"} {
		if _, err := os.Stat(filepath.Join(root, bin)); err != nil {
			t.Fatalf("the tutorial needs the repository's build: %v; build it first (tools/dev/test.sh or tools/dev/demo.sh do)", err)
		}
	}
	doc := filepath.Join(root, "docs", "tutorial.md")
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parse(string(text))
	if err != nil {
		t.Fatalf("docs/tutorial.md: %v", err)
	}

	// What the tutorial promises, kept true: the C++ plugin's logic and
	// its CMake lines, and that every stage is a step the test runs.
	var steps strings.Builder
	for _, b := range blocks {
		switch {
		case b.kind == "file" && b.path == "gpu-pack/gpu_pack.cpp":
			if n := logicLines(b.text); n > 25 {
				t.Errorf("docs/tutorial.md:%d: the C++ plugin has %d lines of logic; the tutorial promises at most 25", b.line, n)
			}
		case b.kind == "file" && strings.HasSuffix(b.path, "CMakeLists.txt"):
			n := 0
			for _, line := range strings.Split(b.text, "\n") {
				t := strings.TrimSpace(line)
				if t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "cmake_minimum_required(") && !strings.HasPrefix(t, "project(") {
					n++
				}
			}
			if n > 3 {
				t.Errorf("docs/tutorial.md:%d: %s has %d lines after the preamble; the tutorial promises 3", b.line, b.path, n)
			}
		case b.kind == "step":
			steps.WriteString(b.text)
		}
	}
	for _, want := range []string{"cmake --install", "ctest --test-dir gpu-pack/build", "ctest --test-dir gpu-pack-c/build",
		"schedplug\" check", "schedplug\" simulate", "--explain", "tools/dev/demo.sh\" --plugins", "strip",
		"cargo test --offline", "rust.txt"} {
		if !strings.Contains(steps.String(), want) {
			t.Errorf("docs/tutorial.md: no step runs %q any more; the test follows only the marked blocks", want)
		}
	}

	dir := t.TempDir()
	env := append(os.Environ(), "SCHEDPLUG="+root,
		// demo.sh's step logs, so they do not replace the test command's own.
		"SCHEDPLUG_LOG_DIR="+filepath.Join(dir, ".logs"))
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	work := filepath.Join(dir, "gpu-tutorial")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	last, lastLine := "", 0
	for _, b := range blocks {
		switch b.kind {
		case "file":
			path := filepath.Join(work, filepath.FromSlash(b.path))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.text), 0o644); err != nil {
				t.Fatal(err)
			}
		case "step":
			stepStart := time.Now()
			cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", b.text)
			cmd.Dir, cmd.Env = work, env
			out, err := cmd.CombinedOutput()
			t.Logf("docs/tutorial.md:%d: step took %s:\n%s\n%s", b.line, time.Since(stepStart).Round(time.Second), b.text, out)
			if err != nil {
				t.Fatalf("docs/tutorial.md:%d: the step failed (%v); its commands and output are above", b.line, err)
			}
			last, lastLine = string(out), b.line
		case "output":
			if lastLine == 0 {
				t.Fatalf("docs/tutorial.md:%d: an output block before any step", b.line)
			}
			if problem := matchOutput(last, b.text); problem != "" {
				t.Errorf("docs/tutorial.md:%d: the output of the step at line %d differs from the tutorial: %s", b.line, lastLine, problem)
			}
		}
	}
	t.Logf("the whole tutorial took %s", time.Since(start).Round(time.Second))
}
