//! The test kit (schedplug::testing) on plugins of its own: cycles as the
//! host runs them, the host's messages, and the hint checks, each caught
//! with its sentence.
//!
//! One file, although long: each case sits beside the small plugin it runs, and
//! all of them go through the kit's public API only, as a plugin author's tests
//! would.

use schedplug::abi::*;
use schedplug::testing::{self, Node, Pod, Row, Toleration};
use schedplug::{Create, Gates, LogLevel, NodeScore, Normalize, Plugin, Status};

type PodView<'a> = schedplug::Pod<'a>;
type NodeView<'a> = schedplug::Node<'a>;

/// Fits a pod whose cpu request the node's free cpu covers; scores the
/// free cpu left (LINEAR).
struct SpareCpu;

impl Plugin for SpareCpu {
    type PodState = i64;
    const NORMALIZE: Normalize = Normalize::Linear;
    const HINTS: u64 = SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;

    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        if ctx.args_json().contains("nope") {
            return Err(Status::error("arg \"nope\" is not allowed"));
        }
        ctx.log(LogLevel::Info, "spare cpu ready");
        Ok(SpareCpu)
    }
    fn pod_begin(&self, pod: &PodView<'_>, _gates: &mut Gates) -> Result<i64, Status> {
        Ok(pod.requests().get("cpu"))
    }
    fn filter(&self, _pod: &PodView<'_>, node: &NodeView<'_>, cpu: &i64) -> Status {
        if free(node) >= *cpu {
            Status::success()
        } else {
            Status::unschedulable("node(s) lack spare CPU")
        }
    }
    fn score(&self, _pod: &PodView<'_>, node: &NodeView<'_>, cpu: &i64) -> Result<i64, Status> {
        Ok(free(node) - cpu)
    }
}

fn free(node: &NodeView<'_>) -> i64 {
    node.allocatable().get("cpu") - node.requested().get("cpu")
}

fn spare_cpu() -> &'static schedplug_plugin {
    schedplug::plugin_descriptor!(
        SpareCpu,
        name = "SpareCpu",
        version = "1.0.0",
        hooks = [pod_begin, filter, score]
    )
}

#[test]
fn a_cycle_filters_scores_and_normalizes() {
    let plugin = testing::Plugin::from_descriptor(spare_cpu(), "{}").unwrap();
    assert_eq!((plugin.name(), plugin.version()), ("SpareCpu", "1.0.0"));
    assert_eq!(plugin.logs(), ["info: spare cpu ready"]);
    let pod = Pod::new("web").request("cpu", 500);
    let cycle = plugin.run(
        &pod,
        &[
            Node::new("roomy")
                .allocatable("cpu", 4000)
                .requested("cpu", 1000),
            Node::new("full")
                .allocatable("cpu", 1000)
                .requested("cpu", 700),
            Node::new("some")
                .allocatable("cpu", 2000)
                .requested("cpu", 500),
            Node::new("tight").allocatable("cpu", 1000),
        ],
    );
    // Raw 2500, 1000 and 500: min-max onto [0, 100], rounded.
    cycle.assert_rows(&[
        Row::new("roomy").score(100),
        Row::new("full").filter(SCHEDPLUG_UNSCHEDULABLE, "node(s) lack spare CPU"),
        Row::new("some").score(25),
        Row::new("tight").score(0),
    ]);
    assert_eq!(cycle.feasible(), ["roomy", "some", "tight"]);
    assert_eq!(cycle.row("some").unwrap().raw, 1000);
    assert!(cycle
        .table()
        .contains("full  Unschedulable (node(s) lack spare CPU)  score=-"));
}

#[test]
fn compare_names_every_difference() {
    let plugin = testing::Plugin::from_descriptor(spare_cpu(), "{}").unwrap();
    let cycle = plugin.run(
        &Pod::new("web").request("cpu", 500),
        &[Node::new("a").allocatable("cpu", 100)],
    );
    let diff = testing::compare(&cycle, &[Row::new("a").score(100)]);
    assert!(
        diff.starts_with(
            "a: expected filter Success \"\", got Unschedulable \"node(s) lack spare CPU\"\n\
             a: expected score 100, got -\nthe cycle:\n"
        ),
        "{diff}"
    );
    assert_eq!(
        testing::compare(
            &cycle,
            &[Row::new("a").filter(SCHEDPLUG_UNSCHEDULABLE, "node(s) lack spare CPU")]
        ),
        ""
    );
}

#[test]
fn create_rejections_are_the_hosts_sentences() {
    let err = testing::Plugin::from_descriptor(spare_cpu(), r#"{"nope": 1}"#)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "SpareCpu (schedplug_plugin_v1()) rejected its args: arg \"nope\" is not allowed; fix \
         its pluginConfig args (given: {\"nope\": 1})"
    );
}

/// Promises it ignores the pod's identity, but reads its name.
struct ReadsName;

impl Plugin for ReadsName {
    type PodState = ();
    const HINTS: u64 = SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(ReadsName)
    }
    fn filter(&self, pod: &PodView<'_>, _node: &NodeView<'_>, _: &()) -> Status {
        if pod.name().starts_with("web") {
            Status::success()
        } else {
            Status::unschedulable("not a web pod")
        }
    }
}

fn reads_name() -> testing::Plugin {
    let d = schedplug::plugin_descriptor!(
        ReadsName,
        name = "ReadsName",
        version = "1",
        hooks = [filter]
    );
    testing::Plugin::from_descriptor(d, "{}").unwrap()
}

#[test]
fn a_false_identity_promise_fails_the_cycle() {
    let plugin = reads_name();
    let cycle = plugin.run(&Pod::new("web-1").uid("u1"), &[Node::new("n1")]);
    let want = "ReadsName promised SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY (HINTS), but on \
                node \"n1\" pod \"web-1\" (uid \"u1\") got filter Success and a copy named \
                \"twin-of-web-1\" (uid \"twin-of-u1\") got filter Unschedulable (\"not a web \
                pod\"); drop the hint, or read neither the pod's name nor its uid in applies, \
                pod_begin and filter";
    assert_eq!(cycle.error.as_deref(), Some(want));
    assert_eq!(cycle.nodes[0].filter, Status::error(want));
}

/// Promises it reads only declared pod keys (it declares none), but its
/// gate reads the label "team" (team pods are skipped).
struct ReadsLabel;

impl Plugin for ReadsLabel {
    type PodState = ();
    const HINTS: u64 = SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(ReadsLabel)
    }
    fn applies(&self, pod: &PodView<'_>) -> bool {
        !pod.labels().contains_key("team")
    }
    fn filter(&self, _pod: &PodView<'_>, _node: &NodeView<'_>, _: &()) -> Status {
        Status::unschedulable("team pods stay out")
    }
}

#[test]
fn a_false_declared_keys_promise_fails_the_cycle_even_when_gated() {
    let d = schedplug::plugin_descriptor!(
        ReadsLabel,
        name = "ReadsLabel",
        version = "1",
        hooks = [applies, filter]
    );
    let plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    let want = "ReadsLabel promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (HINTS), but \
                on node \"n1\" pod \"p\" got applies false and a copy without its undeclared \
                labels (\"team\") and annotations (\"note\") and with the undeclared label and \
                annotation \"schedplug-kit.test/undeclared\": \"x\" got applies true, then \
                filter Unschedulable (\"team pods stay out\"); declare every pod label and \
                annotation key the plugin reads in applies, pod_begin and filter (declared \
                label keys: none; annotation keys: none), or drop the hint";
    let pod = Pod::new("p").label("team", "a").annotation("note", "n");
    let cycle = plugin.run(&pod, &[Node::new("n1")]);
    // The gate skipped the filter, and the promise is checked all the same.
    assert!(cycle.filter_skipped);
    assert_eq!(cycle.error.as_deref(), Some(want));
    assert_eq!(cycle.nodes[0].filter, Status::error(want));
    // Where the copy's answers match, nothing is reported.
    let cycle = plugin.run(&Pod::new("p"), &[Node::new("n1")]);
    cycle.assert_rows(&[Row::new("n1").filter(SCHEDPLUG_UNSCHEDULABLE, "team pods stay out")]);
}

/// Promises its filter ignores the node's pods, but reads requested.
struct ReadsRequested;

impl Plugin for ReadsRequested {
    type PodState = ();
    const HINTS: u64 = SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS;
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(ReadsRequested)
    }
    fn filter(&self, _pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Status {
        if node.requested().get("cpu") > 0 {
            Status::unschedulable("node(s) busy")
        } else {
            Status::success()
        }
    }
}

#[test]
fn a_false_node_pods_promise_is_an_error() {
    let d = schedplug::plugin_descriptor!(
        ReadsRequested,
        name = "ReadsRequested",
        version = "1",
        hooks = [filter]
    );
    let plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    let pod = Pod::new("p");
    let busy = Node::new("busy").requested("cpu", 1);
    assert_eq!(
        plugin.filter(&pod.view(), &busy.view()),
        Status::error(
            "ReadsRequested promised SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS (HINTS), but its \
             filter on node \"busy\" answered Unschedulable (\"node(s) busy\") with the node's \
             pods and Success without them; drop the hint, or read nothing of \
             node->requested, pod_count and pod_list"
        )
    );
    // An idle node keeps the promise.
    assert!(plugin
        .filter(&pod.view(), &Node::new("idle").view())
        .is_success());
}

/// Scores raw values outside [0, 100] with policy NONE.
struct Raw;

impl Plugin for Raw {
    type PodState = ();
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(Raw)
    }
    fn score(&self, _pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Result<i64, Status> {
        Ok(node.allocatable().get("cpu"))
    }
}

#[test]
fn an_out_of_range_score_fails_the_cycle_unclamped() {
    let d = schedplug::plugin_descriptor!(Raw, name = "Raw", version = "1", hooks = [score]);
    let plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    let cycle = plugin.run(
        &Pod::new("p"),
        &[
            Node::new("ok").allocatable("cpu", 100),
            Node::new("big").allocatable("cpu", 150),
        ],
    );
    assert_eq!(
        cycle.error.as_deref(),
        Some(
            "plugin Raw gave node \"big\" the score 150 with normalize policy NONE (declare \
             LINEAR or REVERSE, or implement normalize_score, to map raw values); scores must \
             be in [0, 100]"
        )
    );
    // No filter hook: every node passes with Skip; scores stay unnormalized.
    assert_eq!(cycle.nodes[1].filter.code(), SCHEDPLUG_SKIP);
    assert_eq!((cycle.nodes[1].raw, cycle.nodes[1].score), (150, 0));
    let mut scores = [NodeScore {
        node_name: "n",
        score: -1,
    }];
    assert!(plugin
        .normalize(&Pod::new("p").view(), &mut scores)
        .unwrap_err()
        .contains("the score -1 with"));
}

/// Normalizes by itself, badly for a node named "bad".
struct BadNormalize;

impl Plugin for BadNormalize {
    type PodState = ();
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(BadNormalize)
    }
    fn score(&self, _pod: &PodView<'_>, _node: &NodeView<'_>, _: &()) -> Result<i64, Status> {
        Ok(1)
    }
    fn normalize_score(
        &self,
        _pod: &PodView<'_>,
        _state: &(),
        scores: &mut [NodeScore<'_>],
    ) -> Status {
        for s in scores {
            s.score = if s.node_name == "bad" { 101 } else { 100 };
        }
        Status::success()
    }
}

#[test]
fn a_normalize_score_out_of_range_is_named() {
    let d = schedplug::plugin_descriptor!(
        BadNormalize,
        name = "BadNormalize",
        version = "1",
        hooks = [score, normalize_score]
    );
    let plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    let cycle = plugin.run(&Pod::new("p"), &[Node::new("good"), Node::new("bad")]);
    assert_eq!(
        cycle.error.as_deref(),
        Some(
            "plugin BadNormalize gave node \"bad\" the score 101 after its normalize_score(); \
             scores must be in [0, 100]"
        )
    );
    let cycle = plugin.run(&Pod::new("p"), &[Node::new("good")]);
    cycle.assert_rows(&[Row::new("good").filter(SCHEDPLUG_SKIP, "").score(100)]);
}

/// Reads declared data; gates on a label; fails pod_begin on request.
struct Declared;

impl Plugin for Declared {
    type PodState = ();
    const DATA: u64 = SCHEDPLUG_DATA_POD_NODE_NAME;
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(Declared)
    }
    fn pod_begin(&self, pod: &PodView<'_>, gates: &mut Gates) -> Result<(), Status> {
        if pod.labels().contains_key("fail") {
            return Err(Status::error("the pod asked to fail"));
        }
        gates.score = pod.labels().contains_key("score");
        Ok(())
    }
    fn filter(&self, pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Status {
        // Sees its own declared datum, never undeclared ones.
        if !pod.priority_class_name().is_empty() || node.unschedulable() {
            return Status::error("undeclared data was sent");
        }
        if pod.node_name().is_empty() || pod.node_name() == node.name() {
            Status::success()
        } else {
            Status::unschedulable_and_unresolvable("the pod is bound elsewhere")
        }
    }
    fn score(&self, _pod: &PodView<'_>, _node: &NodeView<'_>, _: &()) -> Result<i64, Status> {
        Ok(100)
    }
}

#[test]
fn hooks_see_only_declared_data_and_gates_hold() {
    let d = schedplug::plugin_descriptor!(
        Declared,
        name = "Declared",
        version = "1",
        hooks = [pod_begin, filter, score]
    );
    let mut plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    assert_eq!(plugin.data(), SCHEDPLUG_DATA_POD_NODE_NAME);
    let pod = Pod::new("p")
        .node_name("n2")
        .priority_class_name("high")
        .toleration(Toleration::exists("k").effect("NoSchedule"));
    let nodes = [Node::new("n1").unschedulable(true), Node::new("n2")];
    // The filter reads the priority class and cordon it did not declare
    // (to say they were sent): the kit names them, beside the host's rows.
    let mut cycle = plugin.run(&pod, &nodes);
    assert_eq!(
        cycle.error.take().as_deref(),
        Some(
            "Declared reads data it did not declare (SCHEDPLUG_DATA_POD_PRIORITY_CLASS and \
             SCHEDPLUG_DATA_NODE_UNSCHEDULABLE): on node \"n1\" its filter answered \
             UnschedulableAndUnresolvable (\"the pod is bound elsewhere\") without them (as \
             schedplug-host sends it) and Error (\"undeclared data was sent\") with them (as the \
             test gave it); add SCHEDPLUG_DATA_POD_PRIORITY_CLASS and \
             SCHEDPLUG_DATA_NODE_UNSCHEDULABLE to the data it declares (DATA in its impl \
             Plugin, or settings.data in configure)"
        )
    );
    assert!(cycle.score_skipped && !cycle.filter_skipped);
    cycle.assert_rows(&[
        Row::new("n1").filter(
            SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
            "the pod is bound elsewhere",
        ),
        Row::new("n2"),
    ]);
    let mut cycle = plugin.run(&pod.clone().label("score", ""), &nodes[1..]);
    assert!(cycle.error.take().unwrap().starts_with(
        "Declared reads data it did not declare (SCHEDPLUG_DATA_POD_PRIORITY_CLASS): on node \"n2\""
    ));
    cycle.assert_rows(&[Row::new("n2").score(100)]);
    let cycle = plugin.run(&pod.clone().label("fail", ""), &nodes);
    assert_eq!(
        cycle.error.as_deref(),
        Some("plugin Declared failed to prepare the pod (pod_begin): the pod asked to fail")
    );
    assert!(cycle.nodes.is_empty());
    // In a profile where another plugin declared more, it sees more.
    plugin.send_data(SCHEDPLUG_DATA_POD_PRIORITY_CLASS);
    let cycle = plugin.run(&pod, &nodes[1..]);
    assert_eq!(cycle.error.as_deref(), Some("undeclared data was sent"));
}

#[test]
fn broken_descriptors_are_refused_with_the_hosts_sentence() {
    extern "C" fn null_entry() -> *const schedplug_plugin {
        std::ptr::null()
    }
    let err = testing::Plugin::load(null_entry, "{}").err().unwrap();
    assert_eq!(
        err.to_string(),
        "schedplug_plugin_v1(): `schedplug_plugin_v1()` returned NULL; it must return a \
         pointer to the plugin's static descriptor"
    );
    let mut d = Box::new(*spare_cpu());
    d.abi_version = 2;
    let err = testing::Plugin::from_descriptor(Box::leak(d), "{}")
        .err()
        .unwrap();
    assert!(
        err.0
            .contains("built for schedplug ABI version 2, this host speaks version 1"),
        "{err}"
    );
    let mut d = Box::new(*spare_cpu());
    d.name = b"spare_cpu\0".as_ptr() as *const _;
    let err = testing::Plugin::from_descriptor(Box::leak(d), "{}")
        .err()
        .unwrap();
    assert!(err.0.contains("rename it (e.g. \"SpareCpu\")"), "{err}");
}

/// Reads typed args in create().
struct Configured {
    zone_label: String,
    max_pods: i64,
}

impl Plugin for Configured {
    type PodState = ();
    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        let args = ctx.args()?;
        args.allow_only(&["zoneLabel", "maxPods"])?;
        Ok(Configured {
            zone_label: args.get_str("zoneLabel")?.unwrap_or("zone").to_string(),
            max_pods: args.get_int("maxPods", 1, 110)?.unwrap_or(110),
        })
    }
    fn filter(&self, _pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Status {
        if i64::from(node.pod_count()) >= self.max_pods {
            return Status::unschedulable("node(s) are full");
        }
        match node.labels().get(&self.zone_label) {
            Some(_) => Status::success(),
            None => Status::unschedulable_and_unresolvable("node(s) have no zone"),
        }
    }
}

#[test]
fn typed_args_errors_reach_the_host_as_sentences() {
    let d = schedplug::plugin_descriptor!(
        Configured,
        name = "Configured",
        version = "1",
        hooks = [filter]
    );
    let plugin =
        testing::Plugin::from_descriptor(d, r#"{"zoneLabel": "z", "maxPods": 2}"#).unwrap();
    let cycle = plugin.run(
        &Pod::new("p"),
        &[
            Node::new("a").label("z", "1"),
            Node::new("b").label("z", "1").pod_count(2),
            Node::new("c"),
        ],
    );
    cycle.assert_rows(&[
        Row::new("a"),
        Row::new("b").filter(SCHEDPLUG_UNSCHEDULABLE, "node(s) are full"),
        Row::new("c").filter(
            SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node(s) have no zone",
        ),
    ]);
    let err = testing::Plugin::from_descriptor(d, r#"{"maxPods": 0}"#)
        .err()
        .unwrap();
    assert_eq!(
        err.0,
        "Configured (schedplug_plugin_v1()) rejected its args: arg \"maxPods\" must be an \
         integer from 1 to 110, got 0; fix its pluginConfig args (given: {\"maxPods\": 0})"
    );
    let err = testing::Plugin::from_descriptor(d, r#"{"zonelabel": "z"}"#)
        .err()
        .unwrap();
    assert!(
        err.0.contains(
            "unknown arg \"zonelabel\"; did you mean \"zoneLabel\"? arg names are case-sensitive"
        ),
        "{err}"
    );
}

/// Reads every v1.2 / v1.3 array it declares, and keeps what it saw
/// (longer than a reason may be).
struct Inventory;

static SEEN: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

impl Plugin for Inventory {
    type PodState = ();
    const DATA: u64 = SCHEDPLUG_DATA_POD_OWNERS
        | SCHEDPLUG_DATA_POD_CONTAINERS
        | SCHEDPLUG_DATA_POD_VOLUMES
        | SCHEDPLUG_DATA_NODE_CONDITIONS
        | SCHEDPLUG_DATA_NODE_PODS
        | SCHEDPLUG_DATA_NODE_IMAGES;
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(Inventory)
    }
    fn filter(&self, pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Status {
        let mut seen = Vec::new();
        for t in pod.tolerations().iter() {
            seen.push(format!("toleration {}:{}:{:?}", t.key, t.op, t.seconds));
        }
        if let Some(c) = pod.controller() {
            seen.push(format!("controller {}/{}", c.kind, c.name));
        }
        seen.push(format!("owners {}", pod.owners().len()));
        for c in pod.containers().iter() {
            let ports: Vec<String> = c
                .ports()
                .iter()
                .map(|p| format!("{}:{}/{}", p.container_port, p.host_port, p.protocol))
                .collect();
            seen.push(format!(
                "container {} {} cpu {}/{} ports {}",
                c.name(),
                c.image(),
                c.requests().get("cpu"),
                c.limits().get("cpu"),
                ports.join(",")
            ));
        }
        for v in pod.volumes().iter() {
            seen.push(format!(
                "volume {} {} {} {}",
                v.name, v.source, v.claim_name, v.read_only
            ));
        }
        seen.push(format!("ready {:?}", node.condition("Ready")));
        for p in node.pods().iter() {
            seen.push(format!(
                "pod {}/{} app={:?} cpu {} prio {} owner {}",
                p.namespace(),
                p.name(),
                p.labels().get("app"),
                p.requests().get("cpu"),
                p.priority(),
                p.owner_kind()
            ));
        }
        seen.push(format!(
            "pods {} requested cpu {}",
            node.pod_count(),
            node.requested().get("cpu")
        ));
        for i in node.images().iter() {
            let names: Vec<&str> = i.names().iter().collect();
            seen.push(format!("image {} {}", names.join("+"), i.size_bytes()));
        }
        seen.push(format!("has nginx {}", node.has_image("nginx:1.27")));
        // Not declared: never sent.
        seen.push(format!("nominated {:?}", pod.nominated_node_name()));
        *SEEN.lock().unwrap() = seen.join("; ");
        Status::success()
    }
}

#[test]
fn declared_arrays_reach_the_views() {
    use testing::{Container, NodePod};
    let d = schedplug::plugin_descriptor!(
        Inventory,
        name = "Inventory",
        version = "1",
        hooks = [filter]
    );
    let plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    let pod = Pod::new("web-1")
        .toleration(Toleration::exists("gpu").seconds(30))
        .owner("ReplicaSet", "web-abc", true)
        .owner("Other", "x", false)
        .container(
            Container::new("app", "nginx:1.27")
                .request("cpu", 250)
                .limit("cpu", 500)
                .port(80, 8080, "TCP", ""),
        )
        .container(Container::new("side", "busybox").port(53, 0, "UDP", "127.0.0.1"))
        .volume("data", "persistentVolumeClaim", "data-pvc", true)
        .nominated_node_name("n9");
    let node = Node::new("n1")
        .condition("Ready", "False")
        .condition("Ready", "True")
        .pod(
            NodePod::new("b")
                .namespace("kube")
                .request("cpu", 100)
                .owner_kind("DaemonSet"),
        )
        .pod(
            NodePod::new("a")
                .label("app", "web")
                .request("cpu", 200)
                .priority(5),
        )
        .image(&["nginx:1.27", "nginx@sha256:abc"], 1000);
    plugin.run(&pod, &[node]).assert_rows(&[Row::new("n1")]);
    assert_eq!(
        *SEEN.lock().unwrap(),
        "toleration gpu:Exists:Some(30); controller ReplicaSet/web-abc; owners 2; container app \
         nginx:1.27 cpu 250/500 ports 80:8080/TCP; container side busybox cpu 0/0 ports \
         53:0/UDP; volume data persistentVolumeClaim data-pvc true; ready Some(\"True\"); pod \
         default/a app=Some(\"web\") cpu 200 prio 5 owner ; pod kube/b app=None cpu 100 prio 0 \
         owner DaemonSet; pods 2 requested cpu 300; image nginx:1.27+nginx@sha256:abc 1000; has \
         nginx true; nominated \"\""
    );
}

/// Its pod_begin picks a favourite node from an annotation, once per pod;
/// normalize_score reads it from the state.
struct Favourite;

impl Plugin for Favourite {
    type PodState = String;
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(Favourite)
    }
    fn pod_begin(&self, pod: &PodView<'_>, _gates: &mut Gates) -> Result<String, Status> {
        Ok(pod.annotations().get("favourite").unwrap_or("").to_string())
    }
    fn score(&self, _pod: &PodView<'_>, _node: &NodeView<'_>, _: &String) -> Result<i64, Status> {
        Ok(50)
    }
    fn normalize_score(
        &self,
        _pod: &PodView<'_>,
        favourite: &String,
        scores: &mut [NodeScore<'_>],
    ) -> Status {
        for s in scores {
            if s.node_name == favourite {
                s.score = 100;
            }
        }
        Status::success()
    }
}

#[test]
fn normalize_score_gets_the_pods_state() {
    let d = schedplug::plugin_descriptor!(
        Favourite,
        name = "Favourite",
        version = "1",
        hooks = [pod_begin, score, normalize_score]
    );
    let plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    let cycle = plugin.run(
        &Pod::new("p").annotation("favourite", "b"),
        &[Node::new("a"), Node::new("b")],
    );
    cycle.assert_rows(&[
        Row::new("a").filter(SCHEDPLUG_SKIP, "").score(50),
        Row::new("b").filter(SCHEDPLUG_SKIP, "").score(100),
    ]);
    // Without a state (a host that never calls pod_begin), the Rust layer
    // builds one for the call.
    let pod = Pod::new("p").annotation("favourite", "a");
    let mut scores = [NodeScore {
        node_name: "a",
        score: 50,
    }];
    plugin.normalize(&pod.view(), &mut scores).unwrap();
    assert_eq!(scores[0].score, 100);
}

/// Reads the v1.3 terms it declares, and keeps what it saw.
struct Terms;

static TERMS_SEEN: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

fn selector_text(s: &schedplug::LabelSelector<'_>) -> String {
    if !s.present() {
        return "unset".to_string();
    }
    let labels: Vec<String> = s
        .match_labels()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let exprs: Vec<String> = s
        .match_expressions()
        .iter()
        .map(|r| {
            format!(
                "{} {} {}",
                r.key,
                r.op,
                r.values.iter().collect::<Vec<_>>().join("|")
            )
        })
        .collect();
    format!("{{{}; {}}}", labels.join(","), exprs.join(","))
}

impl Plugin for Terms {
    type PodState = ();
    const DATA: u64 = SCHEDPLUG_DATA_POD_NODE_AFFINITY
        | SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD
        | SCHEDPLUG_DATA_POD_AFFINITY;
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(Terms)
    }
    fn filter(&self, pod: &PodView<'_>, _node: &NodeView<'_>, _: &()) -> Status {
        let mut seen = Vec::new();
        for (kind, terms) in [
            ("required", pod.node_affinity_required()),
            ("preferred", pod.node_affinity_preferred()),
        ] {
            for t in terms.iter() {
                let exprs: Vec<String> = t
                    .match_expressions()
                    .iter()
                    .map(|r| {
                        format!(
                            "{} {} {}",
                            r.key,
                            r.op,
                            r.values.iter().collect::<Vec<_>>().join("|")
                        )
                    })
                    .collect();
                let fields: Vec<&str> = t.match_fields().iter().map(|r| r.key).collect();
                seen.push(format!(
                    "node {kind} w{} [{}] fields [{}]",
                    t.weight(),
                    exprs.join(","),
                    fields.join(",")
                ));
            }
        }
        for c in pod.topology_spread().iter() {
            seen.push(format!(
                "spread {} {} {} {} keys {}",
                c.max_skew(),
                c.topology_key(),
                c.when_unsatisfiable(),
                selector_text(&c.label_selector()),
                c.match_label_keys().iter().collect::<Vec<_>>().join(",")
            ));
        }
        for (kind, terms) in [
            ("affinity required", pod.pod_affinity_required()),
            ("affinity preferred", pod.pod_affinity_preferred()),
            ("anti required", pod.pod_anti_affinity_required()),
            ("anti preferred", pod.pod_anti_affinity_preferred()),
        ] {
            for t in terms.iter() {
                seen.push(format!(
                    "{kind} w{} {} {} ns {} nssel {}",
                    t.weight(),
                    t.topology_key(),
                    selector_text(&t.label_selector()),
                    t.namespaces().iter().collect::<Vec<_>>().join(","),
                    selector_text(&t.namespace_selector())
                ));
            }
        }
        *TERMS_SEEN.lock().unwrap() = seen.join("; ");
        Status::success()
    }
}

#[test]
fn declared_terms_reach_the_views() {
    use testing::{AffinityTerm, NodeTerm, Requirement, Selector, SpreadConstraint};
    let d = schedplug::plugin_descriptor!(Terms, name = "Terms", version = "1", hooks = [filter]);
    let plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    let pod = Pod::new("p")
        .node_affinity_required(NodeTerm {
            match_expressions: vec![Requirement::new("zone", "In", &["a", "b"])],
            match_fields: vec![Requirement::new("metadata.name", "In", &["n1"])],
        })
        .node_affinity_preferred(
            20,
            NodeTerm::expression(Requirement::new("ssd", "Exists", &[])),
        )
        .topology_spread(SpreadConstraint {
            label_selector: Some(
                Selector::labels(&[("app", "web")]).expression(Requirement::new(
                    "tier",
                    "NotIn",
                    &["db"],
                )),
            ),
            match_label_keys: vec!["pod-template-hash".to_string()],
            ..SpreadConstraint::new("zone")
        })
        .pod_affinity_required(AffinityTerm {
            label_selector: Some(Selector::labels(&[("app", "cache")])),
            ..AffinityTerm::new("host")
        })
        .pod_anti_affinity_preferred(
            50,
            AffinityTerm {
                namespaces: vec!["a".to_string(), "b".to_string()],
                namespace_selector: Some(Selector::default()),
                ..AffinityTerm::new("zone")
            },
        );
    plugin
        .run(&pod, &[Node::new("n1")])
        .assert_rows(&[Row::new("n1")]);
    assert_eq!(
        *TERMS_SEEN.lock().unwrap(),
        "node required w0 [zone In a|b] fields [metadata.name]; node preferred w20 [ssd Exists ] \
         fields []; spread 1 zone DoNotSchedule {app=web; tier NotIn db} keys pod-template-hash; \
         affinity required w0 host {app=cache; } ns  nssel unset; anti preferred w50 zone unset \
         ns a,b nssel {; }"
    );
}

/// Declares the label key "team" and the annotation key "note" (v1.4),
/// but also reads the label "tier" when the pod has a note.
struct DeclaredKeys;

impl Plugin for DeclaredKeys {
    type PodState = ();
    const HINTS: u64 = SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;
    const POD_LABEL_KEYS: &'static [&'static str] = &["team", "app"];
    const POD_ANNOTATION_KEYS: &'static [&'static str] = &["note"];
    fn create(_: &Create<'_>) -> Result<Self, Status> {
        Ok(DeclaredKeys)
    }
    fn filter(&self, pod: &PodView<'_>, _node: &NodeView<'_>, _: &()) -> Status {
        if pod.labels().get("team") == Some("red") {
            return Status::unschedulable("red team");
        }
        if pod.annotations().contains_key("note") && pod.labels().contains_key("tier") {
            return Status::unschedulable("noted tier");
        }
        Status::success()
    }
}

#[test]
fn declared_pod_keys_reach_the_host_and_bound_the_check() {
    let d = schedplug::plugin_descriptor!(
        DeclaredKeys,
        name = "DeclaredKeys",
        version = "1",
        hooks = [filter]
    );
    let plugin = testing::Plugin::from_descriptor(d, "{}").unwrap();
    let (labels, annotations) = plugin.pod_keys();
    assert_eq!(
        (labels, annotations),
        (
            &["app".to_string(), "team".to_string()][..],
            &["note".to_string()][..]
        )
    );
    // Reading declared keys only: kept.
    let pod = Pod::new("p").label("team", "red").label("tier", "web");
    plugin
        .run(&pod, &[Node::new("n1")])
        .assert_rows(&[Row::new("n1").filter(SCHEDPLUG_UNSCHEDULABLE, "red team")]);
    // Reading an undeclared one: caught, naming the declared keys.
    let pod = Pod::new("p").label("tier", "web").annotation("note", "x");
    let err = plugin.run(&pod, &[Node::new("n1")]).error.unwrap();
    assert!(
        err.ends_with(
            "got filter Unschedulable (\"noted tier\") and a copy without its undeclared labels \
             (\"tier\") and annotations (none) and with the undeclared label and annotation \
             \"schedplug-kit.test/undeclared\": \"x\" got filter Success; declare every pod label \
             and annotation key the plugin reads in applies, pod_begin and filter (declared label \
             keys: \"app\", \"team\"; annotation keys: \"note\"), or drop the hint"
        ),
        "{err}"
    );
}

/// Builds an SDK example plugin written in C into a .so with `cc` ($CC),
/// as tests/layout.rs compiles its program.
fn build_c_example(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let sdk = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = dir.join(format!("lib{name}-{}.so", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut words = cc.split_whitespace();
    let built = std::process::Command::new(words.next().expect("CC is empty"))
        .args(words)
        .args(["-std=c11", "-shared", "-fPIC", "-fvisibility=hidden", "-I"])
        .arg(sdk.join("include"))
        .arg("-o")
        .arg(&out)
        .arg(sdk.join("examples").join(format!("{name}.c")))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    out
}

#[test]
fn c_plugins_load_from_their_files_with_the_hosts_arg_services() {
    let so = build_c_example("node_number");
    let plugin = testing::Plugin::open(&so, r#"{"reverse": false}"#).unwrap();
    assert_eq!(plugin.name(), "NodeNumber");
    assert_eq!(plugin.data(), SCHEDPLUG_DATA_POD_NODE_NAME);
    let cycle = plugin.run(
        &Pod::new("p").node_name("node-1"),
        &[Node::new("a-1"), Node::new("b-2")],
    );
    cycle.assert_rows(&[
        Row::new("a-1").filter(SCHEDPLUG_SKIP, "").score(10),
        Row::new("b-2").filter(SCHEDPLUG_SKIP, "").score(0),
    ]);
    let reversed = testing::Plugin::open(&so, r#"{"reverse": true}"#).unwrap();
    let cycle = reversed.run(&Pod::new("p").node_name("node-1"), &[Node::new("a-1")]);
    assert_eq!(cycle.nodes[0].score, 0);
    // The services' sentences reach the host's message.
    let file = so.display().to_string();
    let err = testing::Plugin::open(&so, r#"{"reverse": 1}"#)
        .err()
        .unwrap();
    assert_eq!(
        err.0,
        format!(
            "NodeNumber ({file}) rejected its args: arg \"reverse\" must be true or false, got 1; \
             fix its pluginConfig args (given: {{\"reverse\": 1}})"
        )
    );
    let err = testing::Plugin::open(&so, r#"{"revers": true}"#)
        .err()
        .unwrap();
    assert!(
        err.0
            .contains("unknown arg \"revers\"; did you mean \"reverse\"? known args: reverse"),
        "{err}"
    );
    let err = testing::Plugin::open(&so, "{").err().unwrap();
    assert!(
        err.0
            .contains("rejected its args: args are not valid JSON: {"),
        "{err}"
    );

    let zone = testing::Plugin::open(&build_c_example("zone_required"), "{}").unwrap();
    let cycle = zone.run(
        &Pod::new("web"),
        &[
            Node::new("zoned").label("topology.kubernetes.io/zone", "a"),
            Node::new("bare"),
        ],
    );
    assert_eq!(cycle.nodes[0].filter.code(), SCHEDPLUG_SUCCESS);
    assert_eq!(
        cycle.nodes[1].filter.code(),
        SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE
    );

    let not_so = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let err = testing::Plugin::open(&not_so, "{}").err().unwrap();
    assert!(
        err.0
            .contains("Cargo.toml: not a shared object the host can load (dlopen says: "),
        "{err}"
    );
}

/// Promises its scores ignore the pod's identity, but gives pods whose
/// name starts with "x" 50 more (score) or reverses their normalized
/// scores (normalize); 10 per pod on the node is allowed.
struct ScoresName {
    in_normalize: bool,
}

impl Plugin for ScoresName {
    type PodState = ();
    const HINTS: u64 = SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;
    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        let args = ctx.args()?;
        args.allow_only(&["inNormalize"])?;
        Ok(ScoresName {
            in_normalize: args.get_bool("inNormalize")?.unwrap_or(false),
        })
    }
    fn score(&self, pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Result<i64, Status> {
        let bonus = if !self.in_normalize && pod.name().starts_with('x') {
            50
        } else {
            0
        };
        Ok(10 * i64::from(node.pod_count()) + bonus)
    }
    fn normalize_score(&self, pod: &PodView<'_>, _: &(), scores: &mut [NodeScore<'_>]) -> Status {
        for s in scores.iter_mut() {
            s.score = s.score.clamp(0, 100);
            if self.in_normalize && pod.name().starts_with('x') {
                s.score = 100 - s.score;
            }
        }
        Status::success()
    }
}

fn scores_name(args: &str) -> testing::Plugin {
    let d = schedplug::plugin_descriptor!(
        ScoresName,
        name = "ScoresName",
        version = "1",
        hooks = [score, normalize_score]
    );
    testing::Plugin::from_descriptor(d, args).unwrap()
}

const SCORE_ADVICE: &str = "; drop the hint, or read neither the pod's name nor its uid in \
                            applies, pod_begin, score and normalize_score";

#[test]
fn a_false_score_identity_promise_fails_the_cycle_once() {
    let plugin = scores_name("{}");
    let nodes = [
        Node::new("idle"),
        Node::new("busy").pod_count(2),
        Node::new("one").pod_count(1),
    ];
    // Scores that follow the node's pods keep the promise.
    plugin.run(&Pod::new("web"), &nodes).assert_rows(&[
        Row::new("idle").filter(SCHEDPLUG_SKIP, "").score(0),
        Row::new("busy").filter(SCHEDPLUG_SKIP, "").score(20),
        Row::new("one").filter(SCHEDPLUG_SKIP, "").score(10),
    ]);
    let xenon = Pod::new("xenon").uid("u1");
    let err = plugin.score(&xenon.view(), &nodes[1].view()).unwrap_err();
    assert_eq!(
        err,
        format!(
            "ScoresName promised SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY (HINTS), but pod \
             \"xenon\" (uid \"u1\") got score \"busy\" 70 and a copy named \"twin-of-xenon\" \
             (uid \"twin-of-u1\") got score \"busy\" 20{SCORE_ADVICE}"
        )
    );
    let cycle = plugin.run(&xenon, &nodes);
    assert_eq!(
        cycle.error.as_deref(),
        Some(
            format!(
                "ScoresName promised SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY (HINTS), but pod \
                 \"xenon\" (uid \"u1\") got score \"idle\" 50, \"busy\" 70, \"one\" 60, \
                 normalized \"idle\" 50, \"busy\" 70, \"one\" 60 and a copy named \
                 \"twin-of-xenon\" (uid \"twin-of-u1\") got score \"idle\" 0, \"busy\" 20, \
                 \"one\" 10, normalized \"idle\" 0, \"busy\" 20, \"one\" 10{SCORE_ADVICE}"
            )
            .as_str()
        )
    );
    let diff = testing::compare(&cycle, &[Row::new("idle")]);
    assert_eq!(diff.matches("promised ").count(), 1, "{diff}");
}

#[test]
fn a_false_score_identity_promise_in_normalize_is_caught() {
    let plugin = scores_name(r#"{"inNormalize": true}"#);
    let nodes = [Node::new("idle"), Node::new("busy").pod_count(2)];
    assert_eq!(
        plugin.score(&Pod::new("xenon").view(), &nodes[1].view()),
        Ok(20)
    );
    assert!(plugin.run(&Pod::new("web"), &nodes).error.is_none());
    let mut scores = [
        NodeScore {
            node_name: "idle",
            score: 0,
        },
        NodeScore {
            node_name: "busy",
            score: 20,
        },
    ];
    let err = plugin
        .normalize(&Pod::new("xenon").uid("u1").view(), &mut scores)
        .unwrap_err();
    assert_eq!(
        err,
        "ScoresName promised SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY (HINTS), but normalizing \
         the raw scores \"idle\" 0, \"busy\" 20, pod \"xenon\" (uid \"u1\") got normalized \
         \"idle\" 100, \"busy\" 80 and a copy named \"twin-of-xenon\" (uid \"twin-of-u1\") got \
         normalized \"idle\" 0, \"busy\" 20; drop the hint, or read neither the pod's name nor \
         its uid in applies, pod_begin and normalize_score"
    );
    let error = plugin.run(&Pod::new("xenon"), &nodes).error.unwrap();
    assert!(
        error.contains("normalized \"idle\" 100, \"busy\" 80 and a copy"),
        "{error}"
    );
}

#[test]
fn a_broken_promise_is_reported_once_per_cycle() {
    let plugin = reads_name();
    // The copy "twin-of-web-1" is not a web pod: the promise breaks on
    // the first node; the others keep the plugin's own verdict.
    let cycle = plugin.run(
        &Pod::new("web-1"),
        &[Node::new("a"), Node::new("b"), Node::new("c")],
    );
    assert_eq!(cycle.nodes[0].filter.code(), SCHEDPLUG_ERROR);
    for row in &cycle.nodes[1..] {
        assert_eq!(row.filter, Status::success());
    }
    let diff = testing::compare(&cycle, &[Row::new("a"), Row::new("b"), Row::new("c")]);
    assert_eq!(diff.matches("promised ").count(), 1, "{diff}");
    assert!(
        diff.contains("a: expected filter Success \"\", got Error (the cycle's error)\n"),
        "{diff}"
    );
    assert!(
        diff.contains("the cycle:\na  Error (the cycle's error)  score=-\n"),
        "{diff}"
    );
    assert_eq!(cycle.table().matches("promised ").count(), 1);
}

#[test]
fn the_kit_refuses_a_score_promise_without_score() {
    // The export layer refuses this at compile time; a hand-made
    // descriptor meets the host's rule.
    let mut d = *schedplug::plugin_descriptor!(
        ScoresName,
        name = "ScoresName",
        version = "1",
        hooks = [score]
    );
    d.score = None;
    let err = testing::Plugin::from_descriptor(Box::leak(Box::new(d)), "{}")
        .err()
        .unwrap();
    assert!(
        err.to_string().contains(
            "hints has SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, a promise about score() and \
             normalize_score(), but the plugin has no score() hook; drop the hint, or implement \
             score()"
        ),
        "{err}"
    );
}
