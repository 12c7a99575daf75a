//go:build k8s1.38

package testenv

import "k8s.io/ktesting"

// TB is what upstream's in-process kube-apiserver logs to; 1.38 moved it
// from k8s.io/kubernetes/test/utils/ktesting (ktesting.go) into its own
// module.
type TB = ktesting.TB
