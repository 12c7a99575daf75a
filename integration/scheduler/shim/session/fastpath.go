package session

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// The fast path (schedplug.proto, "The fast path"): a session's PreFilter
// and PreScore go over a second unix socket of the host as plain
// length-prefixed frames, and the scheduling cycle's goroutine waits for
// the answer itself. Over gRPC the request is written and the answer read
// by gRPC's own goroutines, and on a busy scheduler each hand-off waits for
// a free P (and the network poller notices the answer late): measured at
// 2–4 ms per call for an answer the host computes in 0.4 ms
// (docs/performance.md). Here the caller writes the frame with one system
// call and spins on non-blocking reads for up to FastPathSpin before it
// parks on the poller like any other read.

// DefaultFastPathSpin is how long a cycle's goroutine polls for the host's
// answer before it sleeps. Most answers come within 0.3 ms; the rest are
// calls for which the host's thread waited for a core, and a goroutine
// that parks on the poller wakes late (docs/performance.md: with 3 ms
// instead of 1 ms the 99th percentile of PreFilter halved). Polling yields
// the CPU to other threads between reads, so the longer budget costs
// little.
const DefaultFastPathSpin = 3 * time.Millisecond

// maxFastFrame bounds an answer frame the shim accepts (gRPC's receive
// limit on the other path).
const maxFastFrame = 64 << 20

// FastCall describes one call made over the fast path (for
// Config.OnFastCall): the method, the frame bytes each way (4-byte length
// included) and the wall time from writing the request to parsing the
// answer.
type FastCall struct {
	Method        string
	SentBytes     int
	ReceivedBytes int
	Wall          time.Duration
	// Read is the part of Wall spent reading the answer: waiting for it,
	// then reading it. For a call whose answer is read later than it is
	// sent (a score-only cycle's PreScore, sent from PreFilter and read at
	// PreScore) it is the reader's wait alone.
	Read time.Duration
	Err  error
}

// fastPath is a pool of connections to one host's fast-path socket.
type fastPath struct {
	path   string
	spin   time.Duration
	onCall func(FastCall)

	mu     sync.Mutex
	idle   []*fastConn
	closed bool
}

type fastConn struct {
	conn *net.UnixConn
	raw  syscall.RawConn
	buf  []byte
}

// fastPathFor is the fast path the Handshake offered, or nil: none
// offered, disabled, or a TCP target (the fast path is for a host in the
// same pod).
func fastPathFor(cfg Config, offered string) (*fastPath, error) {
	if offered == "" || cfg.DisableFastPath {
		return nil, nil
	}
	dir, ok := unixTargetDir(cfg.Target)
	if !ok {
		return nil, nil
	}
	if offered != filepath.Base(offered) || offered == "." || offered == ".." {
		return nil, fmt.Errorf("schedplug-host offered the fast-path socket %q, which is not a file name; the fast path is not used", offered)
	}
	spin := cfg.FastPathSpin
	if spin <= 0 {
		spin = DefaultFastPathSpin
	}
	return &fastPath{path: filepath.Join(dir, offered), spin: spin, onCall: cfg.OnFastCall}, nil
}

// unixTargetDir is the directory of a unix-socket gRPC target
// ("unix:///run/schedplug/host.sock", "unix:relative.sock").
func unixTargetDir(target string) (string, bool) {
	var path string
	switch {
	case strings.HasPrefix(target, "unix://"):
		path = strings.TrimPrefix(target, "unix://")
	case strings.HasPrefix(target, "unix:"):
		path = strings.TrimPrefix(target, "unix:")
	default:
		return "", false
	}
	if path == "" {
		return "", false
	}
	return filepath.Dir(path), true
}

// errFastNotSent: the request did not reach the host (no connection, or
// the write failed before the whole frame went out); the caller makes the
// call over gRPC instead.
var errFastNotSent = errors.New("fast path: request not sent")

// errClosedUnanswered: the host ended the connection before the first
// byte of its answer. A host that reads a request always answers it (its
// connection thread writes the answer before it reads again, and stopping
// shuts only the reading side), so it did not run the call; or it exited,
// and what the call was to change went with it.
var errClosedUnanswered = errors.New("the host closed the connection without answering")

// fastUnanswered is the status error of a call that met errClosedUnanswered
// (the same status and text as any failed connection): the hook calls
// make such a call again over gRPC, which the host did not get either.
type fastUnanswered struct{ error }

func (e fastUnanswered) GRPCStatus() *status.Status { return status.Convert(e.error) }
func (e fastUnanswered) Unwrap() error              { return e.error }

func (f *fastPath) get() (*fastConn, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, errFastNotSent
	}
	if n := len(f.idle); n > 0 {
		c := f.idle[n-1]
		f.idle = f.idle[:n-1]
		f.mu.Unlock()
		return c, nil
	}
	f.mu.Unlock()
	conn, err := net.DialTimeout("unix", f.path, time.Second)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFastNotSent, err)
	}
	uc := conn.(*net.UnixConn)
	raw, err := uc.SyscallConn()
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("%w: %v", errFastNotSent, err)
	}
	return &fastConn{conn: uc, raw: raw, buf: make([]byte, 64<<10)}, nil
}

func (f *fastPath) put(c *fastConn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		c.conn.Close()
		return
	}
	f.idle = append(f.idle, c)
}

// close ends the idle connections; calls in progress close theirs when
// they end.
func (f *fastPath) close() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for _, c := range f.idle {
		c.conn.Close()
	}
	f.idle = nil
}

// call sends req and returns the host's answer, its table-version trailer
// (nil when it sent none) and the call's status as an error. An error
// wrapping errFastNotSent means the host never saw the request.
func (f *fastPath) call(ctx context.Context, method string, req *pb.FastRequest) (*pb.FastResponse, *uint64, error) {
	sent, err := f.send(ctx, method, req)
	if err != nil {
		return nil, nil, err
	}
	return sent.receive()
}

// fastSent is a request written to the host whose answer is still to be
// read, on the connection it holds until then.
type fastSent struct {
	f      *fastPath
	c      *fastConn
	method string
	bytes  int
	start  time.Time
	// deadline is the call's (the zero time when it has none).
	deadline time.Time
}

// send writes req; receive reads the answer. An error wrapping
// errFastNotSent means the host never saw the request.
func (f *fastPath) send(ctx context.Context, method string, req *pb.FastRequest) (*fastSent, error) {
	c, err := f.get()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		req.TimeoutMicros = max(time.Until(deadline).Microseconds(), 1)
	}
	frame, err := proto.MarshalOptions{}.MarshalAppend(c.buf[:4], req)
	if err != nil {
		f.put(c)
		return nil, status.Errorf(codes.Internal, "fast path: cannot encode the %s request: %v", method, err)
	}
	binary.LittleEndian.PutUint32(frame, uint32(len(frame)-4))
	c.conn.SetDeadline(deadline) // the zero time (no deadline) when none
	if n, err := c.conn.Write(frame); err != nil {
		c.conn.Close()
		if n == 0 {
			return nil, fmt.Errorf("%w: %v", errFastNotSent, err)
		}
		return nil, f.failed(method, len(frame), 0, start, 0, status.Errorf(codes.Unavailable, "fast path to schedplug-host at %s: writing the %s request failed after %d of %d bytes: %v", f.path, method, n, len(frame), err))
	}
	return &fastSent{f: f, c: c, method: method, bytes: len(frame), start: start, deadline: deadline}, nil
}

// receive reads the answer of a sent request (polling first: the caller
// waits for it now), and returns the connection to the pool.
func (p *fastSent) receive() (*pb.FastResponse, *uint64, error) {
	f, c, method, sent, start := p.f, p.c, p.method, p.bytes, p.start
	reading := time.Now()
	answer, err := c.readFrame(f.spin, p.deadline)
	read := time.Since(reading)
	if err != nil {
		// The host may still answer; the connection cannot be reused.
		c.conn.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// Worded as gRPC words its own deadline, which is what the
			// failure policy's message looks for.
			return nil, nil, f.failed(method, sent, 0, start, read, status.Errorf(codes.DeadlineExceeded, "context deadline exceeded (fast path to schedplug-host at %s: no answer to %s)", f.path, method))
		}
		failed := status.Errorf(codes.Unavailable, "fast path to schedplug-host at %s: the connection failed during %s: %v", f.path, method, err)
		if errors.Is(err, errClosedUnanswered) {
			failed = fastUnanswered{failed}
		}
		return nil, nil, f.failed(method, sent, 0, start, read, failed)
	}
	resp := &pb.FastResponse{}
	if err := proto.Unmarshal(answer, resp); err != nil {
		c.conn.Close()
		return nil, nil, f.failed(method, sent, len(answer)+4, start, read, status.Errorf(codes.Internal, "fast path: the host's answer to %s (%d bytes) is not a schedplug.v1.FastResponse: %v; deploy schedplug-host and kube-scheduler from the same release", method, len(answer), err))
	}
	f.put(c)
	var version *uint64
	if resp.GetHasTableVersion() {
		v := resp.GetTableVersion()
		version = &v
	}
	if resp.GetCode() != int32(codes.OK) {
		err = status.Error(codes.Code(resp.GetCode()), resp.GetMessage())
	}
	f.observe(method, sent, len(answer)+4, start, read, err)
	return resp, version, err
}

func (f *fastPath) failed(method string, sent, received int, start time.Time, read time.Duration, err error) error {
	f.observe(method, sent, received, start, read, err)
	return err
}

func (f *fastPath) observe(method string, sent, received int, start time.Time, read time.Duration, err error) {
	if f.onCall != nil {
		f.onCall(FastCall{Method: method, SentBytes: sent, ReceivedBytes: received, Wall: time.Since(start), Read: read, Err: err})
	}
}

// readFrame returns the next frame's body. It first polls the socket
// without sleeping for up to `spin` (the goroutine keeps its P, so it sees
// the answer as soon as it is there), never past `deadline` (the call's;
// the zero time for none), then waits on the network poller until the
// connection's deadline.
func (c *fastConn) readFrame(spin time.Duration, deadline time.Time) ([]byte, error) {
	var n int
	var rerr error
	spinUntil := time.Now().Add(spin)
	if !deadline.IsZero() && deadline.Before(spinUntil) {
		// Polling is blind to the connection's deadline: a call with less
		// time left than the spin would overrun it.
		spinUntil = deadline
	}
	err := c.raw.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), c.buf)
			if rerr == syscall.EINTR {
				continue
			}
			if rerr != syscall.EAGAIN {
				return true
			}
			if time.Now().After(spinUntil) {
				return false // park on the poller, called again when readable
			}
			// The host's thread, just woken by our write, is often queued
			// on this very CPU (the kernel places a wakee near its waker):
			// let it run rather than spin in its way. The P stays ours.
			syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		}
	})
	if err == nil {
		err = rerr
	}
	if errors.Is(err, syscall.ECONNRESET) || (err == nil && n == 0) {
		// ECONNRESET: closed with our request unread in its buffer.
		return nil, errClosedUnanswered
	}
	if err != nil {
		return nil, err
	}
	for n < 4 {
		m, err := c.conn.Read(c.buf[n:])
		if err != nil {
			return nil, err
		}
		n += m
	}
	size := int(binary.LittleEndian.Uint32(c.buf))
	if size > maxFastFrame {
		return nil, fmt.Errorf("an answer frame of %d bytes is over the shim's limit of %d", size, maxFastFrame)
	}
	if need := 4 + size; need > len(c.buf) {
		grown := make([]byte, need)
		copy(grown, c.buf[:n])
		if need <= 1<<20 {
			c.buf = grown // keep it for the next call
		}
		if _, err := io.ReadFull(c.conn, grown[n:need]); err != nil {
			return nil, err
		}
		return grown[4:need], nil
	}
	if n > 4+size {
		// One answer per request: more is a broken stream.
		return nil, fmt.Errorf("the host sent %d bytes more than the answer", n-4-size)
	}
	if _, err := io.ReadFull(c.conn, c.buf[n:4+size]); err != nil {
		return nil, err
	}
	return c.buf[4 : 4+size], nil
}
