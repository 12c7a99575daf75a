//! SpotNodes: spot capacity is for pods that can be interrupted.
//!
//! Nodes labelled `node.kubernetes.io/capacity-type: spot` can be taken
//! away at short notice. A pod annotated `schedplug.io/interruptible:
//! "true"` may run there and prefers them (they are cheaper); any other
//! pod never lands on one. `"false"` opts out explicitly; any other value
//! is a typo and the pod fits nowhere, so that it does not land on a spot
//! node by mistake nor silently lose its preference.

use schedplug::abi::{
    SCHEDPLUG_EVENT_NODE_ADD, SCHEDPLUG_EVENT_NODE_UPDATE_LABEL,
    SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS, SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY,
    SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY,
};
use schedplug::{Create, Gates, Node, Plugin, Pod, Status};

/// The pod annotation that makes a pod interruptible.
pub const POD_ANNOTATION: &str = "schedplug.io/interruptible";
/// The node label that marks spot capacity, and its value.
pub const NODE_LABEL: &str = "node.kubernetes.io/capacity-type";
pub const SPOT: &str = "spot";

/// Filter's reasons, shown as "0/5 nodes are available: 2 <reason>."
pub const REASON_SPOT: &str =
    "node(s) are spot capacity (label node.kubernetes.io/capacity-type=spot) and the pod is not interruptible";
pub const REASON_BAD_ANNOTATION: &str =
    "pod's annotation schedplug.io/interruptible must be \"true\" or \"false\"";

/// What pod_begin learns from the pod's annotation, once per pod.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Interruptible {
    /// No annotation, or "false": spot nodes are refused.
    #[default]
    No,
    Yes,
    /// Neither "true" nor "false".
    Typo,
}

pub struct SpotNodes;

impl Plugin for SpotNodes {
    type PodState = Interruptible;

    /// A node gains or loses the label, or a new node arrives: the only
    /// events after which a refused pod may fit.
    const EVENTS: u64 = SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL;
    /// Filter reads a node label, never the node's pods, nor the pod's name
    /// or uid, and of the pod's labels and annotations only
    /// POD_ANNOTATION: preemption dry runs, the next replica and pods that
    /// differ in other labels and annotations may reuse its verdicts. Score
    /// reads the same label and nothing of the pod's name or uid, and
    /// nothing here changes over time (no refresh hook): kube-scheduler's
    /// batching may reuse its ranking for the next replica.
    const HINTS: u64 = SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS
        | SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY
        | SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS
        | SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;
    const POD_ANNOTATION_KEYS: &'static [&'static str] = &[POD_ANNOTATION];

    /// The keys are fixed (they are declared for reuse at build time), so
    /// the plugin takes no args: any arg is a mistake, refused by name.
    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        ctx.args()?.allow_only(&[])?;
        Ok(SpotNodes)
    }

    /// The annotation decides which hook runs: Filter for pods that must
    /// stay off spot nodes, Score for pods that prefer them.
    fn pod_begin(&self, pod: &Pod<'_>, gates: &mut Gates) -> Result<Interruptible, Status> {
        let state = interruptible(pod.annotations().get(POD_ANNOTATION));
        gates.filter = state != Interruptible::Yes;
        gates.score = state == Interruptible::Yes;
        Ok(state)
    }

    fn filter(&self, _pod: &Pod<'_>, node: &Node<'_>, state: &Interruptible) -> Status {
        // Preempting pods cannot change a node's capacity type or a pod's
        // annotation: both refusals are unresolvable.
        match state {
            Interruptible::Typo => Status::unschedulable_and_unresolvable(REASON_BAD_ANNOTATION),
            Interruptible::No if is_spot(node.labels().get(NODE_LABEL)) => {
                Status::unschedulable_and_unresolvable(REASON_SPOT)
            }
            _ => Status::success(),
        }
    }

    /// 100 for spot nodes, 0 for the others: already in [0, 100].
    fn score(
        &self,
        _pod: &Pod<'_>,
        node: &Node<'_>,
        _state: &Interruptible,
    ) -> Result<i64, Status> {
        Ok(if is_spot(node.labels().get(NODE_LABEL)) {
            100
        } else {
            0
        })
    }
}

/// The pod's annotation value, read as the plugin's README says.
pub fn interruptible(annotation: Option<&str>) -> Interruptible {
    match annotation {
        None | Some("false") => Interruptible::No,
        Some("true") => Interruptible::Yes,
        Some(_) => Interruptible::Typo,
    }
}

/// Whether a node's capacity-type label says spot (exact match, as
/// Kubernetes matches labels).
pub fn is_spot(label: Option<&str>) -> bool {
    label == Some(SPOT)
}

schedplug::export_plugin!(
    SpotNodes,
    name = "SpotNodes",
    version = "1.0.0",
    hooks = [pod_begin, filter, score]
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_annotation_is_read_exactly() {
        assert_eq!(interruptible(None), Interruptible::No);
        assert_eq!(interruptible(Some("false")), Interruptible::No);
        assert_eq!(interruptible(Some("true")), Interruptible::Yes);
        for typo in ["True", "yes", "1", ""] {
            assert_eq!(interruptible(Some(typo)), Interruptible::Typo, "{:?}", typo);
        }
    }

    #[test]
    fn only_the_exact_label_value_is_spot() {
        assert!(is_spot(Some("spot")));
        for other in [None, Some("on-demand"), Some("Spot"), Some("")] {
            assert!(!is_spot(other), "{:?}", other);
        }
    }
}
