package session

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// The watch: right after each Handshake the shim opens the host's
// WatchSession stream and holds it for the session's life. The host sends
// its identity at once, again when it changes, and a heartbeat meanwhile;
// the stream ends when the session or the host does. That is how the shim
// learns that a host exited, restarted or was cut off without waiting for
// a scheduling call, which a cycle answered from kept verdicts never makes:
// the session ends, every answer kept from it stops counting
// (Session.Trusted), and the cycles that follow call a new session or meet
// the failure policy. The stream also brings the plugins' decisions about
// pods their Permit made wait (Hooks.WaitingPods).

// silentHeartbeats is how many heartbeats the host may miss before the
// shim takes it for gone.
const silentHeartbeats = 3

// defaultHeartbeat is assumed until the host's first event says its own.
const defaultHeartbeat = 2 * time.Second

func (c *Client) watch(ctx context.Context, s *Session) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.ended:
		case <-c.closed:
		}
		cancel()
	}()
	why := c.follow(ctx, s, cancel)
	if why != "" && !s.Ended() {
		c.lose(ctx, s, why)
	}
}

// follow reads the stream until it ends and says why it did ("" when the
// session ended first or the host cannot watch).
func (c *Client) follow(ctx context.Context, s *Session, cancel context.CancelFunc) string {
	silent := time.AfterFunc(silentHeartbeats*defaultHeartbeat, cancel)
	defer silent.Stop()
	stream, err := c.grpc.WatchSession(ctx, &pb.WatchSessionRequest{SessionId: s.ID})
	for err == nil {
		var ev *pb.SessionEvent
		if ev, err = stream.Recv(); err != nil {
			break
		}
		beat := time.Duration(ev.GetHeartbeatMs()) * time.Millisecond
		if beat <= 0 {
			beat = defaultHeartbeat
		}
		silent.Reset(silentHeartbeats * beat)
		if !s.noteEvent(ev) {
			return "the host answering the session is another process"
		}
		if d := ev.GetWaitingPods(); len(d) > 0 && c.hooks.WaitingPods != nil {
			c.hooks.WaitingPods(ctx, d)
		}
	}
	select {
	case <-c.closed:
		return ""
	default:
	}
	if s.Ended() {
		return ""
	}
	switch status.Code(err) {
	case codes.Unimplemented:
		klog.FromContext(ctx).Info("schedplug-host does not serve WatchSession (an older release); no verdict is kept beyond its cycle with it", "session", s.ID)
		return ""
	case codes.Canceled:
		return "the host was silent for " + (silentHeartbeats * defaultHeartbeat).String() + " or more"
	case codes.FailedPrecondition:
		return "the host no longer knows the session"
	}
	return "the host's watch stream ended: " + status.Convert(err).Message()
}

// noteEvent takes a watch event: the session is watched from its first
// one on; a new build brings the plugins as the host reports them now.
func (s *Session) noteEvent(ev *pb.SessionEvent) bool {
	if !s.noteAnswer(ev.GetIdentity()) {
		return false
	}
	if len(ev.GetPlugins()) > 0 {
		s.setPlugins(ev.GetPlugins())
	}
	s.watched.Store(true)
	return true
}
