//go:build k8s1.35 || k8s1.36

package testenv

import apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"

// disableInvariantChecks: before 1.37 the test apiserver has no invariant
// checks at teardown (invariants.go), so there is nothing to turn off.
func disableInvariantChecks(*apiservertesting.TestServerInstanceOptions) {}
