//go:build !k8s1.35

package shim

// Reject in the signature of 1.36 on (waitingpod_k8s1.35_test.go).
func (w *fakeWaitingPod) Reject(plugin, msg string) bool {
	w.reject(plugin, msg)
	return true
}
