package simulate

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler"
)

// settle waits until kube-scheduler has tried every queued pod, holds
// nothing in its active or backoff queue or in flight, and its informer
// delivered every pod change, for settleTime.
func settle(ctx context.Context, sched *scheduler.Scheduler, cl *cluster, hist *history, queued []*v1.Pod, timeout time.Duration) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var quietSince time.Time
	writes := int64(-1)
	for {
		select {
		case <-ctx.Done():
			_, summary := sched.SchedulingQueue.PendingPods()
			waiting := 0
			for _, p := range queued {
				if !hist.done(key(p)) {
					waiting++
				}
			}
			return fmt.Errorf("kube-scheduler did not settle within %s (%d of %d pods never tried; queue %s); give --timeout more time", timeout, waiting, len(queued), summary)
		case <-tick.C:
		}
		idle, err := idle(sched, cl, hist, queued)
		if err != nil {
			return err
		}
		if w := cl.writes.Load(); !idle || w != writes {
			writes, quietSince = w, time.Time{}
			continue
		}
		if quietSince.IsZero() {
			quietSince = time.Now()
		} else if time.Since(quietSince) >= settleTime {
			return nil
		}
	}
}

var queueSummary = regexp.MustCompile(`activeQ:(\d+); backoffQ:(\d+)`)

func idle(sched *scheduler.Scheduler, cl *cluster, hist *history, queued []*v1.Pod) (bool, error) {
	for _, p := range queued {
		if hist.done(key(p)) {
			continue
		}
		// A pod a PreEnqueue plugin holds back (spec.schedulingGates, for
		// one) is never tried until something lets it in.
		if info, ok := sched.SchedulingQueue.GetPod(p.Name, p.Namespace, nil); ok && info.Gated() {
			hist.gated(key(p), info.GatingPlugin)
			continue
		}
		return false, nil
	}
	if len(sched.SchedulingQueue.InFlightPods()) > 0 || !cl.caughtUp() {
		return false, nil
	}
	_, summary := sched.SchedulingQueue.PendingPods()
	m := queueSummary.FindStringSubmatch(summary)
	if m == nil {
		return false, errors.New("cannot read kube-scheduler's queue summary " + strconv.Quote(summary) + "; this build of kube-scheduler-simulate does not match its kube-scheduler version")
	}
	return m[1] == "0" && m[2] == "0", nil
}
