//go:build !k8s1.38

package testenv

import "k8s.io/kubernetes/test/utils/ktesting"

// TB is what upstream's in-process kube-apiserver logs to: from
// k8s.io/kubernetes/test/utils/ktesting up to 1.37; 1.38 moved it into its
// own module, k8s.io/ktesting (ktesting_k8s1.38.go).
type TB = ktesting.TB
