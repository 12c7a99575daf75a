//go:build !k8s1.35 && !k8s1.36

package testenv

import apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"

// disableInvariantChecks turns off the checks that scrape the apiserver's
// metrics at teardown (1.37 added them) and fail the test on unrelated
// apiserver internals; they are not what we test.
func disableInvariantChecks(opts *apiservertesting.TestServerInstanceOptions) {
	opts.DisableInvariantChecks = true
}
