//! The kit's undeclared-data check: a plugin that counts the node's pods
//! but does not declare SCHEDPLUG_DATA_NODE_PODS scores as the host would
//! run it (no pods seen), and the cycle fails with the bit to declare.

use schedplug::abi::*;
use schedplug::testing::{self, Node, NodePod, Pod, Row};
use schedplug::{Create, Plugin, Settings, Status};

type PodView<'a> = schedplug::Pod<'a>;
type NodeView<'a> = schedplug::Node<'a>;

/// Scores 100 less 10 for each pod of the node with the pod's "app" label.
/// Declares the node's pods only when its args say `{"declare": true}`.
struct AppSpread {
    declare: bool,
}

impl Plugin for AppSpread {
    type PodState = ();
    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        Ok(AppSpread {
            declare: ctx.args_json().contains("\"declare\": true"),
        })
    }
    fn configure(&self, settings: &mut Settings) {
        if self.declare {
            settings.data |= SCHEDPLUG_DATA_NODE_PODS;
        }
    }
    fn score(&self, pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Result<i64, Status> {
        let app = match pod.labels().get("app") {
            Some(app) => app,
            None => return Ok(100),
        };
        let same = node
            .pods()
            .iter()
            .filter(|p| p.labels().get("app") == Some(app))
            .count() as i64;
        Ok((100 - 10 * same).max(0))
    }
}

fn app_spread(args: &str) -> testing::Plugin {
    let d = schedplug::plugin_descriptor!(
        AppSpread,
        name = "AppSpread",
        version = "1",
        hooks = [score]
    );
    testing::Plugin::from_descriptor(d, args).unwrap()
}

fn nodes() -> [Node; 2] {
    [
        Node::new("busy")
            .pod(NodePod::new("web-1").label("app", "web"))
            .pod(NodePod::new("web-2").label("app", "web"))
            .pod(NodePod::new("db-0").label("app", "db")),
        Node::new("idle"),
    ]
}

#[test]
fn declared_data_passes() {
    let plugin = app_spread(r#"{"declare": true}"#);
    assert_eq!(plugin.data(), SCHEDPLUG_DATA_NODE_PODS);
    let cycle = plugin.run(&Pod::new("web-4").label("app", "web"), &nodes());
    cycle.assert_rows(&[
        Row::new("busy").filter(SCHEDPLUG_SKIP, "").score(80),
        Row::new("idle").filter(SCHEDPLUG_SKIP, "").score(100),
    ]);
}

#[test]
fn an_undeclared_bit_is_named() {
    let plugin = app_spread("{}");
    assert_eq!(plugin.data(), 0);
    let cycle = plugin.run(&Pod::new("web-4").label("app", "web"), &nodes());
    // The rows are the host's: no pods seen, 100 everywhere.
    let scores: Vec<i64> = cycle.nodes.iter().map(|n| n.score).collect();
    assert_eq!(scores, [100, 100]);
    assert_eq!(
        cycle.error.as_deref(),
        Some(
            "AppSpread reads data it did not declare (SCHEDPLUG_DATA_NODE_PODS): on node \
             \"busy\" its score answered 100 without it (as schedplug-host sends it) and 80 \
             with it (as the test gave it); add SCHEDPLUG_DATA_NODE_PODS to the data it \
             declares (DATA in its impl Plugin, or settings.data in configure)"
        )
    );
}

#[test]
fn data_another_plugin_declared_is_not_undeclared() {
    let mut plugin = app_spread("{}");
    plugin.send_data(SCHEDPLUG_DATA_NODE_PODS);
    let cycle = plugin.run(&Pod::new("web-4").label("app", "web"), &nodes());
    cycle.assert_rows(&[
        Row::new("busy").filter(SCHEDPLUG_SKIP, "").score(80),
        Row::new("idle").filter(SCHEDPLUG_SKIP, "").score(100),
    ]);
}

#[test]
fn undeclared_data_the_answers_ignore_is_no_problem() {
    let plugin = app_spread("{}");
    let cycle = plugin.run(&Pod::new("lone"), &nodes());
    cycle.assert_rows(&[
        Row::new("busy").filter(SCHEDPLUG_SKIP, "").score(100),
        Row::new("idle").filter(SCHEDPLUG_SKIP, "").score(100),
    ]);
}
