package session

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// connPair is a connected pair of unix sockets: the shim's end as a
// fastConn, the host's as a plain net.Conn.
func connPair(t *testing.T) (*fastConn, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "fast")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	uc := conns[0].(*net.UnixConn)
	raw, err := uc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return &fastConn{conn: uc, raw: raw, buf: make([]byte, 64<<10)}, conns[1]
}

// answerAfter writes a frame of body on host after d.
func answerAfter(host net.Conn, d time.Duration, body string) {
	go func() {
		time.Sleep(d)
		frame := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
		_, _ = host.Write(append(frame, body...))
	}()
}

func TestFastReadGetsAnAnswerWhilePolling(t *testing.T) {
	c, host := connPair(t)
	answerAfter(host, time.Millisecond, "answer")
	got, err := c.readFrame(time.Minute, time.Time{})
	if err != nil || string(got) != "answer" {
		t.Fatalf("readFrame: %q, %v; want the host's answer", got, err)
	}
}

func TestFastReadGetsAnAnswerThatComesAfterTheSpin(t *testing.T) {
	c, host := connPair(t)
	answerAfter(host, 50*time.Millisecond, "late answer")
	got, err := c.readFrame(time.Millisecond, time.Time{})
	if err != nil || string(got) != "late answer" {
		t.Fatalf("readFrame: %q, %v; want the answer read on the network poller", got, err)
	}
}

func TestFastReadStopsAtTheCallsDeadline(t *testing.T) {
	c, _ := connPair(t)
	deadline := time.Now().Add(30 * time.Millisecond)
	c.conn.SetDeadline(deadline)
	start := time.Now()
	_, err := c.readFrame(time.Minute, deadline)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("readFrame with no answer: %v, want the deadline's error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("readFrame returned %v after a deadline of 30ms; polling must not outlast the call's deadline", d)
	}
}

func TestFastReadSeesAHostThatDiesWhileItWaits(t *testing.T) {
	c, host := connPair(t)
	go func() {
		time.Sleep(20 * time.Millisecond)
		host.Close()
	}()
	start := time.Now()
	_, err := c.readFrame(time.Minute, time.Time{})
	if !errors.Is(err, errClosedUnanswered) {
		t.Fatalf("readFrame from a closed connection: %v, want errClosedUnanswered", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("readFrame noticed the closed connection after %v", d)
	}
}
