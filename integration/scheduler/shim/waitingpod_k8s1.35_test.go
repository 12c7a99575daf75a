//go:build k8s1.35

package shim

// Reject in 1.35's signature, without a result (waitingpod_test.go).
func (w *fakeWaitingPod) Reject(plugin, msg string) { w.reject(plugin, msg) }
