package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a child process (the host or kube-scheduler) whose stdout and
// stderr go to a log file. Restarting appends to the same file, so a test
// failure can show one continuous log.
type Process struct {
	Name    string
	LogFile string
	bin     string
	args    []string
	env     []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// runStart is where the current run's part of the log file begins.
	runStart int64
}

// NewProcess describes a process; Start runs it.
func NewProcess(name, logFile, bin string, args, extraEnv []string) *Process {
	return &Process{Name: name, LogFile: logFile, bin: bin, args: args, env: append(os.Environ(), extraEnv...)}
}

// AddEnv adds KEY=value entries to the environment of the next Start.
func (p *Process) AddEnv(kv ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.env = append(p.env, kv...)
}

// AddArgs gives the next Start more flags (the host's --record DIR,
// kube-scheduler's --feature-gates, ...).
func (p *Process) AddArgs(args ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.args = append(p.args, args...)
}

// Start runs the process. It dies with its parent (PR_SET_PDEATHSIG), so a
// crashed test never leaves a scheduler or host behind.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !p.exitedLocked() {
		return fmt.Errorf("%s is already running (pid %d)", p.Name, p.cmd.Process.Pid)
	}
	log, err := os.OpenFile(p.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the log file of %s: %w", p.Name, err)
	}
	if st, err := log.Stat(); err == nil {
		p.runStart = st.Size()
	}
	fmt.Fprintf(log, "===== %s: starting %s %s\n", time.Now().Format(time.RFC3339Nano), p.bin, strings.Join(p.args, " "))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = p.env
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s (%s): %w", p.Name, p.bin, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.err = cmd, done, nil
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(log, "===== %s: %s exited: %v\n", time.Now().Format(time.RFC3339Nano), p.Name, exitText(err))
		log.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

func (p *Process) exitedLocked() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Done is closed when the current run of the process ends.
func (p *Process) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Running reports whether the process was started and has not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && !p.exitedLocked()
}

// ExitError is the result of the last run once it ended.
func (p *Process) ExitError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Pid of the current run.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Kill sends SIGKILL (a crash, as far as the peer can tell) and waits for
// the exit.
func (p *Process) Kill() {
	p.signalAndWait(syscall.SIGKILL, 10*time.Second)
}

// Signal sends sig to the current run without waiting (SIGSTOP and
// SIGCONT freeze and thaw it, like a hung process).
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exitedLocked() {
		return fmt.Errorf("%s is not running; cannot send it %v", p.Name, sig)
	}
	return p.cmd.Process.Signal(sig)
}

// Stop sends SIGTERM, waits up to grace, then SIGKILL. It reports whether
// the process exited on SIGTERM alone.
func (p *Process) Stop(grace time.Duration) bool {
	if p.signalAndWait(syscall.SIGTERM, grace) {
		return true
	}
	p.Kill()
	return false
}

func (p *Process) signalAndWait(sig syscall.Signal, wait time.Duration) bool {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return true
	}
	select {
	case <-done:
		return true
	default:
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
		return true
	case <-time.After(wait):
		return false
	}
}

// RunLog is the part of the log file the current (or last) run wrote.
func (p *Process) RunLog() string {
	p.mu.Lock()
	start := p.runStart
	p.mu.Unlock()
	data, err := os.ReadFile(p.LogFile)
	if err != nil || int64(len(data)) < start {
		return ""
	}
	return string(data[start:])
}

// LogTail returns the last n lines of the log file.
func (p *Process) LogTail(n int) string {
	data, err := os.ReadFile(p.LogFile)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.LogFile, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
