package testenv

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// LogTB lets a program that is not a test (the demo) call upstream test
// helpers such as the in-process apiserver: log lines go to a writer,
// cleanups run when Close is called, and a fatal error panics with its
// message (there is no test to fail).
type LogTB struct {
	name string
	out  io.Writer
	dir  string

	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

// NewLogTB writes log lines to out and makes temp dirs under dir.
func NewLogTB(name string, out io.Writer, dir string) *LogTB {
	return &LogTB{name: name, out: out, dir: dir}
}

// Close runs the registered cleanups, newest first, like testing.T.
func (l *LogTB) Close() {
	l.mu.Lock()
	cleanups := l.cleanups
	l.cleanups = nil
	l.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
}

func (l *LogTB) Attr(key, value string) { l.Logf("attr %s=%s", key, value) }
func (l *LogTB) Chdir(dir string) {
	if err := os.Chdir(dir); err != nil {
		l.Fatal(err)
	}
}
func (l *LogTB) Cleanup(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cleanups = append(l.cleanups, f)
}
func (l *LogTB) Error(args ...any)                 { l.Log(args...); l.Fail() }
func (l *LogTB) Errorf(format string, args ...any) { l.Logf(format, args...); l.Fail() }
func (l *LogTB) Fail() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed = true
}
func (l *LogTB) FailNow() { l.Fail(); panic(l.name + ": fatal error (see " + l.name + " log)") }
func (l *LogTB) Failed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}
func (l *LogTB) Fatal(args ...any) { l.Log(args...); panic(fmt.Sprint(args...)) }
func (l *LogTB) Fatalf(format string, args ...any) {
	l.Logf(format, args...)
	panic(fmt.Sprintf(format, args...))
}
func (l *LogTB) Helper()         {}
func (l *LogTB) Log(args ...any) { fmt.Fprintln(l.out, args...) }
func (l *LogTB) Logf(format string, args ...any) {
	fmt.Fprintf(l.out, format+"\n", args...)
}
func (l *LogTB) Name() string { return l.name }
func (l *LogTB) Setenv(key, value string) {
	old, had := os.LookupEnv(key)
	_ = os.Setenv(key, value)
	l.Cleanup(func() {
		if had {
			_ = os.Setenv(key, old)
		} else {
			_ = os.Unsetenv(key)
		}
	})
}
func (l *LogTB) Skip(args ...any)                 { l.Log(args...) }
func (l *LogTB) Skipf(format string, args ...any) { l.Logf(format, args...) }
func (l *LogTB) SkipNow()                         {}
func (l *LogTB) Skipped() bool                    { return false }
func (l *LogTB) TempDir() string {
	dir, err := os.MkdirTemp(l.dir, "tmp-")
	if err != nil {
		l.Fatal(err)
	}
	l.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
