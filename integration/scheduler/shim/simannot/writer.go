package simannot

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
)

// Defaults of the Writer's Options (SCHEDPLUG_SIMULATOR_ANNOTATIONS_QPS and
// _QUEUE, docs/simulator-annotations.md).
const (
	// DefaultQPS keeps the patches well inside what the API server grants
	// kube-scheduler (its own client defaults to 50 QPS); they go through a
	// client of their own, so binds never wait for them.
	DefaultQPS = 20
	// DefaultQueue pods wait for their patch at most; more are dropped.
	DefaultQueue = 1000
	// patchTimeout bounds one patch.
	patchTimeout = 10 * time.Second
)

// Options configure a Writer.
type Options struct {
	// QPS and Burst limit the patches (0: DefaultQPS, burst QPS).
	QPS   float32
	Burst int
	// Queue is how many pods may wait for their patch (0: DefaultQueue).
	Queue int
	// Budget bounds one pod's annotations (0: DefaultBudget).
	Budget int
}

// Writer patches the results onto the pods, off the scheduling cycle: a
// queue with one entry per pod (a newer result for a waiting pod replaces
// the older one), bounded (a result that finds it full is dropped and
// counted), emptied by a few goroutines, one merge patch per pod, at most
// QPS per second. A pod is patched by one goroutine at a time, so a newer
// result never lands before an older one.
type Writer struct {
	client kubernetes.Interface
	opts   Options
	limit  flowcontrol.RateLimiter
	// forbidden: the first refusal for want of RBAC was logged as an error.
	forbidden sync.Once

	mu       sync.Mutex
	more     *sync.Cond // answers to take, or the writer stopped
	order    []types.UID
	waiting  map[types.UID]*CycleAnswers
	inFlight map[types.UID]bool
	stopped  bool

	cancel    context.CancelFunc
	ctx       context.Context
	closeOnce sync.Once
	workers   sync.WaitGroup
}

// writers patch at once: one patch waits for the API server's answer (a
// few to tens of milliseconds), so one goroutine alone would keep up with
// fewer pods per second than kube-scheduler binds.
const writers = 4

// NewWriter starts a writer patching through client; Close stops it.
func NewWriter(client kubernetes.Interface, opts Options) *Writer {
	w := newWriter(client, opts)
	for range writers {
		w.workers.Add(1)
		go w.run()
	}
	return w
}

// newWriter is a writer whose queue nobody empties yet.
func newWriter(client kubernetes.Interface, opts Options) *Writer {
	if opts.QPS <= 0 {
		opts.QPS = DefaultQPS
	}
	if opts.Burst <= 0 {
		opts.Burst = max(1, int(opts.QPS+0.999))
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	registerMetrics()
	w := &Writer{client: client, opts: opts, limit: flowcontrol.NewTokenBucketRateLimiter(opts.QPS, opts.Burst),
		waiting: map[types.UID]*CycleAnswers{}, inFlight: map[types.UID]bool{}}
	w.more = sync.NewCond(&w.mu)
	w.ctx, w.cancel = context.WithCancel(context.Background())
	return w
}

// Enqueue hands over a finished cycle's answers; it never blocks.
func (w *Writer) Enqueue(r *CycleAnswers) {
	uid := r.Pod().UID
	w.mu.Lock()
	defer w.mu.Unlock()
	switch _, waits := w.waiting[uid]; {
	case waits:
		w.waiting[uid] = r
		results.WithLabelValues("replaced").Inc()
		return
	case len(w.waiting) >= w.opts.Queue:
		results.WithLabelValues("dropped").Inc()
		return
	}
	w.waiting[uid] = r
	w.order = append(w.order, uid)
	queued.Set(float64(len(w.waiting)))
	w.more.Signal()
}

// Close stops the writer; results still waiting are not written, and a
// patch under way is cancelled.
func (w *Writer) Close() {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.stopped = true
		w.more.Broadcast()
		w.mu.Unlock()
		w.cancel()
	})
	w.workers.Wait()
}

func (w *Writer) run() {
	defer w.workers.Done()
	for {
		r := w.take()
		if r == nil {
			return
		}
		if err := w.limit.Wait(w.ctx); err == nil {
			w.write(w.ctx, r)
		}
		w.finish(r)
	}
}

// take waits for a cycle's answers and takes them; nil once the writer stopped.
func (w *Writer) take() *CycleAnswers {
	w.mu.Lock()
	defer w.mu.Unlock()
	for !w.stopped {
		if r := w.next(); r != nil {
			return r
		}
		w.more.Wait()
	}
	return nil
}

// next takes the latest answers of the oldest waiting pod that is not
// being patched; nil when there is none. Callers hold w.mu.
func (w *Writer) next() *CycleAnswers {
	for i, uid := range w.order {
		if w.inFlight[uid] {
			continue
		}
		w.order = append(w.order[:i], w.order[i+1:]...)
		r := w.waiting[uid]
		delete(w.waiting, uid)
		w.inFlight[uid] = true
		queued.Set(float64(len(w.waiting)))
		return r
	}
	return nil
}

// finish ends r's patch; newer answers of the pod may go now.
func (w *Writer) finish(r *CycleAnswers) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.inFlight, r.Pod().UID)
	if _, waits := w.waiting[r.Pod().UID]; waits {
		w.more.Signal()
	}
}

// write patches r onto its pod: the annotations, and the pod's uid, which
// makes the API server refuse the patch if the name now belongs to
// another pod.
func (w *Writer) write(ctx context.Context, r *CycleAnswers) {
	pod := r.Pod()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         pod.UID,
		"annotations": r.Result().Annotations(w.opts.Budget),
	}})
	if err != nil {
		results.WithLabelValues("failed").Inc()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, patchTimeout)
	defer cancel()
	start := time.Now()
	_, err = w.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, body, metav1.PatchOptions{})
	patchSeconds.Observe(time.Since(start).Seconds())
	patchBytes.Observe(float64(len(body)))
	switch {
	case err == nil:
		results.WithLabelValues("written").Inc()
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err) && uidChanged(err):
		// The pod is gone, or another pod took its name.
		results.WithLabelValues("gone").Inc()
	case apierrors.IsForbidden(err):
		results.WithLabelValues("failed").Inc()
		w.forbidden.Do(func() {
			klog.Background().Error(err, "schedplug: kube-scheduler may not patch pods, so no pod gets the simulator annotations its profile asks for; grant it patch on pods (config/manifests/40-simulator-annotations-rbac.yaml, docs/simulator-annotations.md)", "pod", klog.KRef(pod.Namespace, pod.Name))
		})
	default:
		results.WithLabelValues("failed").Inc()
		klog.Background().V(2).Info("schedplug: could not write the simulator annotations; the pod keeps its earlier ones", "pod", klog.KRef(pod.Namespace, pod.Name), "err", err)
	}
}

// uidChanged says whether an Invalid answer is about the uid the patch
// carries (the API server words another pod's uid as an immutable field).
func uidChanged(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}
