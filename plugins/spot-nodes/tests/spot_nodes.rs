//! SpotNodes through its exported C entry point, with the SDK's Rust test
//! kit (the host's rules, the hint promises checked on every node).
use schedplug::abi::*;
use schedplug::testing::{Node, Plugin, Pod, Row};
use spot_nodes::{schedplug_plugin_v1, REASON_BAD_ANNOTATION, REASON_SPOT};

fn nodes() -> Vec<Node> {
    vec![
        Node::new("spot-1").label("node.kubernetes.io/capacity-type", "spot"),
        Node::new("on-demand-1").label("node.kubernetes.io/capacity-type", "on-demand"),
        Node::new("plain-1"),
    ]
}

fn plugin() -> Plugin {
    Plugin::load(schedplug_plugin_v1, "{}").expect("SpotNodes loads with no args")
}

#[test]
fn a_pod_without_the_annotation_stays_off_spot_nodes_and_is_not_scored() {
    let cycle = plugin().run(&Pod::new("web-1"), &nodes());
    cycle.assert_rows(&[
        Row::new("spot-1").filter(SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_SPOT),
        Row::new("on-demand-1"),
        Row::new("plain-1"),
    ]);
}

#[test]
fn false_opts_out_like_no_annotation() {
    let pod = Pod::new("web-1").annotation("schedplug.io/interruptible", "false");
    plugin().run(&pod, &nodes()).assert_rows(&[
        Row::new("spot-1").filter(SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_SPOT),
        Row::new("on-demand-1"),
        Row::new("plain-1"),
    ]);
}

#[test]
// Its Filter is gated off for the pod (Skip: kube-scheduler leaves it
// out), its Score runs.
fn an_interruptible_pod_fits_everywhere_and_prefers_spot_nodes() {
    let pod = Pod::new("batch-1").annotation("schedplug.io/interruptible", "true");
    plugin().run(&pod, &nodes()).assert_rows(&[
        Row::new("spot-1").filter(SCHEDPLUG_SKIP, "").score(100),
        Row::new("on-demand-1").filter(SCHEDPLUG_SKIP, "").score(0),
        Row::new("plain-1").filter(SCHEDPLUG_SKIP, "").score(0),
    ]);
}

#[test]
fn a_typo_in_the_annotation_fits_nowhere_and_says_why() {
    let pod = Pod::new("batch-1").annotation("schedplug.io/interruptible", "yes");
    plugin().run(&pod, &nodes()).assert_rows(&[
        Row::new("spot-1").filter(
            SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
            REASON_BAD_ANNOTATION,
        ),
        Row::new("on-demand-1").filter(
            SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
            REASON_BAD_ANNOTATION,
        ),
        Row::new("plain-1").filter(
            SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
            REASON_BAD_ANNOTATION,
        ),
    ]);
}

#[test]
fn other_labels_and_annotations_do_not_matter() {
    let pod = Pod::new("batch-1")
        .namespace("jobs")
        .label("app", "batch")
        .annotation("team", "data")
        .annotation("schedplug.io/interruptible", "true");
    plugin().run(&pod, &nodes()).assert_rows(&[
        Row::new("spot-1").filter(SCHEDPLUG_SKIP, "").score(100),
        Row::new("on-demand-1").filter(SCHEDPLUG_SKIP, "").score(0),
        Row::new("plain-1").filter(SCHEDPLUG_SKIP, "").score(0),
    ]);
}

#[test]
fn any_arg_is_refused_by_name() {
    let err = Plugin::load(schedplug_plugin_v1, r#"{"nodeLabel": "x"}"#)
        .err()
        .expect("an arg is refused");
    let msg = err.to_string();
    assert!(
        msg.contains("SpotNodes") && msg.contains("nodeLabel"),
        "{}",
        msg
    );
}

#[test]
fn the_score_keeps_the_identity_promise_for_any_pod_name() {
    let plugin = plugin();
    assert_ne!(
        plugin.settings().hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY,
        0
    );
    // The kit scores a copy under another name and uid on every cycle.
    for name in ["web-5d8f7-abcde", "xenon", "twin-of-x"] {
        for value in [None, Some("true"), Some("false"), Some("maybe")] {
            let mut pod = Pod::new(name).uid(&format!("uid-of-{name}"));
            if let Some(v) = value {
                pod = pod.annotation("schedplug.io/interruptible", v);
            }
            let cycle = plugin.run(&pod, &nodes());
            assert!(cycle.error.is_none(), "{name} {value:?}: {:?}", cycle.error);
        }
    }
}

/// kube-scheduler requeues a pod SpotNodes rejected only on the events it
/// declared: a spot node relabelled on-demand, or an on-demand node added,
/// must be among them.
#[test]
fn its_events_requeue_what_relabelling_lets_through() {
    let plugin = plugin();
    let pod = Pod::new("web-1");
    let spot = Node::new("n1").label("node.kubernetes.io/capacity-type", "spot");
    let on_demand = Node::new("n1").label("node.kubernetes.io/capacity-type", "on-demand");
    assert_eq!(plugin.requeue_problem(&pod, Some(&spot), &on_demand), None);
    assert_eq!(plugin.requeue_problem(&pod, None, &on_demand), None);
}
