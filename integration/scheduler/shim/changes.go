package shim

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// The node-table delta reads only the NodeInfos of the nodes marked as
// changed (nodetable.Table.MarkChanged) when the shim learns of the
// changes as kube-scheduler's cache does: from the informers' events on
// pods and nodes, besides the nodes kube-scheduler reserves. Any event of
// a pod bound to a node or of a node changes that node's NodeInfo in
// kube-scheduler's cache, so each marks the node. Without the informers
// (no handle, as in unit tests) every delta reads every NodeInfo.

// watchNodeChanges marks the nodes the informers' events touch, once per
// manager (the profiles share one informer factory).
func (m *Manager) watchNodeChanges(f informers.SharedInformerFactory) {
	if f == nil {
		return
	}
	m.watchOnce.Do(func() {
		mark := func(name string) {
			if name != "" {
				m.NodeChanged(name)
			}
		}
		pods := cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { mark(podNode(obj)) },
			UpdateFunc: func(old, cur any) { mark(podNode(old)); mark(podNode(cur)) },
			DeleteFunc: func(obj any) { mark(podNode(obj)) },
		}
		nodes := cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { mark(nodeName(obj)) },
			UpdateFunc: func(_, cur any) { mark(nodeName(cur)) },
			DeleteFunc: func(obj any) { mark(nodeName(obj)) },
		}
		if _, err := f.Core().V1().Pods().Informer().AddEventHandler(pods); err != nil {
			return
		}
		if _, err := f.Core().V1().Nodes().Informer().AddEventHandler(nodes); err != nil {
			return
		}
		m.tracker.Host().TrackNodeChanges()
	})
}

// NodeChanged says that the node's NodeInfo in kube-scheduler's cache
// changed: the next node-table delta reads it. The informers' events do
// it; a caller that changes the cache directly (a benchmark) says so here.
func (m *Manager) NodeChanged(name string) { m.tracker.Host().NodeChanged(name) }

// podNode is the node an informer's pod object is bound to ("" for none).
func podNode(obj any) string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if p, ok := obj.(*v1.Pod); ok {
		return p.Spec.NodeName
	}
	return ""
}

// nodeName is the name of an informer's node object ("" for none).
func nodeName(obj any) string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if n, ok := obj.(*v1.Node); ok {
		return n.Name
	}
	return ""
}
