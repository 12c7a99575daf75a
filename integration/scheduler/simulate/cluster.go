package simulate

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
)

var podsResource = v1.SchemeGroupVersion.WithResource("pods")

// cluster is the in-memory API kube-scheduler runs against: client-go's
// fake clientset holding the dump's objects, with binding done as the API
// server does it (spec.nodeName and the PodScheduled condition). It counts
// the pod writes and the pod events the scheduler's informer delivered,
// so the simulation knows when kube-scheduler has seen everything.
type cluster struct {
	client  *fake.Clientset
	history *history
	writes  atomic.Int64 // pod changes made through the client
	seen    atomic.Int64 // pod events delivered by the informer
}

// newCluster holds the nodes, the namespaces of the pods and the pods
// already bound (they are the nodes' load from the start).
func newCluster(nodes []*v1.Node, bound []*v1.Pod, namespaces []string, hist *history) (*cluster, error) {
	c := &cluster{client: fake.NewClientset(), history: hist}
	tracker := c.client.Tracker()
	for _, ns := range namespaces {
		if err := tracker.Add(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, err
		}
	}
	for _, n := range nodes {
		if err := tracker.Add(n); err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	for _, p := range bound {
		if err := tracker.Add(p); err != nil {
			return nil, fmt.Errorf("pod %s: %w", key(p), err)
		}
	}
	// Prepended, so binding (added last) runs first.
	c.client.PrependReactor("*", "pods", c.countWrites)
	c.client.PrependReactor("create", "pods", c.bind)
	return c, nil
}

// countWrites applies pod changes to the tracker itself, to count the
// ones that succeed (each makes one watch event) and note deletions.
func (c *cluster) countWrites(action clienttesting.Action) (bool, runtime.Object, error) {
	switch action.GetVerb() {
	case "create", "update", "patch", "delete":
	default:
		return false, nil, nil
	}
	_, obj, err := clienttesting.ObjectReaction(c.client.Tracker())(action)
	if err == nil {
		c.writes.Add(1)
		if d, ok := action.(clienttesting.DeleteAction); ok {
			c.history.deleted(d.GetNamespace() + "/" + d.GetName())
		}
	}
	return true, obj, err
}

// bind does what the API server does for pods/binding.
func (c *cluster) bind(action clienttesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "binding" {
		return false, nil, nil
	}
	b, ok := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
	if !ok {
		return true, nil, fmt.Errorf("pods/binding with a %T", action.(clienttesting.CreateAction).GetObject())
	}
	obj, err := c.client.Tracker().Get(podsResource, b.Namespace, b.Name)
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*v1.Pod).DeepCopy()
	if pod.Spec.NodeName != "" {
		return true, nil, apierrors.NewConflict(podsResource.GroupResource(), b.Name, fmt.Errorf("pod %s is already bound to %q", key(pod), pod.Spec.NodeName))
	}
	pod.Spec.NodeName = b.Target.Name
	podutil.UpdatePodCondition(&pod.Status, &v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now()})
	if err := c.client.Tracker().Update(podsResource, pod, b.Namespace); err != nil {
		return true, nil, err
	}
	c.writes.Add(1)
	c.history.bound(key(pod), b.Target.Name)
	return true, b, nil
}

// follow counts the pod events the informer delivers after its first list.
func (c *cluster) follow(informer cache.SharedIndexInformer) (cache.ResourceEventHandlerRegistration, error) {
	return informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			if !initial {
				c.seen.Add(1)
			}
		},
		UpdateFunc: func(_, _ any) { c.seen.Add(1) },
		DeleteFunc: func(any) { c.seen.Add(1) },
	})
}

// caughtUp: the informer delivered every pod change made so far.
func (c *cluster) caughtUp() bool { return c.writes.Load() == c.seen.Load() }

// create adds a pending pod, no faster than the informer takes the events
// (the fake watch holds only 100).
func (c *cluster) create(ctx context.Context, pod *v1.Pod) error {
	for c.writes.Load()-c.seen.Load() > 50 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	_, err := c.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	return err
}
