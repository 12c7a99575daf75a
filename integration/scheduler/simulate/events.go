package simulate

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
)

// eventSink takes the events kube-scheduler emits instead of an
// API server: it keeps which pod preemption evicted for which.
type eventSink struct {
	history *history
}

var _ events.EventRecorderLogger = eventSink{}

func (e eventSink) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if reason != "Preempted" || regarding == nil || related == nil {
		return
	}
	victim, err1 := meta.Accessor(regarding)
	by, err2 := meta.Accessor(related)
	if err1 == nil && err2 == nil {
		e.history.preempted(victim.GetNamespace()+"/"+victim.GetName(), by.GetNamespace()+"/"+by.GetName())
	}
}

func (e eventSink) WithLogger(klog.Logger) events.EventRecorderLogger { return e }
