package testenv

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// NodeResources is what a fake node offers.
type NodeResources struct {
	CPU    string
	Memory string
	Pods   int64
}

// MakeNode builds a Ready node with the given capacity and labels. There is
// no kubelet and no node-lifecycle controller, so nothing adds the
// not-ready taint and the status is whatever we write here.
func MakeNode(name string, res NodeResources, labels map[string]string) *corev1.Node {
	all := map[string]string{corev1.LabelHostname: name}
	for k, v := range labels {
		all[k] = v
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(res.CPU),
		corev1.ResourceMemory: resource.MustParse(res.Memory),
		corev1.ResourcePods:   *resource.NewQuantity(res.Pods, resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "FakeNode", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
			}},
			Phase: corev1.NodeRunning,
		},
	}
}

// CreateNodes creates the nodes and makes sure their status (capacity,
// Ready) is stored, writing it through the status subresource if create
// dropped it.
func CreateNodes(ctx context.Context, c kubernetes.Interface, nodes ...*corev1.Node) error {
	for _, n := range nodes {
		created, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
		if len(created.Status.Allocatable) == 0 {
			created.Status = n.Status
			if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("writing the status of node %s: %w", n.Name, err)
			}
		}
	}
	return nil
}

// PodSpec describes a test pod.
type PodSpec struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	CPU         string // request; empty means none
	Memory      string
	Priority    string // PriorityClass name; empty means none
	// NodeSelector pins the pod, e.g. to one hostname.
	NodeSelector map[string]string
}

// MakePod builds a pod for the default scheduler. terminationGracePeriod
// is 0 because there is no kubelet to confirm a graceful deletion: a
// preemption victim must disappear as soon as the scheduler deletes it.
func MakePod(ns string, p PodSpec) *corev1.Pod {
	zero := int64(0)
	requests := corev1.ResourceList{}
	if p.CPU != "" {
		requests[corev1.ResourceCPU] = resource.MustParse(p.CPU)
	}
	if p.Memory != "" {
		requests[corev1.ResourceMemory] = resource.MustParse(p.Memory)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name, Labels: p.Labels, Annotations: p.Annotations},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &zero,
			PriorityClassName:             p.Priority,
			NodeSelector:                  p.NodeSelector,
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: requests},
			}},
		},
	}
}

// CreatePods creates the pods in order.
func CreatePods(ctx context.Context, c kubernetes.Interface, pods ...*corev1.Pod) error {
	for _, p := range pods {
		if _, err := c.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

// CreatePriorityClasses creates priority classes (name -> value; existing
// ones are kept) and waits until kube-apiserver admits pods that name them.
// Its Priority admission plugin reads classes from an informer, so a pod
// created right after its class can be refused with "no PriorityClass with
// name ... was found"; a dry-run pod per class probes until it is not.
func CreatePriorityClasses(ctx context.Context, c kubernetes.Interface, classes map[string]int32) error {
	for name, value := range classes {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating PriorityClass %s: %w", name, err)
		}
	}
	for name := range classes {
		probe := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "priority-class-probe"},
			Spec: corev1.PodSpec{
				PriorityClassName: name,
				Containers:        []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		var last error
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, last = c.CoreV1().Pods(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return last == nil, nil
		})
		if err != nil {
			return fmt.Errorf("PriorityClass %s was created but kube-apiserver did not admit a pod naming it within 30s: %v", name, last)
		}
	}
	return nil
}

// CreateNamespace creates a namespace.
func CreateNamespace(ctx context.Context, c kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// Placements maps pod name to node name ("" for not bound) for every pod
// in the namespace.
func Placements(ctx context.Context, c kubernetes.Interface, ns string) (map[string]string, error) {
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods in %s: %w", ns, err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = p.Spec.NodeName
	}
	return out, nil
}

// WaitForBound polls until every named pod has a node, or the timeout; it
// returns the placements it saw last.
func WaitForBound(ctx context.Context, c kubernetes.Interface, ns string, names []string, timeout time.Duration) (map[string]string, error) {
	var last map[string]string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := Placements(ctx, c, ns)
		if err != nil {
			return false, nil
		}
		last = got
		for _, n := range names {
			if got[n] == "" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		var pending []string
		for _, n := range names {
			if last[n] == "" {
				pending = append(pending, n)
			}
		}
		return last, fmt.Errorf("pods still not bound after %s: %s", timeout, strings.Join(pending, ", "))
	}
	return last, nil
}

// FailedSchedulingMessage returns the newest FailedScheduling event message
// for the pod, or "" if there is none yet.
func FailedSchedulingMessage(ctx context.Context, c kubernetes.Interface, ns, pod string) (string, error) {
	sel := fields.Set{
		"involvedObject.kind": "Pod",
		"involvedObject.name": pod,
		"reason":              "FailedScheduling",
	}.AsSelector().String()
	events, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return "", fmt.Errorf("listing events of pod %s/%s: %w", ns, pod, err)
	}
	items := events.Items
	if len(items) == 0 {
		return "", nil
	}
	sort.Slice(items, func(i, j int) bool { return eventTime(items[i]).Before(eventTime(items[j])) })
	return items[len(items)-1].Message, nil
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	default:
		return e.CreationTimestamp.Time
	}
}

// WaitForFailedScheduling polls until the pod has a FailedScheduling event
// whose message contains want, and returns that message.
func WaitForFailedScheduling(ctx context.Context, c kubernetes.Interface, ns, pod, want string, timeout time.Duration) (string, error) {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		msg, err := FailedSchedulingMessage(ctx, c, ns, pod)
		if err != nil {
			return false, nil
		}
		last = msg
		return strings.Contains(msg, want), nil
	})
	if err != nil {
		return last, fmt.Errorf("no FailedScheduling event for %s/%s containing %q after %s (last message: %q)", ns, pod, want, timeout, last)
	}
	return last, nil
}

// ClientFromKubeconfig builds a client from a kubeconfig file.
func ClientFromKubeconfig(file string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", file)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", file, err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := c.Discovery().ServerVersion(); err != nil {
		return nil, fmt.Errorf("kubeconfig %s does not reach the apiserver: %w", file, err)
	}
	return c, nil
}
