//! The test kit exercises declared events (SCHEDPLUG_EVENT_*), as the C++
//! kit does (sdk/tests/kit_events_test.cpp), with the same sentences: a
//! change of a node is classified into the events kube-scheduler sees, and
//! a change that turns a plugin's rejection of a pod into a pass must be an
//! event the plugin declared, or the kit reports the broken promise once,
//! naming the events to add.

use schedplug::abi::*;
use schedplug::testing::{self, change_events, event_names, Node, NodePod, Pod, Row};
use schedplug::{Create, Plugin, Status};

type PodView<'a> = schedplug::Pod<'a>;
type NodeView<'a> = schedplug::Node<'a>;

/// Passes a pod when the node's free CPU covers its request.
fn cpu_room(pod: &PodView<'_>, node: &NodeView<'_>) -> Status {
    if node.allocatable().get("cpu") - node.requested().get("cpu") >= pod.requests().get("cpu") {
        Status::success()
    } else {
        Status::unschedulable("node(s) lack free CPU")
    }
}

/// CpuRoom: declares the three changes that make room for a pod.
struct CpuRoom;

impl Plugin for CpuRoom {
    type PodState = ();
    const EVENTS: u64 = SCHEDPLUG_EVENT_NODE_ADD
        | SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE
        | SCHEDPLUG_EVENT_POD_DELETE;
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(CpuRoom)
    }
    fn filter(&self, pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Status {
        cpu_room(pod, node)
    }
}

/// The same filter, declaring only the node's allocatable growing: a pod
/// leaving and a node joining do not requeue what it rejected.
struct UnderDeclared;

impl Plugin for UnderDeclared {
    type PodState = ();
    const EVENTS: u64 = SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE;
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(UnderDeclared)
    }
    fn filter(&self, pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Status {
        cpu_room(pod, node)
    }
}

fn right() -> testing::Plugin {
    let d =
        schedplug::plugin_descriptor!(CpuRoom, name = "CpuRoom", version = "1", hooks = [filter]);
    testing::Plugin::from_descriptor(d, "{}").unwrap()
}

fn under_declared() -> testing::Plugin {
    let d = schedplug::plugin_descriptor!(
        UnderDeclared,
        name = "CpuRoom",
        version = "1",
        hooks = [filter]
    );
    testing::Plugin::from_descriptor(d, "{}").unwrap()
}

fn pod() -> Pod {
    Pod::new("web").request("cpu", 500)
}

fn full() -> Node {
    Node::new("n1")
        .allocatable("cpu", 1000)
        .pod(NodePod::new("batch-1").request("cpu", 800))
}

const REJECTED: &str = "Unschedulable (\"node(s) lack free CPU\")";
const STAYS: &str = "the pod would stay Pending until an unrelated event or the 5-minute flush \
                     of unschedulable pods";

/// What the under-declared CpuRoom says where the events it lacks would
/// have requeued the pod: `turned` is how its filter turned.
fn under_declared_says(turned: &str, change: &str) -> String {
    format!(
        "CpuRoom declares the events SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE (EVENTS), but its \
         filter {turned}{change}, which it does not declare: kube-scheduler requeues a pod \
         CpuRoom rejected only on the events it declared, so {STAYS}; add it to EVENTS, or \
         declare 0 (every event)"
    )
}

#[test]
fn changes_are_the_events_kube_scheduler_sees() {
    let n = || Node::new("n").label("zone", "a").allocatable("cpu", 1000);
    assert_eq!(change_events(&n(), &n()), 0);
    assert_eq!(
        change_events(&n(), &n().label("zone", "b")),
        SCHEDPLUG_EVENT_NODE_UPDATE_LABEL
    );
    assert_eq!(
        change_events(&n(), &n().annotation("note", "x")),
        SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION
    );
    assert_eq!(
        change_events(&n(), &n().taint("gpu", "true", "NoSchedule")),
        SCHEDPLUG_EVENT_NODE_UPDATE_TAINT
    );
    assert_eq!(
        change_events(&n(), &n().allocatable("cpu", 2000)),
        SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE
    );
    assert_eq!(
        change_events(
            &n().condition("Ready", "False"),
            &n().condition("Ready", "True")
        ),
        SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION
    );
    // Cordoning is no event, uncordoning is a taint update; capacity and
    // images are none.
    assert_eq!(change_events(&n(), &n().unschedulable(true)), 0);
    assert_eq!(
        change_events(&n().unschedulable(true), &n()),
        SCHEDPLUG_EVENT_NODE_UPDATE_TAINT
    );
    assert_eq!(
        change_events(&n(), &n().capacity("cpu", 8000).image(&["a:1"], 9)),
        0
    );
    // Pods: from the lists when a state lists them, else from the counts.
    let listed = || Node::new("n").pod(NodePod::new("a").label("app", "x"));
    assert_eq!(
        change_events(&listed(), &listed().pod(NodePod::new("b"))),
        SCHEDPLUG_EVENT_POD_ADD
    );
    assert_eq!(
        change_events(&listed(), &Node::new("n")),
        SCHEDPLUG_EVENT_POD_DELETE
    );
    assert_eq!(
        change_events(&listed(), &Node::new("n").pod(NodePod::new("a"))),
        SCHEDPLUG_EVENT_POD_UPDATE_LABEL
    );
    let resized = listed().pod(NodePod::new("a").label("app", "x").request("cpu", 9));
    assert_eq!(change_events(&resized, &listed()), 0);
    let counted = || Node::new("n").pod_count(3).requested("cpu", 900);
    assert_eq!(
        change_events(&counted(), &counted().requested("cpu", 100)),
        SCHEDPLUG_EVENT_POD_DELETE
    );
    assert_eq!(
        change_events(&counted(), &counted().pod_count(4)),
        SCHEDPLUG_EVENT_POD_ADD
    );
    assert_eq!(
        event_names(SCHEDPLUG_EVENT_POD_ADD | SCHEDPLUG_EVENT_POD_DELETE),
        "SCHEDPLUG_EVENT_POD_ADD | SCHEDPLUG_EVENT_POD_DELETE"
    );
    assert_eq!(event_names(0), "none");
}

#[test]
fn an_under_declared_event_is_reported_with_the_event_to_add() {
    let plugin = under_declared();
    assert_eq!(
        plugin.requeue_events(),
        SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE
    );
    let pod_left = under_declared_says(
        &format!(
            "rejected pod \"web\" on node \"n1\" before the change ({REJECTED}) and passes it \
             after (Success)"
        ),
        ", and the change is SCHEDPLUG_EVENT_POD_DELETE",
    );
    let freed = Node::new("n1").allocatable("cpu", 1000);
    assert_eq!(
        plugin.requeue_problem(&pod(), Some(&full()), &freed),
        Some(pod_left.clone())
    );
    let added = Node::new("n2").allocatable("cpu", 4000);
    assert_eq!(
        plugin.requeue_problem(&pod(), None, &added),
        Some(under_declared_says(
            "passes pod \"web\" on the added node \"n2\" (Success)",
            ", and a node added is SCHEDPLUG_EVENT_NODE_ADD"
        ))
    );
    // What it declares is enough for the node growing.
    assert_eq!(
        plugin.requeue_problem(&pod(), Some(&full()), &full().allocatable("cpu", 2000)),
        None
    );
    // In a cycle after the change the first broken promise fails the
    // cycle, and compare prints it once.
    let tight = Node::new("n3").allocatable("cpu", 100);
    let cycle = plugin.run_after(&pod(), &[full(), tight.clone()], &[freed, tight, added]);
    assert_eq!(cycle.error.as_deref(), Some(pod_left.as_str()));
    let diff = testing::compare(
        &cycle,
        &[
            Row::new("n1"),
            Row::new("n3").filter(SCHEDPLUG_UNSCHEDULABLE, "node(s) lack free CPU"),
            Row::new("n2"),
        ],
    );
    assert_eq!(
        diff,
        format!(
            "the cycle failed: {pod_left}\nthe cycle:\nn1  Success  score=-\nn3  Unschedulable \
             (node(s) lack free CPU)  score=-\nn2  Success  score=-\n"
        )
    );
}

#[test]
fn a_change_of_several_events_needs_one_of_them() {
    let plugin = under_declared();
    let several = plugin
        .requeue_problem(
            &pod(),
            Some(&full()),
            &Node::new("n1").allocatable("cpu", 1000).label("k", "v"),
        )
        .unwrap();
    assert!(
        several.contains(
            ", and the change is SCHEDPLUG_EVENT_NODE_UPDATE_LABEL | SCHEDPLUG_EVENT_POD_DELETE, \
             none of which it declares: "
        ),
        "{several}"
    );
    assert!(
        several
            .contains("; add the one that let the pod pass to EVENTS, or declare 0 (every event)"),
        "{several}"
    );
    // With the allocatable growing as well, one declared event is enough.
    let grown = Node::new("n1").allocatable("cpu", 1001).label("k", "v");
    assert_eq!(plugin.requeue_problem(&pod(), Some(&full()), &grown), None);
}

#[test]
fn an_added_node_counts_where_the_pod_was_rejected() {
    let plugin = under_declared();
    let roomy = || Node::new("roomy").allocatable("cpu", 4000);
    let tight = || Node::new("tight").allocatable("cpu", 100);
    let added = || Node::new("new").allocatable("cpu", 4000);
    // Nothing rejected the pod before: no event matters.
    let cycle = plugin.run_after(&pod(), &[roomy()], &[roomy(), added()]);
    assert_eq!(cycle.error, None);
    let cycle = plugin.run_after(&pod(), &[tight()], &[tight(), added()]);
    assert_eq!(
        cycle.error,
        Some(under_declared_says(
            "passes pod \"web\" on the added node \"new\" (Success)",
            ", and a node added is SCHEDPLUG_EVENT_NODE_ADD"
        ))
    );
}

#[test]
fn a_declared_event_requeues_and_nothing_is_reported() {
    let plugin = right();
    assert_eq!(
        plugin.requeue_events(),
        SCHEDPLUG_EVENT_NODE_ADD
            | SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE
            | SCHEDPLUG_EVENT_POD_DELETE
    );
    let freed = Node::new("n1").allocatable("cpu", 1000);
    assert_eq!(plugin.requeue_problem(&pod(), Some(&full()), &freed), None);
    let added = Node::new("n2").allocatable("cpu", 600);
    assert_eq!(plugin.requeue_problem(&pod(), None, &added), None);
    plugin
        .run_after(&pod(), &[full()], &[freed, added])
        .assert_rows(&[Row::new("n1"), Row::new("n2")]);
}

/// Declares no events: every event requeues its pods.
struct Quiet;

impl Plugin for Quiet {
    type PodState = ();
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(Quiet)
    }
    fn filter(&self, pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Status {
        cpu_room(pod, node)
    }
}

#[test]
fn no_declared_events_means_every_event() {
    let d = schedplug::plugin_descriptor!(Quiet, name = "Quiet", version = "1", hooks = [filter]);
    let plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    assert_eq!(plugin.requeue_events(), SCHEDPLUG_EVENT_ALL);
    let freed = Node::new("n1").allocatable("cpu", 1000);
    assert_eq!(plugin.requeue_problem(&pod(), Some(&full()), &freed), None);
}

#[test]
fn a_change_no_event_reports_is_named() {
    let plugin = right();
    // The pod on the node shrinks in place: no event a plugin registers.
    let after = Node::new("n1")
        .allocatable("cpu", 1000)
        .pod(NodePod::new("batch-1").request("cpu", 100));
    assert_eq!(
        plugin.requeue_problem(&pod(), Some(&full()), &after),
        Some(format!(
            "CpuRoom's filter rejected pod \"web\" on node \"n1\" before the change ({REJECTED}) \
             and passes it after (Success), but the change is none of the cluster events \
             kube-scheduler requeues a pod on (SCHEDPLUG_EVENT_*: a node's labels, taints, \
             allocatable, annotations or condition statuses changing, spec.unschedulable \
             turning false, a pod added to, deleted from or relabelled on the node), so \
             whatever CpuRoom declares {STAYS}; base the filter's verdict on what those events \
             report (e.g. allocatable, not capacity)"
        ))
    );
}

#[test]
fn nothing_to_check_is_said() {
    let plugin = right();
    let roomy = Node::new("n1").allocatable("cpu", 4000);
    assert_eq!(
        plugin
            .requeue_problem(&pod(), Some(&roomy), &full())
            .as_deref(),
        Some(
            "CpuRoom's filter does not reject pod \"web\" on node \"n1\" before the change \
             (Success), so no event is needed to requeue it; give as before a node the plugin \
             rejects the pod on"
        )
    );
    assert_eq!(
        plugin.requeue_problem(&pod(), Some(&full()), &full().label("k", "v")),
        Some(format!(
            "CpuRoom's filter still rejects pod \"web\" on node \"n1\" after the change \
             ({REJECTED}); give as after the node changed so that the plugin passes the pod"
        ))
    );
    assert_eq!(
        plugin.requeue_problem(&pod(), None, &full()),
        Some(format!(
            "CpuRoom's filter rejects pod \"web\" on the added node \"n1\" ({REJECTED}); give a \
             node the plugin passes the pod on"
        ))
    );
    assert_eq!(
        plugin
            .requeue_problem(&pod(), Some(&full()), &Node::new("n2"))
            .as_deref(),
        Some(
            "before is node \"n1\" and after is node \"n2\"; give two states of one node (the \
             same name), or check a node added on its own"
        )
    );
}
