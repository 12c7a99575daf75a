//! PanicsInRust: its filter panics on spot nodes and its score on every
//! node. The SDK's export catches each panic and reports an ERROR naming
//! the plugin and the hook; nothing unwinds into the host. Built outside
//! plugins.d, for rust_panic_boundary_test only.
use schedplug::{Create, Node, Plugin, Pod, Status};

pub struct PanicsInRust;

impl Plugin for PanicsInRust {
    type PodState = ();

    fn create(_ctx: &Create<'_>) -> Result<Self, Status> {
        Ok(PanicsInRust)
    }

    fn filter(&self, _pod: &Pod<'_>, node: &Node<'_>, _: &()) -> Status {
        if node.labels().get("node.kubernetes.io/capacity-type") == Some("spot") {
            panic!("no spot node for {}", node.name());
        }
        Status::success()
    }

    fn score(&self, _pod: &Pod<'_>, node: &Node<'_>, _: &()) -> Result<i64, Status> {
        let scores: Vec<i64> = Vec::new();
        Ok(scores[node.name().len()])
    }
}

schedplug::export_plugin!(
    PanicsInRust,
    name = "PanicsInRust",
    version = "0.0.1",
    hooks = [filter, score]
);
