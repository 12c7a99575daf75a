//! Declared events (SCHEDPLUG_EVENT_*): which cluster events a change of a
//! node is, and whether the events a plugin declared requeue a pod that
//! such a change lets through (the Rust twin of
//! `sdk/include/schedplug/testing/events.hpp`, with its sentences).
//!
//! kube-scheduler moves a pod a plugin rejected back to the active queue
//! only on a cluster event the plugin registered (the shim registers the
//! declared bits, every event for 0, with no queueing hint). A plugin that
//! declares too few leaves such pods Pending until an unrelated event or
//! the 5-minute flush of unschedulable pods; the kit finds it by filtering
//! a pod on a node before and after a change.

use super::{said, Cycle, Node, Plugin, Pod};
use crate::abi::*;
use crate::status::Status;
use std::collections::BTreeMap;

const EVENT_NAMES: [(u64, &str); 10] = [
    (SCHEDPLUG_EVENT_NODE_ADD, "SCHEDPLUG_EVENT_NODE_ADD"),
    (SCHEDPLUG_EVENT_NODE_DELETE, "SCHEDPLUG_EVENT_NODE_DELETE"),
    (
        SCHEDPLUG_EVENT_NODE_UPDATE_LABEL,
        "SCHEDPLUG_EVENT_NODE_UPDATE_LABEL",
    ),
    (
        SCHEDPLUG_EVENT_NODE_UPDATE_TAINT,
        "SCHEDPLUG_EVENT_NODE_UPDATE_TAINT",
    ),
    (
        SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE,
        "SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE",
    ),
    (
        SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION,
        "SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION",
    ),
    (
        SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION,
        "SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION",
    ),
    (SCHEDPLUG_EVENT_POD_ADD, "SCHEDPLUG_EVENT_POD_ADD"),
    (SCHEDPLUG_EVENT_POD_DELETE, "SCHEDPLUG_EVENT_POD_DELETE"),
    (
        SCHEDPLUG_EVENT_POD_UPDATE_LABEL,
        "SCHEDPLUG_EVENT_POD_UPDATE_LABEL",
    ),
];

/// The names of SCHEDPLUG_EVENT_* bits, as "SCHEDPLUG_EVENT_NODE_ADD |
/// SCHEDPLUG_EVENT_POD_DELETE"; "none" for 0.
pub fn event_names(events: u64) -> String {
    let mut names: Vec<String> = EVENT_NAMES
        .iter()
        .filter(|(bit, _)| events & bit != 0)
        .map(|(_, name)| name.to_string())
        .collect();
    if events & !SCHEDPLUG_EVENT_ALL != 0 {
        names.push(format!("{:#x}", events & !SCHEDPLUG_EVENT_ALL));
    }
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(" | ")
    }
}

/// The SCHEDPLUG_EVENT_* kinds kube-scheduler sees when node `before`
/// becomes `after` (two states of one node): a changed label, taint,
/// allocatable, annotation or condition status is NODE_UPDATE_LABEL,
/// _TAINT (also spec.unschedulable turning false), _ALLOCATABLE,
/// _ANNOTATION, _CONDITION. The node's pods: when either state lists them,
/// a pod only after is POD_ADD, only before POD_DELETE, with other labels
/// POD_UPDATE_LABEL (other changes of a listed pod, such as its requests,
/// are no event a plugin can register); without lists, fewer pods or less
/// requested is POD_DELETE, more is POD_ADD. Capacity, images and
/// spec.unschedulable turning true are no event.
pub fn change_events(before: &Node, after: &Node) -> u64 {
    let (b, a) = (before, after);
    let mut out = pod_events(b, a);
    if a.labels != b.labels {
        out |= SCHEDPLUG_EVENT_NODE_UPDATE_LABEL;
    }
    if a.taints != b.taints || (b.unschedulable && !a.unschedulable) {
        out |= SCHEDPLUG_EVENT_NODE_UPDATE_TAINT;
    }
    if a.allocatable != b.allocatable {
        out |= SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE;
    }
    if a.annotations != b.annotations {
        out |= SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION;
    }
    // kube-scheduler compares condition statuses by type.
    let statuses = |n: &Node| n.conditions.iter().cloned().collect::<BTreeMap<_, _>>();
    if statuses(a) != statuses(b) {
        out |= SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION;
    }
    out
}

fn pod_events(b: &Node, a: &Node) -> u64 {
    let mut out = 0;
    if !b.pods.is_empty() || !a.pods.is_empty() {
        for (key, pod) in &a.pods {
            match b.pods.get(key) {
                None => out |= SCHEDPLUG_EVENT_POD_ADD,
                Some(was) if was.labels != pod.labels => out |= SCHEDPLUG_EVENT_POD_UPDATE_LABEL,
                Some(_) => {}
            }
        }
        if b.pods.keys().any(|key| !a.pods.contains_key(key)) {
            out |= SCHEDPLUG_EVENT_POD_DELETE;
        }
        return out;
    }
    let mut compare = |before: i64, after: i64| {
        if after < before {
            out |= SCHEDPLUG_EVENT_POD_DELETE;
        }
        if after > before {
            out |= SCHEDPLUG_EVENT_POD_ADD;
        }
    };
    let count = |n: &Node| i64::from(n.pod_count.unwrap_or(n.pods.len() as u32));
    compare(count(b), count(a));
    let (rb, ra) = (requested(b), requested(a));
    for r in rb.keys().chain(ra.keys()) {
        compare(
            rb.get(r).copied().unwrap_or(0),
            ra.get(r).copied().unwrap_or(0),
        );
    }
    out
}

/// The node's requested as the view shows it: set, or its pods' sum.
fn requested(n: &Node) -> BTreeMap<String, i64> {
    if n.requested_set {
        return n.requested.clone();
    }
    let mut sum = BTreeMap::new();
    for p in n.pods.values() {
        for (r, v) in &p.requests {
            *sum.entry(r.clone()).or_insert(0) += v;
        }
    }
    sum
}

fn rejects(s: &Status) -> bool {
    matches!(
        s.code(),
        SCHEDPLUG_UNSCHEDULABLE | SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE
    )
}

impl Plugin {
    /// The events after which kube-scheduler requeues a pod this plugin
    /// rejected, as the shim registers them: the declared events (`EVENTS`,
    /// as create() left them), every event (SCHEDPLUG_EVENT_ALL) for 0.
    pub fn requeue_events(&self) -> u64 {
        let declared = self.settings.events;
        if declared == 0 || declared & !SCHEDPLUG_EVENT_ALL != 0 {
            SCHEDPLUG_EVENT_ALL
        } else {
            declared
        }
    }

    /// Whether the declared events requeue `pod` after node `before`
    /// becomes `after` (two states of one node; `before` None: `after` was
    /// added, and SCHEDPLUG_EVENT_NODE_ADD is the change). None when the
    /// plugin's filter rejects the pod on `before`, passes it on `after`,
    /// and the change is an event it declared ([`change_events`]); else a
    /// sentence: the broken promise (the change's events, which to add), a
    /// change no event reports, or why there is nothing to check (no
    /// rejection before, no pass after, a failed cycle). Each state is a
    /// cycle of its own, as [`run`](Plugin::run) makes it.
    pub fn requeue_problem(
        &self,
        pod: &Pod,
        before: Option<&Node>,
        after: &Node,
    ) -> Option<String> {
        if let Some(b) = before {
            if b.name() != after.name() {
                return Some(format!(
                    "before is node \"{}\" and after is node \"{}\"; give two states of one \
                     node (the same name), or check a node added on its own",
                    b.name(),
                    after.name()
                ));
            }
        }
        let node = match before {
            None => format!("the added node \"{}\"", after.name()),
            Some(_) => format!("node \"{}\"", after.name()),
        };
        let place = format!("pod \"{}\" on {node}", pod.name());
        let mut rejected = None;
        if let Some(b) = before {
            let was = self.run(pod, std::slice::from_ref(b));
            if let Some(e) = was.error {
                return Some(format!("on {node} before the change the cycle failed: {e}"));
            }
            let v = was.nodes[0].filter.clone();
            if !rejects(&v) {
                return Some(format!(
                    "{}'s filter does not reject {place} before the change ({}), so no event \
                     is needed to requeue it; give as before a node the plugin rejects the pod \
                     on",
                    self.name,
                    said(&v)
                ));
            }
            rejected = Some(v);
        }
        let then = if before.is_none() {
            ""
        } else {
            " after the change"
        };
        let now = self.run(pod, std::slice::from_ref(after));
        if let Some(e) = now.error {
            return Some(format!("on {node}{then} the cycle failed: {e}"));
        }
        let passed = &now.nodes[0].filter;
        if rejects(passed) {
            let (verb, advice) = match before {
                None => ("rejects", "a node the plugin passes the pod on"),
                Some(_) => (
                    "still rejects",
                    "as after the node changed so that the plugin passes the pod",
                ),
            };
            return Some(format!(
                "{}'s filter {verb} {place}{then} ({}); give {advice}",
                self.name,
                said(passed)
            ));
        }
        let change = match before {
            None => SCHEDPLUG_EVENT_NODE_ADD,
            Some(b) => change_events(b, after),
        };
        self.events_problem(pod.name(), after.name(), rejected.as_ref(), passed, change)
    }

    /// One cycle of `pod` over `nodes` as [`run`](Plugin::run) makes it,
    /// after a change from `before` (the nodes as they were, matched by
    /// name; a node not in `before` was added). Each node whose rejection of
    /// the pod turned into a pass is held to the declared events as
    /// [`requeue_problem`](Plugin::requeue_problem) holds it, and so is each
    /// added node that passes the pod when a node of `before` rejected it;
    /// the first broken promise fails the cycle ([`Cycle::error`]), reported
    /// once.
    pub fn run_after(&self, pod: &Pod, before: &[Node], nodes: &[Node]) -> Cycle {
        let mut cycle = self.run(pod, nodes);
        if cycle.error.is_some() {
            return cycle;
        }
        let was = self.run(pod, before);
        if let Some(e) = was.error {
            cycle.error = Some(format!("before the change: {e}"));
            return cycle;
        }
        let rejected_somewhere = was.nodes.iter().any(|n| rejects(&n.filter));
        for (i, node) in nodes.iter().enumerate() {
            let now = &cycle.nodes[i].filter;
            if rejects(now) {
                continue;
            }
            let problem = match before.iter().position(|b| b.name() == node.name()) {
                None if rejected_somewhere => self.events_problem(
                    pod.name(),
                    node.name(),
                    None,
                    now,
                    SCHEDPLUG_EVENT_NODE_ADD,
                ),
                None => None,
                Some(j) if rejects(&was.nodes[j].filter) => self.events_problem(
                    pod.name(),
                    node.name(),
                    Some(&was.nodes[j].filter),
                    now,
                    change_events(&before[j], node),
                ),
                Some(_) => None,
            };
            if problem.is_some() {
                cycle.error = problem;
                break;
            }
        }
        cycle
    }

    /// The filter turned from `before` (a rejection; None: the node was
    /// added) to `after` (a pass) on `node` for `pod`, with a change of the
    /// events `change`: the sentence when no declared event covers it.
    fn events_problem(
        &self,
        pod: &str,
        node: &str,
        before: Option<&Status>,
        after: &Status,
        change: u64,
    ) -> Option<String> {
        let turned = match before {
            None => format!(
                "passes pod \"{pod}\" on the added node \"{node}\" ({})",
                said(after)
            ),
            Some(b) => format!(
                "rejected pod \"{pod}\" on node \"{node}\" before the change ({}) and passes \
                 it after ({})",
                said(b),
                said(after)
            ),
        };
        let stays = "the pod would stay Pending until an unrelated event or the 5-minute \
                     flush of unschedulable pods";
        let name = &self.name;
        if change == 0 {
            return Some(format!(
                "{name}'s filter {turned}, but the change is none of the cluster events \
                 kube-scheduler requeues a pod on (SCHEDPLUG_EVENT_*: a node's labels, taints, \
                 allocatable, annotations or condition statuses changing, spec.unschedulable \
                 turning false, a pod added to, deleted from or relabelled on the node), so \
                 whatever {name} declares {stays}; base the filter's verdict on what those \
                 events report (e.g. allocatable, not capacity)"
            ));
        }
        if change & self.requeue_events() != 0 {
            return None;
        }
        let one = change & (change - 1) == 0;
        Some(format!(
            "{name} declares the events {} (EVENTS), but its filter {turned}, and {} {}, {}: \
             kube-scheduler requeues a pod {name} rejected only on the events it declared, so \
             {stays}; add {} to EVENTS, or declare 0 (every event)",
            event_names(self.settings.events),
            if before.is_none() {
                "a node added is"
            } else {
                "the change is"
            },
            event_names(change),
            if one {
                "which it does not declare"
            } else {
                "none of which it declares"
            },
            if one {
                "it"
            } else {
                "the one that let the pod pass"
            }
        ))
    }
}
