package cycle

import (
	"context"
	"sync"
	"sync/atomic"
)

// shared is a call made once for the whole scheduling cycle on behalf of
// whichever Filter needs it first; the framework's other Filter workers
// wait for it. The first caller makes it on a context kube-scheduler's
// cancellation of that one Filter does not end (it found enough feasible
// nodes elsewhere): the answer serves the rest of the cycle, preemption's
// dry runs included, and is what the next cycle keeps. The call's own
// deadline bounds it. A waiter whose context ends stops waiting.
type shared[T any] struct {
	mu   sync.Mutex
	done chan struct{}
	val  T
	err  error
	// started and over let the callers after the call (every Filter and
	// Score of the cycle, on many workers) read it without the mutex and
	// the channel; over is set after val and err are.
	started atomic.Bool
	over    atomic.Bool
}

// do returns the call's outcome, making the call if no one has; cancelled
// is set when ctx ended first (the outcome is then unknown here).
func (s *shared[T]) do(ctx context.Context, call func(context.Context) (T, error)) (val T, err error, cancelled bool) {
	if s.over.Load() {
		return s.val, s.err, false
	}
	s.mu.Lock()
	if !s.started.Load() {
		s.started.Store(true)
		s.done = make(chan struct{})
		s.mu.Unlock()
		s.val, s.err = call(context.WithoutCancel(ctx))
		s.over.Store(true)
		close(s.done)
		return s.val, s.err, false
	}
	done := s.done
	s.mu.Unlock()
	select {
	case <-done:
		return s.val, s.err, false
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err(), true
	}
}

// result is the outcome when the call is over.
func (s *shared[T]) result() (val T, err error, over bool) {
	if !s.over.Load() {
		return val, nil, false
	}
	return s.val, s.err, true
}

// begun says whether someone made or is making the call.
func (s *shared[T]) begun() bool { return s.started.Load() }
