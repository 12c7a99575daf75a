//! A test kit: build pods and nodes in a few lines and run a plugin's
//! exported C entry points the way schedplug-host does (the Rust twin of
//! `sdk/include/schedplug/testing.hpp`).
//!
//! ```
//! use schedplug::abi::SCHEDPLUG_UNSCHEDULABLE;
//! use schedplug::testing::{Node, Pod, Row};
//! # use schedplug::{Create, Plugin, Status};
//! # struct ZoneRequired;
//! # impl Plugin for ZoneRequired {
//! #     type PodState = ();
//! #     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(ZoneRequired) }
//! #     fn filter(&self, pod: &schedplug::Pod<'_>, node: &schedplug::Node<'_>, _: &()) -> Status {
//! #         match pod.annotations().get("zone") {
//! #             Some(z) if node.labels().get("zone") != Some(z) => Status::unschedulable("node(s) in another zone"),
//! #             _ => Status::success(),
//! #         }
//! #     }
//! # }
//! # schedplug::export_plugin!(ZoneRequired, name = "ZoneRequired", version = "1", hooks = [filter]);
//!
//! // In the plugin crate's tests: its own export_plugin! entry point.
//! let plugin = schedplug::testing::Plugin::load(schedplug_plugin_v1, "{}").unwrap();
//! let pod = Pod::new("web").annotation("zone", "a");
//! let cycle = plugin.run(&pod, &[Node::new("n1").label("zone", "a"),
//!                                Node::new("n2").label("zone", "b")]);
//! cycle.assert_rows(&[
//!     Row::new("n1"),
//!     Row::new("n2").filter(SCHEDPLUG_UNSCHEDULABLE, "node(s) in another zone"),
//! ]);
//! ```
//!
//! What the host does around each call is done here with the host's rules
//! and messages (`sdk/include/schedplug/runtime.hpp`, which schedplug-host
//! compiles, and `host/plugin/plugin_instance.cpp`): the descriptor checks,
//! create() with the settings it may change and their checks, pod_begin /
//! pod_end (or applies), the status codes a hook may return, the
//! normalization policies and the [0, 100] check, and the promises of
//! SCHEDPLUG_HINT_* (a broken one is an ERROR naming it). Hooks see only
//! the data the plugin declared (SCHEDPLUG_DATA_*), as in a profile where
//! no other plugin declared more. create() gets the host's typed-args
//! services (plugin.h v1.1), read with [`Args`](crate::Args).
//! [`Plugin::open`] loads a plugin file (in any language) with dlopen, as
//! the host does. What the kit does not do: the host's file checks,
//! deadlines, refresh threads and parallel calls.
//!
//! Declared events (SCHEDPLUG_EVENT_*): [`Plugin::requeue_problem`] says
//! whether the events a plugin declared requeue a pod it rejected on a node
//! before a change and passes after it; [`Plugin::run_after`] checks that
//! on every node of a cycle; [`change_events`] classifies a change.

use crate::abi::*;
use crate::plugin::NodeScore;
use crate::status::Status;
use crate::view::read_field;
use std::any::Any;
use std::collections::BTreeMap;
use std::ffi::{c_void, CStr};
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::raw::c_char;
use std::ptr;

mod events;
mod host;
pub use events::{change_events, event_names};
use host::HostContext;

// ---------------------------------------------------------------------------
// Pods and nodes
// ---------------------------------------------------------------------------

/// A pod toleration. `op` is "Equal" (the default) or "Exists"; an empty
/// `effect` matches every effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toleration {
    pub key: String,
    pub op: String,
    pub value: String,
    pub effect: String,
    pub seconds: Option<i64>,
}

impl Toleration {
    /// `key=value` with op "Equal", every effect.
    pub fn equal(key: &str, value: &str) -> Toleration {
        Toleration {
            key: key.to_string(),
            op: "Equal".to_string(),
            value: value.to_string(),
            effect: String::new(),
            seconds: None,
        }
    }

    /// `key` with op "Exists", every effect.
    pub fn exists(key: &str) -> Toleration {
        Toleration {
            op: "Exists".to_string(),
            ..Toleration::equal(key, "")
        }
    }

    /// Only for taints of `effect`.
    pub fn effect(mut self, effect: &str) -> Toleration {
        self.effect = effect.to_string();
        self
    }

    /// tolerationSeconds.
    pub fn seconds(mut self, seconds: i64) -> Toleration {
        self.seconds = Some(seconds);
        self
    }
}

/// One app container of a pod (SCHEDPLUG_DATA_POD_CONTAINERS, ABI v1.2),
/// built in a line: `Container::new("app", "nginx:1.27").request("cpu", 250)
/// .limit("cpu", 500).port(8080, 0, "TCP", "")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Container {
    name: String,
    image: String,
    requests: BTreeMap<String, i64>,
    limits: BTreeMap<String, i64>,
    ports: Vec<(i32, i32, String, String)>,
}

impl Container {
    pub fn new(name: &str, image: &str) -> Container {
        Container {
            name: name.to_string(),
            image: image.to_string(),
            requests: BTreeMap::new(),
            limits: BTreeMap::new(),
            ports: Vec::new(),
        }
    }
    pub fn request(mut self, resource: &str, value: i64) -> Container {
        self.requests.insert(resource.to_string(), value);
        self
    }
    pub fn limit(mut self, resource: &str, value: i64) -> Container {
        self.limits.insert(resource.to_string(), value);
        self
    }
    /// A port: `host_port` 0 for none, `protocol` "TCP", "UDP" or "SCTP",
    /// `host_ip` "" for every address.
    pub fn port(
        mut self,
        container_port: i32,
        host_port: i32,
        protocol: &str,
        host_ip: &str,
    ) -> Container {
        self.ports.push((
            container_port,
            host_port,
            protocol.to_string(),
            host_ip.to_string(),
        ));
        self
    }
}

/// One pod already on a node (SCHEDPLUG_DATA_NODE_PODS, ABI v1.2):
/// `NodePod::new("web-1").namespace("shop").label("app", "web")`. The name
/// comes first and alone, as in [`Pod::new`] and the C++ and C kits; the
/// namespace ("default" unless set) is named, so the two cannot be
/// swapped. The form of older SDKs, `NodePod::new(namespace, name)`, does
/// not compile:
///
/// ```compile_fail
/// use schedplug::testing::NodePod;
/// let p = NodePod::new("default", "web-1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePod {
    namespace: String,
    name: String,
    labels: BTreeMap<String, String>,
    priority: i32,
    requests: BTreeMap<String, i64>,
    owner_kind: String,
}

impl NodePod {
    pub fn new(name: &str) -> NodePod {
        NodePod {
            namespace: "default".to_string(),
            name: name.to_string(),
            labels: BTreeMap::new(),
            priority: 0,
            requests: BTreeMap::new(),
            owner_kind: String::new(),
        }
    }
    /// Its namespace ("default" unless set).
    pub fn namespace(mut self, namespace: &str) -> NodePod {
        self.namespace = namespace.to_string();
        self
    }
    pub fn label(mut self, key: &str, value: &str) -> NodePod {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }
    pub fn priority(mut self, p: i32) -> NodePod {
        self.priority = p;
        self
    }
    /// Its effective requests (as Pod::request).
    pub fn request(mut self, resource: &str, value: i64) -> NodePod {
        self.requests.insert(resource.to_string(), value);
        self
    }
    /// Its controller's kind; "" (the default): no controller.
    pub fn owner_kind(mut self, kind: &str) -> NodePod {
        self.owner_kind = kind.to_string();
        self
    }
}

/// One requirement of a selector (ABI v1.3 terms):
/// `Requirement::new("zone", "In", &["a", "b"])`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    /// "In", "NotIn", "Exists", "DoesNotExist", "Gt" or "Lt".
    pub op: String,
    pub values: Vec<String>,
}

impl Requirement {
    pub fn new(key: &str, op: &str, values: &[&str]) -> Requirement {
        Requirement {
            key: key.to_string(),
            op: op.to_string(),
            values: owned(values),
        }
    }
}

fn owned(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A label selector: `Selector::labels(&[("app", "web")])`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    pub match_labels: BTreeMap<String, String>,
    pub match_expressions: Vec<Requirement>,
}

impl Selector {
    /// A selector of matchLabels.
    pub fn labels(labels: &[(&str, &str)]) -> Selector {
        Selector {
            match_labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            match_expressions: Vec::new(),
        }
    }
    /// And a matchExpressions requirement.
    pub fn expression(mut self, r: Requirement) -> Selector {
        self.match_expressions.push(r);
        self
    }
}

/// A node selector term of a node affinity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeTerm {
    pub match_expressions: Vec<Requirement>,
    pub match_fields: Vec<Requirement>,
}

impl NodeTerm {
    /// A term of one matchExpressions requirement.
    pub fn expression(r: Requirement) -> NodeTerm {
        NodeTerm {
            match_expressions: vec![r],
            match_fields: Vec::new(),
        }
    }
}

/// A topology spread constraint; `SpreadConstraint::new("zone")` is
/// maxSkew 1, DoNotSchedule, no selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpreadConstraint {
    pub max_skew: i32,
    pub topology_key: String,
    pub when_unsatisfiable: String,
    /// None: unset.
    pub label_selector: Option<Selector>,
    /// 0: unset.
    pub min_domains: i32,
    /// "": unset.
    pub node_affinity_policy: String,
    pub node_taints_policy: String,
    pub match_label_keys: Vec<String>,
}

impl SpreadConstraint {
    pub fn new(topology_key: &str) -> SpreadConstraint {
        SpreadConstraint {
            max_skew: 1,
            topology_key: topology_key.to_string(),
            when_unsatisfiable: "DoNotSchedule".to_string(),
            label_selector: None,
            min_domains: 0,
            node_affinity_policy: String::new(),
            node_taints_policy: String::new(),
            match_label_keys: Vec::new(),
        }
    }
}

/// A pod (anti-)affinity term: `AffinityTerm::new("zone")` with fields to
/// set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AffinityTerm {
    pub topology_key: String,
    /// None: unset.
    pub label_selector: Option<Selector>,
    pub namespaces: Vec<String>,
    pub namespace_selector: Option<Selector>,
    pub match_label_keys: Vec<String>,
    pub mismatch_label_keys: Vec<String>,
}

impl AffinityTerm {
    pub fn new(topology_key: &str) -> AffinityTerm {
        AffinityTerm {
            topology_key: topology_key.to_string(),
            ..Default::default()
        }
    }
}

/// A pod, built in a line: `Pod::new("web").label("app", "web")
/// .request("cpu", 250)`. Resources are in canonical units (plugin.h): cpu
/// in millicores, memory and ephemeral-storage in bytes, others as counts.
/// The namespace is "default" and the uid "uid-1" unless set.
#[derive(Clone, Debug)]
pub struct Pod {
    name: String,
    namespace: String,
    uid: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    node_selector: BTreeMap<String, String>,
    requests: BTreeMap<String, i64>,
    tolerations: Vec<Toleration>,
    priority: i32,
    node_name: String,
    nominated_node_name: String,
    priority_class_name: String,
    owners: Vec<(String, String, bool)>,
    containers: Vec<Container>,
    volumes: Vec<(String, String, String, bool)>,
    node_affinity: [Vec<(i32, NodeTerm)>; 2],
    spread: Vec<SpreadConstraint>,
    // Required and preferred affinity, then anti-affinity.
    pod_affinity: [Vec<(i32, AffinityTerm)>; 4],
}

impl Pod {
    /// A pod named `name` in namespace "default".
    pub fn new(name: &str) -> Pod {
        Pod {
            name: name.to_string(),
            namespace: "default".to_string(),
            uid: "uid-1".to_string(),
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            node_selector: BTreeMap::new(),
            requests: BTreeMap::new(),
            tolerations: Vec::new(),
            priority: 0,
            node_name: String::new(),
            nominated_node_name: String::new(),
            priority_class_name: String::new(),
            owners: Vec::new(),
            containers: Vec::new(),
            volumes: Vec::new(),
            node_affinity: Default::default(),
            spread: Vec::new(),
            pod_affinity: Default::default(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn namespace(mut self, v: &str) -> Pod {
        self.namespace = v.to_string();
        self
    }
    pub fn uid(mut self, v: &str) -> Pod {
        self.uid = v.to_string();
        self
    }
    /// A label (a key given again replaces its value).
    pub fn label(mut self, key: &str, value: &str) -> Pod {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }
    pub fn annotation(mut self, key: &str, value: &str) -> Pod {
        self.annotations.insert(key.to_string(), value.to_string());
        self
    }
    /// An entry of spec.nodeSelector.
    pub fn node_selector(mut self, key: &str, value: &str) -> Pod {
        self.node_selector
            .insert(key.to_string(), value.to_string());
        self
    }
    /// One of the pod's effective requests.
    pub fn request(mut self, resource: &str, value: i64) -> Pod {
        self.requests.insert(resource.to_string(), value);
        self
    }
    pub fn toleration(mut self, t: Toleration) -> Pod {
        self.tolerations.push(t);
        self
    }
    pub fn priority(mut self, p: i32) -> Pod {
        self.priority = p;
        self
    }
    /// spec.nodeName (SCHEDPLUG_DATA_POD_NODE_NAME, ABI v1.2). Like every
    /// declared datum, a hook sees it only when the plugin declared it.
    pub fn node_name(mut self, v: &str) -> Pod {
        self.node_name = v.to_string();
        self
    }
    /// status.nominatedNodeName (SCHEDPLUG_DATA_POD_NOMINATED_NODE).
    pub fn nominated_node_name(mut self, v: &str) -> Pod {
        self.nominated_node_name = v.to_string();
        self
    }
    /// spec.priorityClassName (SCHEDPLUG_DATA_POD_PRIORITY_CLASS).
    pub fn priority_class_name(mut self, v: &str) -> Pod {
        self.priority_class_name = v.to_string();
        self
    }

    /// An owner reference (SCHEDPLUG_DATA_POD_OWNERS), in the order given.
    pub fn owner(mut self, kind: &str, name: &str, controller: bool) -> Pod {
        self.owners
            .push((kind.to_string(), name.to_string(), controller));
        self
    }
    /// An app container (SCHEDPLUG_DATA_POD_CONTAINERS), in spec order; one
    /// with the name of a container already added replaces it.
    pub fn container(mut self, c: Container) -> Pod {
        match self.containers.iter_mut().find(|have| have.name == c.name) {
            Some(have) => *have = c,
            None => self.containers.push(c),
        }
        self
    }
    /// A volume (SCHEDPLUG_DATA_POD_VOLUMES, ABI v1.3): `source` is its
    /// source's key in the pod spec ("persistentVolumeClaim", "ephemeral",
    /// "configMap", ...), `claim_name` its PVC ("" for none).
    pub fn volume(mut self, name: &str, source: &str, claim_name: &str, read_only: bool) -> Pod {
        self.volumes.push((
            name.to_string(),
            source.to_string(),
            claim_name.to_string(),
            read_only,
        ));
        self
    }

    /// A required node affinity term (SCHEDPLUG_DATA_POD_NODE_AFFINITY,
    /// ABI v1.3).
    pub fn node_affinity_required(mut self, t: NodeTerm) -> Pod {
        self.node_affinity[0].push((0, t));
        self
    }
    /// A preferred node affinity term with its weight (1..100).
    pub fn node_affinity_preferred(mut self, weight: i32, t: NodeTerm) -> Pod {
        self.node_affinity[1].push((weight, t));
        self
    }
    /// A topology spread constraint (SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD).
    pub fn topology_spread(mut self, c: SpreadConstraint) -> Pod {
        self.spread.push(c);
        self
    }
    /// A required pod affinity term (SCHEDPLUG_DATA_POD_AFFINITY).
    pub fn pod_affinity_required(mut self, t: AffinityTerm) -> Pod {
        self.pod_affinity[0].push((0, t));
        self
    }
    pub fn pod_affinity_preferred(mut self, weight: i32, t: AffinityTerm) -> Pod {
        self.pod_affinity[1].push((weight, t));
        self
    }
    pub fn pod_anti_affinity_required(mut self, t: AffinityTerm) -> Pod {
        self.pod_affinity[2].push((0, t));
        self
    }
    pub fn pod_anti_affinity_preferred(mut self, weight: i32, t: AffinityTerm) -> Pod {
        self.pod_affinity[3].push((weight, t));
        self
    }

    /// The C view, as a host of this crate's ABI fills it (every field,
    /// this header's element sizes). Valid while the Pod is borrowed.
    pub fn view(&self) -> Built<'_, schedplug_pod> {
        let mut store = Store::default();
        let mut raw = schedplug_pod {
            struct_size: size_of::<schedplug_pod>() as u32,
            namespace_name: st(&self.namespace),
            name: st(&self.name),
            uid: st(&self.uid),
            priority: self.priority,
            node_name: st(&self.node_name),
            nominated_node_name: st(&self.nominated_node_name),
            priority_class_name: st(&self.priority_class_name),
            ..Default::default()
        };
        set_pod_element_sizes(&mut raw);
        raw.labels = store.kvs(&self.labels);
        raw.annotations = store.kvs(&self.annotations);
        raw.node_selector = store.kvs(&self.node_selector);
        raw.requests = store.resources(&self.requests);
        let tolerations: Vec<schedplug_toleration> = self
            .tolerations
            .iter()
            .map(|t| schedplug_toleration {
                key: st(&t.key),
                op: st(&t.op),
                value: st(&t.value),
                effect: st(&t.effect),
                has_toleration_seconds: i32::from(t.seconds.is_some()),
                toleration_seconds: t.seconds.unwrap_or(0),
            })
            .collect();
        raw.toleration_count = tolerations.len() as u64;
        raw.tolerations = store.keep(tolerations);
        let owners: Vec<schedplug_owner> = self
            .owners
            .iter()
            .map(|(kind, name, controller)| schedplug_owner {
                kind: st(kind),
                name: st(name),
                controller: i32::from(*controller),
            })
            .collect();
        raw.owner_count = owners.len() as u64;
        raw.owners = store.keep(owners);
        let containers: Vec<schedplug_container> = self
            .containers
            .iter()
            .map(|c| {
                let ports: Vec<schedplug_container_port> = c
                    .ports
                    .iter()
                    .map(|(cp, hp, proto, ip)| schedplug_container_port {
                        container_port: *cp,
                        host_port: *hp,
                        protocol: st(proto),
                        host_ip: st(ip),
                    })
                    .collect();
                schedplug_container {
                    name: st(&c.name),
                    image: st(&c.image),
                    requests: store.resources(&c.requests),
                    limits: store.resources(&c.limits),
                    port_count: ports.len() as u64,
                    ports: store.keep(ports),
                }
            })
            .collect();
        raw.container_count = containers.len() as u64;
        raw.containers = store.keep(containers);
        let volumes: Vec<schedplug_volume> = self
            .volumes
            .iter()
            .map(|(name, source, claim, ro)| schedplug_volume {
                name: st(name),
                source: st(source),
                claim_name: st(claim),
                read_only: i32::from(*ro),
            })
            .collect();
        raw.volume_count = volumes.len() as u64;
        raw.volumes = store.keep(volumes);
        let mut node_terms = [ptr::null(), ptr::null()];
        for (k, terms) in self.node_affinity.iter().enumerate() {
            let views: Vec<schedplug_node_selector_term> = terms
                .iter()
                .map(|(weight, t)| {
                    let (exprs, expr_count) = store.requirements(&t.match_expressions);
                    let (fields, field_count) = store.requirements(&t.match_fields);
                    schedplug_node_selector_term {
                        weight: *weight,
                        match_expressions: exprs,
                        match_expression_count: expr_count,
                        match_fields: fields,
                        match_field_count: field_count,
                    }
                })
                .collect();
            node_terms[k] = store.keep(views);
        }
        raw.node_affinity_required = node_terms[0];
        raw.node_affinity_required_count = self.node_affinity[0].len() as u64;
        raw.node_affinity_preferred = node_terms[1];
        raw.node_affinity_preferred_count = self.node_affinity[1].len() as u64;
        let spread: Vec<schedplug_topology_spread_constraint> = self
            .spread
            .iter()
            .map(|c| {
                let (keys, key_count) = store.strings(&c.match_label_keys);
                schedplug_topology_spread_constraint {
                    max_skew: c.max_skew,
                    min_domains: c.min_domains,
                    topology_key: st(&c.topology_key),
                    when_unsatisfiable: st(&c.when_unsatisfiable),
                    label_selector: store.selector(&c.label_selector),
                    node_affinity_policy: st(&c.node_affinity_policy),
                    node_taints_policy: st(&c.node_taints_policy),
                    match_label_keys: keys,
                    match_label_key_count: key_count,
                }
            })
            .collect();
        raw.topology_spread_count = spread.len() as u64;
        raw.topology_spread = store.keep(spread);
        let mut pod_terms = [ptr::null(); 4];
        for (k, terms) in self.pod_affinity.iter().enumerate() {
            let views: Vec<schedplug_pod_affinity_term> = terms
                .iter()
                .map(|(weight, t)| {
                    let (namespaces, namespace_count) = store.strings(&t.namespaces);
                    let (keys, key_count) = store.strings(&t.match_label_keys);
                    let (mismatch, mismatch_count) = store.strings(&t.mismatch_label_keys);
                    schedplug_pod_affinity_term {
                        weight: *weight,
                        topology_key: st(&t.topology_key),
                        label_selector: store.selector(&t.label_selector),
                        namespaces,
                        namespace_count,
                        namespace_selector: store.selector(&t.namespace_selector),
                        match_label_keys: keys,
                        match_label_key_count: key_count,
                        mismatch_label_keys: mismatch,
                        mismatch_label_key_count: mismatch_count,
                    }
                })
                .collect();
            pod_terms[k] = store.keep(views);
        }
        raw.pod_affinity_required = pod_terms[0];
        raw.pod_affinity_required_count = self.pod_affinity[0].len() as u64;
        raw.pod_affinity_preferred = pod_terms[1];
        raw.pod_affinity_preferred_count = self.pod_affinity[1].len() as u64;
        raw.pod_anti_affinity_required = pod_terms[2];
        raw.pod_anti_affinity_required_count = self.pod_affinity[2].len() as u64;
        raw.pod_anti_affinity_preferred = pod_terms[3];
        raw.pod_anti_affinity_preferred_count = self.pod_affinity[3].len() as u64;
        Built {
            raw,
            _store: store,
            _life: PhantomData,
        }
    }
}

/// A node, built in a line: `Node::new("n1").label("zone", "a")
/// .allocatable("cpu", 4000).requested("cpu", 1000)`.
#[derive(Clone, Debug)]
pub struct Node {
    name: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    taints: Vec<(String, String, String)>,
    allocatable: BTreeMap<String, i64>,
    requested: BTreeMap<String, i64>,
    capacity: BTreeMap<String, i64>,
    pod_count: Option<u32>,
    requested_set: bool,
    unschedulable: bool,
    conditions: Vec<(String, String)>,
    pods: BTreeMap<(String, String), NodePod>,
    images: Vec<(Vec<String>, i64)>,
}

impl Node {
    pub fn new(name: &str) -> Node {
        Node {
            name: name.to_string(),
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            taints: Vec::new(),
            allocatable: BTreeMap::new(),
            requested: BTreeMap::new(),
            capacity: BTreeMap::new(),
            pod_count: None,
            requested_set: false,
            unschedulable: false,
            conditions: Vec::new(),
            pods: BTreeMap::new(),
            images: Vec::new(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn label(mut self, key: &str, value: &str) -> Node {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }
    pub fn annotation(mut self, key: &str, value: &str) -> Node {
        self.annotations.insert(key.to_string(), value.to_string());
        self
    }
    /// A taint; `effect` is "NoSchedule", "PreferNoSchedule" or "NoExecute".
    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Node {
        self.taints
            .push((key.to_string(), value.to_string(), effect.to_string()));
        self
    }
    pub fn allocatable(mut self, resource: &str, value: i64) -> Node {
        self.allocatable.insert(resource.to_string(), value);
        self
    }
    /// The sum of the requests of the pods already on the node. Without
    /// any requested() call: the sum of the listed pods' requests.
    pub fn requested(mut self, resource: &str, value: i64) -> Node {
        self.requested.insert(resource.to_string(), value);
        self.requested_set = true;
        self
    }
    /// The number of pods on the node. Without a pod_count() call: the
    /// number of listed pods (the host counts the pods it lists).
    pub fn pod_count(mut self, n: u32) -> Node {
        self.pod_count = Some(n);
        self
    }
    /// A status condition (SCHEDPLUG_DATA_NODE_CONDITIONS, ABI v1.2), in
    /// the order given; a type given again replaces its status.
    pub fn condition(mut self, kind: &str, status: &str) -> Node {
        match self.conditions.iter_mut().find(|(t, _)| t == kind) {
            Some((_, s)) => *s = status.to_string(),
            None => self.conditions.push((kind.to_string(), status.to_string())),
        }
        self
    }
    /// A pod already on the node (SCHEDPLUG_DATA_NODE_PODS, ABI v1.2). The
    /// list is sorted by namespace then name, as the host sends it; a pod
    /// listed again replaces it.
    pub fn pod(mut self, p: NodePod) -> Node {
        self.pods.insert((p.namespace.clone(), p.name.clone()), p);
        self
    }
    /// An image the node holds (SCHEDPLUG_DATA_NODE_IMAGES, ABI v1.3): its
    /// names and size.
    pub fn image(mut self, names: &[&str], size_bytes: i64) -> Node {
        self.images
            .push((names.iter().map(|n| n.to_string()).collect(), size_bytes));
        self
    }
    /// spec.unschedulable (SCHEDPLUG_DATA_NODE_UNSCHEDULABLE, ABI v1.2).
    pub fn unschedulable(mut self, v: bool) -> Node {
        self.unschedulable = v;
        self
    }
    /// status.capacity (SCHEDPLUG_DATA_NODE_CAPACITY, ABI v1.2).
    pub fn capacity(mut self, resource: &str, value: i64) -> Node {
        self.capacity.insert(resource.to_string(), value);
        self
    }

    /// The C view, as for [`Pod::view`].
    pub fn view(&self) -> Built<'_, schedplug_node> {
        let mut store = Store::default();
        let mut raw = schedplug_node {
            struct_size: size_of::<schedplug_node>() as u32,
            name: st(&self.name),
            pod_count: self.pod_count.unwrap_or(self.pods.len() as u32),
            unschedulable: i32::from(self.unschedulable),
            ..Default::default()
        };
        set_node_element_sizes(&mut raw);
        raw.labels = store.kvs(&self.labels);
        raw.annotations = store.kvs(&self.annotations);
        raw.allocatable = store.resources(&self.allocatable);
        raw.requested = if self.requested_set {
            store.resources(&self.requested)
        } else {
            let mut sum = BTreeMap::new();
            for p in self.pods.values() {
                for (r, v) in &p.requests {
                    *sum.entry(r.clone()).or_insert(0) += v;
                }
            }
            store.resources_owned(sum)
        };
        raw.capacity = store.resources(&self.capacity);
        let taints: Vec<schedplug_taint> = self
            .taints
            .iter()
            .map(|(k, v, e)| schedplug_taint {
                key: st(k),
                value: st(v),
                effect: st(e),
            })
            .collect();
        raw.taint_count = taints.len() as u64;
        raw.taints = store.keep(taints);
        let conditions: Vec<schedplug_node_condition> = self
            .conditions
            .iter()
            .map(|(t, s)| schedplug_node_condition {
                r#type: st(t),
                status: st(s),
            })
            .collect();
        raw.condition_count = conditions.len() as u64;
        raw.conditions = store.keep(conditions);
        let pods: Vec<schedplug_node_pod> = self
            .pods
            .values()
            .map(|p| schedplug_node_pod {
                namespace_name: st(&p.namespace),
                name: st(&p.name),
                labels: store.kvs(&p.labels),
                priority: p.priority,
                requests: store.resources(&p.requests),
                owner_kind: st(&p.owner_kind),
            })
            .collect();
        raw.pod_list_count = pods.len() as u64;
        raw.pod_list = store.keep(pods);
        let images: Vec<schedplug_node_image> = self
            .images
            .iter()
            .map(|(names, size)| {
                let names: Vec<schedplug_str> = names.iter().map(|n| st(n)).collect();
                schedplug_node_image {
                    name_count: names.len() as u64,
                    names: store.keep(names),
                    size_bytes: *size,
                }
            })
            .collect();
        raw.image_count = images.len() as u64;
        raw.images = store.keep(images);
        Built {
            raw,
            _store: store,
            _life: PhantomData,
        }
    }
}

/// A C view and the arrays it points to; the strings are the builder's,
/// borrowed for `'a`. Moving it keeps every pointer valid (the arrays live
/// on the heap).
pub struct Built<'a, T> {
    raw: T,
    _store: Store,
    _life: PhantomData<&'a ()>,
}

impl<'a, T> Built<'a, T> {
    /// The view, to pass to a hook or to [`Plugin`]'s `*_raw` methods.
    pub fn raw(&self) -> &T {
        &self.raw
    }
}

/// The arrays of one view.
#[derive(Default)]
struct Store {
    arrays: Vec<Box<dyn Any>>,
}

impl Store {
    /// Keeps `items` alive with the view; NULL when empty, as the host
    /// sends an empty list.
    fn keep<T: 'static>(&mut self, items: Vec<T>) -> *const T {
        let p = if items.is_empty() {
            ptr::null()
        } else {
            items.as_ptr()
        };
        self.arrays.push(Box::new(items));
        p
    }

    /// Sorted by key in byte order, keys unique (plugin.h): a BTreeMap of
    /// Strings gives both.
    fn kvs(&mut self, map: &BTreeMap<String, String>) -> schedplug_kv_list {
        let items: Vec<schedplug_kv> = map
            .iter()
            .map(|(k, v)| schedplug_kv {
                key: st(k),
                value: st(v),
            })
            .collect();
        schedplug_kv_list {
            count: items.len() as u64,
            items: self.keep(items),
        }
    }

    fn strings(&mut self, items: &[String]) -> (*const schedplug_str, u64) {
        let views: Vec<schedplug_str> = items.iter().map(|v| st(v)).collect();
        (self.keep(views), items.len() as u64)
    }

    fn requirements(
        &mut self,
        items: &[Requirement],
    ) -> (*const schedplug_selector_requirement, u64) {
        let views: Vec<schedplug_selector_requirement> = items
            .iter()
            .map(|r| {
                let (values, value_count) = self.strings(&r.values);
                schedplug_selector_requirement {
                    key: st(&r.key),
                    op: st(&r.op),
                    values,
                    value_count,
                }
            })
            .collect();
        (self.keep(views), items.len() as u64)
    }

    /// Unset (present 0) for None.
    fn selector(&mut self, s: &Option<Selector>) -> schedplug_label_selector {
        match s {
            None => schedplug_label_selector::default(),
            Some(s) => {
                let (exprs, count) = self.requirements(&s.match_expressions);
                schedplug_label_selector {
                    present: 1,
                    match_labels: self.kvs(&s.match_labels),
                    match_expressions: exprs,
                    match_expression_count: count,
                }
            }
        }
    }

    /// A sum the view computed: its names are kept with the view.
    fn resources_owned(&mut self, map: BTreeMap<String, i64>) -> schedplug_resource_list {
        let list = self.resources(&map);
        // The keys' heap bytes stay where they are when the map moves.
        self.arrays.push(Box::new(map));
        list
    }

    fn resources(&mut self, map: &BTreeMap<String, i64>) -> schedplug_resource_list {
        let items: Vec<schedplug_resource> = map
            .iter()
            .map(|(k, v)| schedplug_resource {
                name: st(k),
                value: *v,
            })
            .collect();
        schedplug_resource_list {
            count: items.len() as u64,
            items: self.keep(items),
        }
    }
}

fn st(s: &str) -> schedplug_str {
    schedplug_str {
        data: if s.is_empty() {
            ptr::null()
        } else {
            s.as_ptr() as *const c_char
        },
        len: s.len() as u64,
    }
}

/// The bytes of a view string as text (lossy: messages only).
fn text(s: schedplug_str) -> String {
    if s.data.is_null() || s.len == 0 {
        return String::new();
    }
    // SAFETY: the kit's and the host's strings are valid for len bytes
    // while the view they belong to is borrowed.
    let b = unsafe { std::slice::from_raw_parts(s.data as *const u8, s.len as usize) };
    String::from_utf8_lossy(b).into_owned()
}

/// This host's element sizes: the v1.0 ones (plugin.h rule 5), as
/// runtime::set_element_sizes.
fn set_pod_element_sizes(p: &mut schedplug_pod) {
    p.kv_size = size_of::<schedplug_kv>() as u32;
    p.resource_size = size_of::<schedplug_resource>() as u32;
    p.toleration_size = size_of::<schedplug_toleration>() as u32;
    p.node_score_size = size_of::<schedplug_node_score>() as u32;
    p.owner_size = size_of::<schedplug_owner>() as u32;
    p.container_size = size_of::<schedplug_container>() as u32;
    p.port_size = size_of::<schedplug_container_port>() as u32;
    p.volume_size = size_of::<schedplug_volume>() as u32;
    p.requirement_size = size_of::<schedplug_selector_requirement>() as u32;
    p.node_selector_term_size = size_of::<schedplug_node_selector_term>() as u32;
    p.topology_spread_size = size_of::<schedplug_topology_spread_constraint>() as u32;
    p.pod_affinity_term_size = size_of::<schedplug_pod_affinity_term>() as u32;
}

fn set_node_element_sizes(n: &mut schedplug_node) {
    n.kv_size = size_of::<schedplug_kv>() as u32;
    n.resource_size = size_of::<schedplug_resource>() as u32;
    n.taint_size = size_of::<schedplug_taint>() as u32;
    n.condition_size = size_of::<schedplug_node_condition>() as u32;
    n.node_pod_size = size_of::<schedplug_node_pod>() as u32;
    n.image_size = size_of::<schedplug_node_image>() as u32;
}

/// The pod as a host shows it to a profile whose plugins declared `data`
/// (SCHEDPLUG_DATA_*): the fields of the other bits are empty.
pub fn sent_pod(p: &schedplug_pod, data: u64) -> schedplug_pod {
    let mut v = *p;
    if data & SCHEDPLUG_DATA_POD_NODE_NAME == 0 {
        v.node_name = schedplug_str::default();
    }
    if data & SCHEDPLUG_DATA_POD_NOMINATED_NODE == 0 {
        v.nominated_node_name = schedplug_str::default();
    }
    if data & SCHEDPLUG_DATA_POD_PRIORITY_CLASS == 0 {
        v.priority_class_name = schedplug_str::default();
    }
    if data & SCHEDPLUG_DATA_POD_OWNERS == 0 {
        v.owners = ptr::null();
        v.owner_count = 0;
    }
    if data & SCHEDPLUG_DATA_POD_CONTAINERS == 0 {
        v.containers = ptr::null();
        v.container_count = 0;
    }
    if data & SCHEDPLUG_DATA_POD_VOLUMES == 0 {
        v.volumes = ptr::null();
        v.volume_count = 0;
    }
    if data & SCHEDPLUG_DATA_POD_NODE_AFFINITY == 0 {
        v.node_affinity_required = ptr::null();
        v.node_affinity_preferred = ptr::null();
        v.node_affinity_required_count = 0;
        v.node_affinity_preferred_count = 0;
    }
    if data & SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD == 0 {
        v.topology_spread = ptr::null();
        v.topology_spread_count = 0;
    }
    if data & SCHEDPLUG_DATA_POD_AFFINITY == 0 {
        v.pod_affinity_required = ptr::null();
        v.pod_affinity_preferred = ptr::null();
        v.pod_anti_affinity_required = ptr::null();
        v.pod_anti_affinity_preferred = ptr::null();
        v.pod_affinity_required_count = 0;
        v.pod_affinity_preferred_count = 0;
        v.pod_anti_affinity_required_count = 0;
        v.pod_anti_affinity_preferred_count = 0;
    }
    v
}

/// The node as [`sent_pod`] shows the pod.
pub fn sent_node(n: &schedplug_node, data: u64) -> schedplug_node {
    let mut v = *n;
    if data & SCHEDPLUG_DATA_NODE_UNSCHEDULABLE == 0 {
        v.unschedulable = 0;
    }
    if data & SCHEDPLUG_DATA_NODE_CONDITIONS == 0 {
        v.conditions = ptr::null();
        v.condition_count = 0;
    }
    if data & SCHEDPLUG_DATA_NODE_CAPACITY == 0 {
        v.capacity = schedplug_resource_list::default();
    }
    if data & SCHEDPLUG_DATA_NODE_PODS == 0 {
        v.pod_list = ptr::null();
        v.pod_list_count = 0;
    }
    if data & SCHEDPLUG_DATA_NODE_IMAGES == 0 {
        v.images = ptr::null();
        v.image_count = 0;
    }
    v
}

/// The SCHEDPLUG_DATA_* bits whose fields are filled in a pod view: the
/// data a test gave, declared or not.
pub fn carried_pod(v: &schedplug_pod) -> u64 {
    let mut bits = 0;
    let mut set = |filled: bool, bit: u64| {
        if filled {
            bits |= bit;
        }
    };
    set(v.node_name.len != 0, SCHEDPLUG_DATA_POD_NODE_NAME);
    set(
        v.nominated_node_name.len != 0,
        SCHEDPLUG_DATA_POD_NOMINATED_NODE,
    );
    set(
        v.priority_class_name.len != 0,
        SCHEDPLUG_DATA_POD_PRIORITY_CLASS,
    );
    set(v.owner_count != 0, SCHEDPLUG_DATA_POD_OWNERS);
    set(v.container_count != 0, SCHEDPLUG_DATA_POD_CONTAINERS);
    set(v.volume_count != 0, SCHEDPLUG_DATA_POD_VOLUMES);
    set(
        v.node_affinity_required_count != 0 || v.node_affinity_preferred_count != 0,
        SCHEDPLUG_DATA_POD_NODE_AFFINITY,
    );
    set(
        v.topology_spread_count != 0,
        SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD,
    );
    set(
        v.pod_affinity_required_count != 0
            || v.pod_affinity_preferred_count != 0
            || v.pod_anti_affinity_required_count != 0
            || v.pod_anti_affinity_preferred_count != 0,
        SCHEDPLUG_DATA_POD_AFFINITY,
    );
    bits
}

/// The same for a node view.
pub fn carried_node(v: &schedplug_node) -> u64 {
    let mut bits = 0;
    let mut set = |filled: bool, bit: u64| {
        if filled {
            bits |= bit;
        }
    };
    set(v.unschedulable != 0, SCHEDPLUG_DATA_NODE_UNSCHEDULABLE);
    set(v.condition_count != 0, SCHEDPLUG_DATA_NODE_CONDITIONS);
    set(v.capacity.count != 0, SCHEDPLUG_DATA_NODE_CAPACITY);
    set(v.pod_list_count != 0, SCHEDPLUG_DATA_NODE_PODS);
    set(v.image_count != 0, SCHEDPLUG_DATA_NODE_IMAGES);
    bits
}

/// The name of one SCHEDPLUG_DATA_* bit, as `schedplug::abi` spells it.
pub fn data_bit_name(bit: u64) -> &'static str {
    match bit {
        SCHEDPLUG_DATA_POD_NODE_NAME => "SCHEDPLUG_DATA_POD_NODE_NAME",
        SCHEDPLUG_DATA_POD_NOMINATED_NODE => "SCHEDPLUG_DATA_POD_NOMINATED_NODE",
        SCHEDPLUG_DATA_POD_PRIORITY_CLASS => "SCHEDPLUG_DATA_POD_PRIORITY_CLASS",
        SCHEDPLUG_DATA_POD_OWNERS => "SCHEDPLUG_DATA_POD_OWNERS",
        SCHEDPLUG_DATA_POD_CONTAINERS => "SCHEDPLUG_DATA_POD_CONTAINERS",
        SCHEDPLUG_DATA_NODE_UNSCHEDULABLE => "SCHEDPLUG_DATA_NODE_UNSCHEDULABLE",
        SCHEDPLUG_DATA_NODE_CONDITIONS => "SCHEDPLUG_DATA_NODE_CONDITIONS",
        SCHEDPLUG_DATA_NODE_CAPACITY => "SCHEDPLUG_DATA_NODE_CAPACITY",
        SCHEDPLUG_DATA_NODE_PODS => "SCHEDPLUG_DATA_NODE_PODS",
        SCHEDPLUG_DATA_POD_VOLUMES => "SCHEDPLUG_DATA_POD_VOLUMES",
        SCHEDPLUG_DATA_NODE_IMAGES => "SCHEDPLUG_DATA_NODE_IMAGES",
        SCHEDPLUG_DATA_POD_NODE_AFFINITY => "SCHEDPLUG_DATA_POD_NODE_AFFINITY",
        SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD => "SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD",
        SCHEDPLUG_DATA_POD_AFFINITY => "SCHEDPLUG_DATA_POD_AFFINITY",
        _ => "SCHEDPLUG_DATA_?",
    }
}

/// "A", "A and B", "A, B and C" of the bits in `bits`, lowest first.
pub fn data_bit_names(bits: u64) -> String {
    let names: Vec<&str> = (0..64)
        .map(|i| 1u64 << i)
        .filter(|b| bits & b != 0)
        .map(data_bit_name)
        .collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

/// The name kube-scheduler gives a status code.
pub fn code_name(code: schedplug_code) -> &'static str {
    match code {
        SCHEDPLUG_SUCCESS => "Success",
        SCHEDPLUG_ERROR => "Error",
        SCHEDPLUG_UNSCHEDULABLE => "Unschedulable",
        SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE => "UnschedulableAndUnresolvable",
        SCHEDPLUG_SKIP => "Skip",
        _ => "Unknown",
    }
}

/// One node's row of a scheduling cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeResult {
    pub node: String,
    /// SKIP: the plugin has no filter, or skipped it for the pod.
    pub filter: Status,
    /// false: filtered out, or Score skipped.
    pub scored: bool,
    /// score() as returned.
    pub raw: i64,
    /// After normalization, in [0, 100].
    pub score: i64,
}

/// One pod through one plugin, as schedplug-host runs it in a cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cycle {
    /// Set when the cycle failed as a whole: pod_begin failed, a filter or
    /// score returned ERROR, normalization did, or a hint's promise was
    /// broken (the host's message, or the kit's).
    pub error: Option<String>,
    /// The plugin's gates skipped the hook (or it has none).
    pub filter_skipped: bool,
    pub score_skipped: bool,
    /// In the order given.
    pub nodes: Vec<NodeResult>,
}

impl Cycle {
    /// The nodes that passed Filter.
    pub fn feasible(&self) -> Vec<&str> {
        self.nodes
            .iter()
            .filter(|n| matches!(n.filter.code(), SCHEDPLUG_SUCCESS | SCHEDPLUG_SKIP))
            .map(|n| n.node.as_str())
            .collect()
    }

    /// The row of `node`.
    pub fn row(&self, node: &str) -> Option<&NodeResult> {
        self.nodes.iter().find(|n| n.node == node)
    }

    /// A printable table: the cycle's error, then one line per node:
    /// filter verdict and reason, raw and normalized score ("-" when not
    /// scored).
    pub fn table(&self) -> String {
        match &self.error {
            Some(e) => format!("error: {e}\n{}", self.rows()),
            None => self.rows(),
        }
    }

    /// The table without the error line. A row whose reason is the
    /// cycle's error says so instead of repeating it.
    pub fn rows(&self) -> String {
        let mut out = String::new();
        for n in &self.nodes {
            out += &format!("{}  {}", n.node, code_name(n.filter.code()));
            if self.error.as_deref() == Some(n.filter.reason()) {
                out += " (the cycle's error)";
            } else if !n.filter.reason().is_empty() {
                out += &format!(" ({})", n.filter.reason());
            }
            if n.scored {
                out += &format!("  raw={} score={}\n", n.raw, n.score);
            } else {
                out += "  score=-\n";
            }
        }
        out
    }

    /// Panics with [`compare`]'s difference unless the rows match.
    #[track_caller]
    pub fn assert_rows(&self, expected: &[Row]) {
        let diff = compare(self, expected);
        if !diff.is_empty() {
            panic!("the cycle differs from the expected rows:\n{diff}");
        }
    }
}

/// An expected row for [`compare`]: `Row::new("n1")` passes Filter and is
/// not scored; `.filter(code, reason)` and `.score(n)` say otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub node: String,
    pub filter: schedplug_code,
    pub reason: String,
    /// None: not scored.
    pub score: Option<i64>,
}

impl Row {
    pub fn new(node: &str) -> Row {
        Row {
            node: node.to_string(),
            filter: SCHEDPLUG_SUCCESS,
            reason: String::new(),
            score: None,
        }
    }
    pub fn filter(mut self, code: schedplug_code, reason: &str) -> Row {
        self.filter = code;
        self.reason = reason.to_string();
        self
    }
    pub fn score(mut self, score: i64) -> Row {
        self.score = Some(score);
        self
    }
}

/// Compares a cycle with the expected rows (same nodes, same order).
/// Returns "" when they match, else one line per difference and the whole
/// table, with the cycle's error once (a row with that reason refers to
/// it).
pub fn compare(cycle: &Cycle, expected: &[Row]) -> String {
    let mut diff = String::new();
    if let Some(e) = &cycle.error {
        diff += &format!("the cycle failed: {e}\n");
    }
    if cycle.nodes.len() != expected.len() {
        diff += &format!(
            "expected {} nodes, the cycle has {}\n",
            expected.len(),
            cycle.nodes.len()
        );
    }
    for (i, (got, want)) in cycle.nodes.iter().zip(expected).enumerate() {
        if got.node != want.node {
            diff += &format!("row {i}: expected node {}, got {}\n", want.node, got.node);
            continue;
        }
        if got.filter.code() != want.filter || got.filter.reason() != want.reason {
            let reason = if cycle.error.as_deref() == Some(got.filter.reason()) {
                "(the cycle's error)".to_string()
            } else {
                format!("\"{}\"", got.filter.reason())
            };
            diff += &format!(
                "{}: expected filter {} \"{}\", got {} {reason}\n",
                want.node,
                code_name(want.filter),
                want.reason,
                code_name(got.filter.code()),
            );
        }
        let want_score = want.score.map_or("-".to_string(), |s| s.to_string());
        let got_score = if got.scored {
            got.score.to_string()
        } else {
            "-".to_string()
        };
        if got_score != want_score {
            diff += &format!(
                "{}: expected score {want_score}, got {got_score}\n",
                want.node
            );
        }
    }
    if diff.is_empty() {
        return diff;
    }
    diff + "the cycle:\n" + &cycle.rows()
}

// ---------------------------------------------------------------------------
// The host's rules (sdk/include/schedplug/runtime.hpp)
// ---------------------------------------------------------------------------

/// The size of the descriptor as ABI version 1 first defined it
/// (runtime::kV1DescriptorSize).
fn v1_descriptor_size() -> usize {
    crate::view::field_layout!(schedplug_plugin, events).0 + size_of::<u64>()
}

fn is_upper_camel_case(name: &str) -> bool {
    name.as_bytes()
        .first()
        .map_or(false, u8::is_ascii_uppercase)
        && name.bytes().all(|c| c.is_ascii_alphanumeric())
}

fn upper_camel_case_of(name: &str) -> String {
    let mut out = String::new();
    let mut upper_next = true;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            upper_next = true;
            continue;
        }
        out.push(if upper_next {
            c.to_ascii_uppercase()
        } else {
            c
        });
        upper_next = false;
    }
    if is_upper_camel_case(&out) {
        out
    } else {
        String::new()
    }
}

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// runtime::accept_descriptor: checks what schedplug_plugin_v1() returned
/// and copies it into a zero-filled descriptor of this crate's size.
///
/// # Safety
/// `entry` is NULL or points to a descriptor valid for its struct_size.
unsafe fn accept_descriptor(entry: *const schedplug_plugin) -> Result<schedplug_plugin, String> {
    if entry.is_null() {
        return Err(
            "`schedplug_plugin_v1()` returned NULL; it must return a pointer to \
                    the plugin's static descriptor"
                .to_string(),
        );
    }
    let abi_version = (entry as *const u32).read();
    if abi_version != SCHEDPLUG_ABI_VERSION {
        return Err(format!(
            "built for schedplug ABI version {abi_version}, this host speaks version \
             {SCHEDPLUG_ABI_VERSION}; rebuild the plugin against this host's SDK"
        ));
    }
    let struct_size = (entry as *const u32).add(1).read() as usize;
    if struct_size < v1_descriptor_size() {
        return Err(format!(
            "the descriptor is {struct_size} bytes, smaller than the {} bytes of ABI \
             version 1's schedplug_plugin; set struct_size to sizeof(schedplug_plugin) \
             and rebuild against this host's SDK",
            v1_descriptor_size()
        ));
    }
    let mut d = schedplug_plugin::default();
    // Only the fields both sides know.
    ptr::copy_nonoverlapping(
        entry as *const u8,
        &mut d as *mut schedplug_plugin as *mut u8,
        struct_size.min(size_of::<schedplug_plugin>()),
    );
    let name = c_text(d.name);
    if name.is_empty() {
        return Err(
            "the plugin reports an empty name; set the descriptor's `name` to the \
                    UpperCamelCase name profiles enable, e.g. \"HwEncrypt\""
                .to_string(),
        );
    }
    if !is_upper_camel_case(&name) {
        let hint = upper_camel_case_of(&name);
        let hint = if hint.is_empty() {
            hint
        } else {
            format!(" (e.g. \"{hint}\")")
        };
        return Err(format!(
            "the plugin name \"{name}\" is not UpperCamelCase ([A-Z][A-Za-z0-9]*, as \
             kube-scheduler plugin names are); rename it{hint} and enable it under that name"
        ));
    }
    if c_text(d.version).is_empty() {
        return Err(format!(
            "plugin \"{name}\" reports no version string; set the descriptor's `version`, \
             e.g. \"1.0.0\""
        ));
    }
    if d.create.is_none() {
        return Err(format!(
            "plugin \"{name}\" has no create() hook; every plugin must set `create`"
        ));
    }
    if d.normalize_score.is_some() && d.score.is_none() {
        return Err(format!(
            "plugin \"{name}\" implements NormalizeScore but not Score; set `score` too, or \
             remove `normalize_score`"
        ));
    }
    if d.normalize_policy > SCHEDPLUG_NORMALIZE_REVERSE {
        return Err(format!(
            "plugin \"{name}\" declares normalize_policy {}, which is not one of NONE (0), \
             LINEAR (1), REVERSE (2)",
            d.normalize_policy
        ));
    }
    if d.normalize_score.is_some() && d.normalize_policy != SCHEDPLUG_NORMALIZE_NONE {
        return Err(format!(
            "plugin \"{name}\" sets both normalize_score and a normalize_policy; use one: \
             drop normalize_score or set the policy to SCHEDPLUG_NORMALIZE_NONE"
        ));
    }
    if d.refresh.is_some() && d.refresh_period_ms == 0 {
        return Err(format!(
            "plugin \"{name}\" has a refresh() hook but refresh_period_ms is 0; set how \
             often the host should call it"
        ));
    }
    Ok(d)
}

/// runtime::settings_problem: the rules of plugin.h for the settings
/// create() returned.
///
/// # Safety
/// The key arrays of `s` are valid for their counts (the instance's).
unsafe fn settings_problem(d: &schedplug_plugin, s: &schedplug_settings) -> Option<String> {
    if s.normalize_policy > SCHEDPLUG_NORMALIZE_REVERSE {
        return Some(format!(
            "normalize_policy {} is not one of NONE (0), LINEAR (1), REVERSE (2)",
            s.normalize_policy
        ));
    }
    if d.normalize_score.is_some() && s.normalize_policy != SCHEDPLUG_NORMALIZE_NONE {
        return Some(
            "a normalize_policy was set but the plugin implements normalize_score; use one \
             of them"
                .to_string(),
        );
    }
    if d.refresh.is_some() && s.refresh_period_ms == 0 {
        return Some(
            "refresh_period_ms is 0 but the plugin has a refresh() hook; set how often the \
             host should call it"
                .to_string(),
        );
    }
    for (field, bits, known, names) in [
        ("data", s.data, SCHEDPLUG_DATA_ALL, "SCHEDPLUG_DATA_*"),
        ("hints", s.hints, SCHEDPLUG_HINT_ALL, "SCHEDPLUG_HINT_*"),
        ("events", s.events, SCHEDPLUG_EVENT_ALL, "SCHEDPLUG_EVENT_*"),
    ] {
        if bits & !known != 0 {
            return Some(format!(
                "{field} has bits {:#x} that are not {names} values",
                bits & !known
            ));
        }
    }
    // A refresh hook changes what the answers depend on over time, which
    // both identity hints rule out (plugin.h).
    for (bit, hint, answers) in [
        (
            SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY,
            "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY",
            "verdicts",
        ),
        (
            SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY,
            "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY",
            "scores",
        ),
    ] {
        if s.hints & bit != 0 && d.refresh.is_some() && s.refresh_period_ms > 0 {
            return Some(format!(
                "hints has {hint}, which promises {answers} that do not change over time, but \
                 the plugin has a refresh() hook (every {} ms) that can change them; drop the \
                 hint, or the refresh hook",
                s.refresh_period_ms
            ));
        }
    }
    if s.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY != 0 && d.score.is_none() {
        return Some(
            "hints has SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, a promise about score() and \
             normalize_score(), but the plugin has no score() hook; drop the hint, or \
             implement score()"
                .to_string(),
        );
    }
    for (field, count_field, keys, count) in [
        (
            "pod_label_keys",
            "pod_label_key_count",
            s.pod_label_keys,
            s.pod_label_key_count,
        ),
        (
            "pod_annotation_keys",
            "pod_annotation_key_count",
            s.pod_annotation_keys,
            s.pod_annotation_key_count,
        ),
    ] {
        if count == 0 {
            continue;
        }
        if keys.is_null() {
            return Some(format!(
                "{field} is NULL but {count_field} is {count}; point {field} at the {count} \
                 keys, or set the count to 0"
            ));
        }
        if count > u64::from(SCHEDPLUG_POD_KEYS_MAX) {
            return Some(format!(
                "{count_field} is {count}, more than the {SCHEDPLUG_POD_KEYS_MAX} keys a list \
                 may hold; declare at most {SCHEDPLUG_POD_KEYS_MAX}, or drop \
                 SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS and the keys"
            ));
        }
        for i in 0..count as usize {
            let k = keys.add(i).read();
            if k.len == 0 {
                return Some(format!(
                    "{field}[{i}] is an empty key; list only the non-empty keys the plugin \
                     reads (an empty list declares none)"
                ));
            }
            if k.data.is_null() {
                return Some(format!(
                    "{field}[{i}] has NULL data and length {}; point it at the key's bytes",
                    k.len
                ));
            }
        }
        if s.hints & SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS == 0 {
            return Some(format!(
                "{field} lists {count} {} (the first is \"{}\") but hints lacks \
                 SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, which the keys go with; set \
                 the hint, or leave {field} empty",
                if count == 1 { "key" } else { "keys" },
                text(keys.read())
            ));
        }
    }
    None
}

/// runtime::PodKeys::copy: sorted, without duplicates.
///
/// # Safety
/// `keys` is NULL or valid for `count` views.
unsafe fn copy_keys(keys: *const schedplug_str, count: u64) -> Vec<String> {
    if keys.is_null() {
        return Vec::new();
    }
    let mut out: Vec<String> = (0..count as usize)
        .map(|i| text(keys.add(i).read()))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn no_reason(reason: &str) -> &str {
    if reason.is_empty() {
        "(no reason given)"
    } else {
        reason
    }
}

/// runtime::min_max: min-max onto [0, 100], reversed for REVERSE; every
/// node gets 100 when all raw scores are equal. Exact for any i64 values,
/// rounded to nearest.
fn min_max(scores: &mut [schedplug_node_score], reverse: bool) {
    let lo = match scores.iter().map(|s| s.score).min() {
        Some(lo) => lo,
        None => return,
    };
    let hi = scores.iter().map(|s| s.score).max().unwrap_or(lo);
    if lo == hi {
        for s in scores.iter_mut() {
            s.score = 100;
        }
        return;
    }
    // Differences of i64 values fit in u64 (wrapping gives the exact
    // distance when hi >= lo); the product needs 128 bits.
    let range = (hi as u64).wrapping_sub(lo as u64);
    for s in scores.iter_mut() {
        let offset = if reverse {
            (hi as u64).wrapping_sub(s.score as u64)
        } else {
            (s.score as u64).wrapping_sub(lo as u64)
        };
        s.score = ((u128::from(offset) * 100 + u128::from(range / 2)) / u128::from(range)) as i64;
    }
}

/// A host-owned reason buffer for one hook call.
struct ReasonBuffer {
    text: [u8; SCHEDPLUG_REASON_MAX as usize],
    raw: schedplug_reason,
}

impl ReasonBuffer {
    fn new() -> Box<ReasonBuffer> {
        let mut b = Box::new(ReasonBuffer {
            text: [0; SCHEDPLUG_REASON_MAX as usize],
            raw: schedplug_reason::default(),
        });
        b.raw = schedplug_reason {
            text: b.text.as_mut_ptr() as *mut c_char,
            capacity: u64::from(SCHEDPLUG_REASON_MAX),
        };
        b
    }
    fn get(&mut self) -> *mut schedplug_reason {
        &mut self.raw
    }
    /// The text, tolerating a plugin that forgot the NUL.
    fn text(&self) -> String {
        let n = self
            .text
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.text.len());
        String::from_utf8_lossy(&self.text[..n]).into_owned()
    }
}

// ---------------------------------------------------------------------------
// The plugin under test
// ---------------------------------------------------------------------------

/// A plugin's C entry point: the `schedplug_plugin_v1` that
/// [`export_plugin!`](crate::export_plugin) defines.
pub type Entry = extern "C" fn() -> *const schedplug_plugin;

/// Load or create failed: the message schedplug-host would give.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

// Debug prints the sentence as is, so `.unwrap()` shows it readably.
impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// The label and annotation key the copy of the declared-keys check gains
/// (with the value "x"), unless the plugin declared it.
pub const UNDECLARED_KEY: &str = "schedplug-kit.test/undeclared";

/// A created plugin instance, driven through its descriptor's C hooks as
/// schedplug-host drives it. Dropping it calls destroy().
pub struct Plugin {
    d: schedplug_plugin,
    name: String,
    version: String,
    instance: *mut c_void,
    // Boxed: the plugin may keep the host pointer (the Rust layer does, to
    // log), and the log's context, until destroy.
    host: Box<schedplug_host>,
    settings: Box<schedplug_settings>,
    ctx: Box<HostContext>,
    // The dlopen handle of a plugin loaded from a file (open()).
    handle: *mut c_void,
    // "Name (file)" in the host's messages.
    where_: String,
    label_keys: Vec<String>,
    annotation_keys: Vec<String>,
    extra_data: u64,
}

/// One pod as one plugin sees it during a cycle: whether its filter and
/// score run, the pod view carrying the plugin's state, and the error when
/// pod_begin failed. Dropping it calls pod_end.
pub struct PodScope<'a> {
    pod_end: Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>,
    instance: *mut c_void,
    pod: schedplug_pod,
    runs_filter: bool,
    runs_score: bool,
    ended: bool,
    error: Option<String>,
    _life: PhantomData<&'a ()>,
}

impl<'a> PodScope<'a> {
    /// The pod view to pass to this plugin's filter/score (state set).
    pub fn pod(&self) -> &schedplug_pod {
        &self.pod
    }
    pub fn runs_filter(&self) -> bool {
        self.runs_filter
    }
    pub fn runs_score(&self) -> bool {
        self.runs_score
    }
    /// The host's message when pod_begin failed.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

impl Drop for PodScope<'_> {
    fn drop(&mut self) {
        if let (false, Some(end)) = (self.ended, self.pod_end) {
            // SAFETY: the state is what this instance's pod_begin returned,
            // handed back exactly once.
            unsafe { end(self.instance, self.pod.state) }
        }
    }
}

impl Plugin {
    /// Calls `entry` (the plugin's `schedplug_plugin_v1`), checks the
    /// descriptor as the host does, and creates an instance with
    /// `args_json` (its pluginConfig args). Err: the host's message.
    pub fn load(entry: Entry, args_json: &str) -> Result<Plugin, Error> {
        Plugin::accept(entry(), "schedplug_plugin_v1()", ptr::null_mut(), args_json)
    }

    /// Loads the plugin file `path` (a built `.so`, in any language) as
    /// schedplug-host does: dlopen with RTLD_NOW | RTLD_LOCAL, its
    /// `schedplug_plugin_v1`, the descriptor checks, then create() with
    /// `args_json`. The file stays loaded while the Plugin lives. The
    /// host's file checks (owner, mode, digest) are not made.
    pub fn open(path: &std::path::Path, args_json: &str) -> Result<Plugin, Error> {
        let file = path.display().to_string();
        let c_path = std::ffi::CString::new(path.as_os_str().to_string_lossy().as_bytes())
            .map_err(|_| Error(format!("{file}: the path holds a NUL byte")))?;
        // SAFETY: dlopen and dlsym with NUL-terminated strings; the handle
        // is closed by Drop (or below) once nothing of the object is used.
        unsafe {
            let handle = dl::dlopen(c_path.as_ptr(), dl::RTLD_NOW | dl::RTLD_LOCAL);
            if handle.is_null() {
                let why = dl::dlerror();
                let why = if why.is_null() {
                    "unknown error".to_string()
                } else {
                    c_text(why)
                };
                return Err(Error(format!(
                    "{file}: not a shared object the host can load (dlopen says: {why}); build \
                     the plugin as a shared library (add_library(... MODULE), -shared -fPIC, or \
                     crate-type = [\"cdylib\"]) for this platform, with every symbol it needs \
                     available"
                )));
            }
            let sym = dl::dlsym(handle, b"schedplug_plugin_v1\0".as_ptr() as *const c_char);
            if sym.is_null() {
                dl::dlclose(handle);
                return Err(Error(format!(
                    "{file}: exports no `schedplug_plugin_v1` function, so it is not a \
                     schedplug plugin"
                )));
            }
            let entry: Entry = std::mem::transmute(sym);
            Plugin::accept(entry(), &file, handle, args_json)
        }
    }

    /// As [`load`](Plugin::load), from a descriptor (e.g. what
    /// [`plugin_descriptor!`](crate::plugin_descriptor) returns).
    pub fn from_descriptor(
        descriptor: &'static schedplug_plugin,
        args_json: &str,
    ) -> Result<Plugin, Error> {
        Plugin::accept(
            descriptor,
            "schedplug_plugin_v1()",
            ptr::null_mut(),
            args_json,
        )
    }

    /// `file` names the plugin in messages; `handle` is its dlopen handle
    /// (NULL when linked in), closed with the Plugin.
    fn accept(
        descriptor: *const schedplug_plugin,
        file: &str,
        handle: *mut c_void,
        args_json: &str,
    ) -> Result<Plugin, Error> {
        // SAFETY: a plugin's descriptor is valid for its struct_size, and
        // static; accept_descriptor reads nothing else before checking it.
        let d = match unsafe { accept_descriptor(descriptor) } {
            Ok(d) => d,
            Err(problem) => {
                if !handle.is_null() {
                    // SAFETY: nothing of the object is in use.
                    unsafe { dl::dlclose(handle) };
                }
                return Err(Error(format!("{file}: {problem}")));
            }
        };
        // SAFETY: accept_descriptor checked both strings are set.
        let (name, version) = unsafe { (c_text(d.name), c_text(d.version)) };
        let mut p = Plugin {
            d,
            name,
            version,
            instance: ptr::null_mut(),
            host: Box::default(),
            settings: Box::new(schedplug_settings {
                struct_size: size_of::<schedplug_settings>() as u32,
                refresh_period_ms: d.refresh_period_ms,
                events: d.events,
                normalize_policy: d.normalize_policy,
                ..Default::default()
            }),
            ctx: Box::default(),
            handle,
            where_: String::new(),
            label_keys: Vec::new(),
            annotation_keys: Vec::new(),
            extra_data: 0,
        };
        p.where_ = format!("{} ({file})", p.name);
        p.create(args_json)?;
        Ok(p)
    }

    fn create(&mut self, args_json: &str) -> Result<(), Error> {
        *self.host = schedplug_host {
            struct_size: size_of::<schedplug_host>() as u32,
            context: &*self.ctx as *const HostContext as *mut c_void,
            settings: &mut *self.settings,
            ..Default::default()
        };
        host::install(&mut self.host);
        self.host.args = self.ctx.begin(args_json);
        let where_ = self.where_.clone();
        let mut json = args_json.as_bytes().to_vec();
        json.push(0);
        let mut error = ReasonBuffer::new();
        let create = self.d.create.expect("accept_descriptor checked create");
        // SAFETY: the arguments are what the host passes: NUL-terminated
        // args, a host valid until destroy, an out pointer, a reason buffer.
        let code = unsafe {
            create(
                json.as_ptr() as *const c_char,
                args_json.len() as u64,
                &*self.host,
                &mut self.instance,
                error.get(),
            )
        };
        // The settings and the args are valid during create() only.
        self.host.settings = ptr::null_mut();
        self.host.args = ptr::null();
        self.ctx.end();
        if code != SCHEDPLUG_SUCCESS {
            let mut message = error.text();
            if message.is_empty() {
                message = "(the plugin gave no message)".to_string();
            }
            // No instance: nothing to destroy.
            self.instance = ptr::null_mut();
            return Err(Error(format!(
                "{where_} rejected its args: {message}; fix its pluginConfig args (given: \
                 {args_json})"
            )));
        }
        self.settings.struct_size = size_of::<schedplug_settings>() as u32;
        self.settings.reserved = 0;
        // SAFETY: the key arrays are the instance's, alive now.
        if let Some(problem) = unsafe { settings_problem(&self.d, &self.settings) } {
            return Err(Error(format!(
                "{where_} returned broken settings from create(): {problem} (args given: \
                 {args_json})"
            )));
        }
        // The keys are the instance's memory: copied once, never read again.
        // SAFETY: settings_problem checked the arrays.
        unsafe {
            self.label_keys = copy_keys(
                self.settings.pod_label_keys,
                self.settings.pod_label_key_count,
            );
            self.annotation_keys = copy_keys(
                self.settings.pod_annotation_keys,
                self.settings.pod_annotation_key_count,
            );
        }
        self.settings.pod_label_keys = ptr::null();
        self.settings.pod_annotation_keys = ptr::null();
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn version(&self) -> &str {
        &self.version
    }
    /// The descriptor as the host copied it.
    pub fn descriptor(&self) -> &schedplug_plugin {
        &self.d
    }
    /// The settings after create() (the descriptor's values as create()
    /// changed them; the key arrays are in [`pod_keys`](Plugin::pod_keys)).
    pub fn settings(&self) -> &schedplug_settings {
        &self.settings
    }
    /// The pod label and annotation keys the plugin declared (v1.4),
    /// sorted, as the host copies them.
    pub fn pod_keys(&self) -> (&[String], &[String]) {
        (&self.label_keys, &self.annotation_keys)
    }
    /// The data (SCHEDPLUG_DATA_*) the hooks see: what the plugin declared,
    /// and what [`send_data`](Plugin::send_data) added.
    pub fn data(&self) -> u64 {
        self.settings.data | self.extra_data
    }
    /// Sends more data, as in a profile where another plugin declared it.
    pub fn send_data(&mut self, bits: u64) -> &mut Plugin {
        self.extra_data |= bits;
        self
    }
    /// What the plugin logged through the host, "<level>: <text>" a line.
    pub fn logs(&self) -> Vec<String> {
        self.ctx
            .logs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
    pub fn has_filter(&self) -> bool {
        self.d.filter.is_some()
    }
    pub fn has_score(&self) -> bool {
        self.d.score.is_some()
    }

    /// Begins `pod` as the host does once per cycle: pod_begin() when the
    /// plugin has one, else applies() for both gates.
    pub fn begin_pod<'a>(&'a self, pod: &'a Built<'_, schedplug_pod>) -> PodScope<'a> {
        self.begin_pod_raw(pod.raw())
    }

    /// [`begin_pod`](Plugin::begin_pod) on a view of your own (shown to the
    /// plugin with only the declared data, like every `*_raw` method).
    pub fn begin_pod_raw<'a>(&'a self, given: &'a schedplug_pod) -> PodScope<'a> {
        self.begin_pod_sending(given, self.data())
    }

    /// [`begin_pod_raw`](Plugin::begin_pod_raw) as a host sending the data
    /// `bits` (SCHEDPLUG_DATA_*) shows the pod.
    fn begin_pod_sending<'a>(&'a self, given: &'a schedplug_pod, bits: u64) -> PodScope<'a> {
        let mut pod = sent_pod(given, bits);
        pod.state = ptr::null_mut();
        let mut scope = PodScope {
            pod_end: self.d.pod_end,
            instance: self.instance,
            pod,
            runs_filter: true,
            runs_score: true,
            ended: true,
            error: None,
            _life: PhantomData,
        };
        let begin = match self.d.pod_begin {
            Some(begin) => begin,
            None => {
                let runs = self.applies_sent(&scope.pod);
                scope.runs_filter = runs;
                scope.runs_score = runs;
                return scope;
            }
        };
        let mut result = schedplug_pod_begin_result {
            struct_size: size_of::<schedplug_pod_begin_result>() as u32,
            ..Default::default()
        };
        let mut reason = ReasonBuffer::new();
        // SAFETY: the instance is alive; the views are valid for the call.
        let code = unsafe { begin(self.instance, &scope.pod, &mut result, reason.get()) };
        if code != SCHEDPLUG_SUCCESS {
            // runtime::pod_begin_error
            scope.error = Some(if code == SCHEDPLUG_ERROR {
                format!(
                    "plugin {} failed to prepare the pod (pod_begin): {}",
                    self.name,
                    no_reason(&reason.text())
                )
            } else {
                format!(
                    "plugin {} returned status code {code} from pod_begin(); it may only \
                     return SUCCESS or ERROR",
                    self.name
                )
            });
            scope.runs_filter = false;
            scope.runs_score = false;
            return scope;
        }
        scope.pod.state = result.state;
        scope.ended = false;
        scope.runs_filter = result.skip & SCHEDPLUG_SKIP_FILTER == 0;
        scope.runs_score = result.skip & SCHEDPLUG_SKIP_SCORE == 0;
        scope
    }

    /// applies(): true without the hook.
    pub fn applies(&self, pod: &Built<'_, schedplug_pod>) -> bool {
        self.applies_sent(&sent_pod(pod.raw(), self.data()))
    }

    fn applies_sent(&self, pod: &schedplug_pod) -> bool {
        match self.d.applies {
            // SAFETY: the instance is alive; the view is valid for the call.
            Some(f) => unsafe { f(self.instance, pod) != 0 },
            None => true,
        }
    }

    /// The filter hook, with no per-pod state (the state pod_begin makes is
    /// passed by [`run`](Plugin::run)), held to the plugin's hints: see
    /// [`filter_raw`](Plugin::filter_raw).
    pub fn filter(
        &self,
        pod: &Built<'_, schedplug_pod>,
        node: &Built<'_, schedplug_node>,
    ) -> Status {
        self.filter_raw(pod.raw(), node.raw())
    }

    /// The filter hook on views of your own. A plugin that promised
    /// SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS is held to it: its filter
    /// runs again on the node without its pods (as a preemption dry run may
    /// see it), and a different verdict is an ERROR. One that promised
    /// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY is held to that too: a
    /// copy of the pod under another name and uid must get the same
    /// applies / pod_begin / filter results; and one that promised
    /// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS likewise for a copy
    /// without its undeclared labels and annotations and with an undeclared
    /// one of each ([`UNDECLARED_KEY`]).
    pub fn filter_raw(&self, given: &schedplug_pod, given_node: &schedplug_node) -> Status {
        let pod = sent_pod(given, self.data());
        let node = sent_node(given_node, self.data());
        let v = self.filter_once(&pod, &node);
        if v.code() == SCHEDPLUG_ERROR {
            return v;
        }
        match self.filter_promise_problem(given, &pod, &node, &v) {
            Some(problem) => Status::error(problem),
            None => v,
        }
    }

    /// The promises of the filter hints for `given` on `node` (sent),
    /// whose filter answered `v` for `pod` (sent, with its state): the
    /// node's pods, then the pod's identity and its undeclared keys. The
    /// first one broken, in a sentence.
    fn filter_promise_problem(
        &self,
        given: &schedplug_pod,
        pod: &schedplug_pod,
        node: &schedplug_node,
        v: &Status,
    ) -> Option<String> {
        if self.settings.hints & SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS != 0 {
            let mut bare = *node;
            bare.requested = schedplug_resource_list::default();
            bare.pod_count = 0;
            bare.pod_list = ptr::null();
            bare.pod_list_count = 0;
            let without = self.filter_once(pod, &bare);
            if without != *v {
                return Some(format!(
                    "{} promised SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS (HINTS), but its \
                     filter on node \"{}\" answered {} with the node's pods and {} without \
                     them; drop the hint, or read nothing of node->requested, pod_count and \
                     pod_list",
                    self.name,
                    text(node.name),
                    said(v),
                    said(&without)
                ));
            }
        }
        self.pod_promise_problem(given, node)
    }

    /// The filter hook once, on views as the host sends them (the status
    /// as the host reads it: an unknown code is an ERROR).
    pub fn filter_once(&self, pod: &schedplug_pod, node: &schedplug_node) -> Status {
        let f = match self.d.filter {
            Some(f) => f,
            None => return Status::success(),
        };
        let mut reason = ReasonBuffer::new();
        // SAFETY: the instance is alive; the views are valid for the call.
        let code = unsafe { f(self.instance, pod, node, reason.get()) };
        // runtime::filter_verdict
        match code {
            SCHEDPLUG_SUCCESS
            | SCHEDPLUG_ERROR
            | SCHEDPLUG_UNSCHEDULABLE
            | SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE
            | SCHEDPLUG_SKIP => Status::new(code, reason.text()),
            _ => Status::error(format!(
                "plugin {} returned the unknown status code {code} from filter()",
                self.name
            )),
        }
    }

    /// The score hook, with no per-pod state. Err: the host's message.
    pub fn score(
        &self,
        pod: &Built<'_, schedplug_pod>,
        node: &Built<'_, schedplug_node>,
    ) -> Result<i64, String> {
        self.score_raw(pod.raw(), node.raw())
    }

    /// The score hook on views of your own. A plugin that promised
    /// SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY is held to it: a copy of
    /// the pod under another name and uid must get the same applies /
    /// pod_begin / score results, or the score is an Err naming the broken
    /// promise.
    pub fn score_raw(
        &self,
        given: &schedplug_pod,
        given_node: &schedplug_node,
    ) -> Result<i64, String> {
        let node = sent_node(given_node, self.data());
        let value = self.score_once(&sent_pod(given, self.data()), &node)?;
        match self.score_identity_problem(given, &[node], false) {
            Some(problem) => Err(problem),
            None => Ok(value),
        }
    }

    /// The score hook once, on views as the host sends them.
    pub fn score_once(&self, pod: &schedplug_pod, node: &schedplug_node) -> Result<i64, String> {
        let f = match self.d.score {
            Some(f) => f,
            None => {
                return Err(format!(
                    "plugin {} has no score() hook but was asked to score",
                    self.name
                ))
            }
        };
        let mut reason = ReasonBuffer::new();
        let mut value = 0i64;
        // SAFETY: the instance is alive; the views are valid for the call.
        let code = unsafe { f(self.instance, pod, node, &mut value, reason.get()) };
        // runtime::score_result
        match code {
            SCHEDPLUG_SUCCESS => Ok(value),
            SCHEDPLUG_ERROR => Err(format!(
                "plugin {} failed to score node \"{}\": {}",
                self.name,
                text(node.name),
                no_reason(&reason.text())
            )),
            _ => Err(format!(
                "plugin {} returned status code {code} from score(); score may only return \
                 SUCCESS or ERROR",
                self.name
            )),
        }
    }

    /// Normalizes raw scores in place, with the plugin's normalize_score or
    /// its declared policy, then the host's [0, 100] check. Err: the host's
    /// message.
    pub fn normalize(
        &self,
        pod: &Built<'_, schedplug_pod>,
        scores: &mut [NodeScore<'_>],
    ) -> Result<(), String> {
        self.normalize_raw(pod.raw(), scores)
    }

    /// [`normalize`](Plugin::normalize) on a view of your own (its state,
    /// if any, is passed on: the host passes pod_begin's state to
    /// normalize_score). The promise of
    /// SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY covers normalization: the
    /// same raw scores normalized for a copy of the pod under another name
    /// and uid (begun afresh) must come out the same, or this is an Err
    /// naming the broken promise.
    pub fn normalize_raw(
        &self,
        given: &schedplug_pod,
        scores: &mut [NodeScore<'_>],
    ) -> Result<(), String> {
        let raw = scores.to_vec();
        self.normalize_once(&sent_pod(given, self.data()), scores)?;
        if scores.is_empty() || self.settings.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY == 0
        {
            return Ok(());
        }
        let problem = with_twin(given, |again, twin| {
            let got = self.normalize_outcome(again, &raw);
            let twin_got = self.normalize_outcome(twin, &raw);
            (got != twin_got).then(|| {
                twin_differs(
                    "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY",
                    &self.name,
                    &format!("normalizing the raw scores {}, ", scores_listed(&raw)),
                    given,
                    &got,
                    &twin_got,
                    "applies, pod_begin and normalize_score",
                )
            })
        });
        match problem {
            Some(p) => Err(p),
            None => Ok(()),
        }
    }

    /// Normalization once, on a view as the host sends it: the plugin's
    /// normalize_score or its declared policy, and the host's [0, 100]
    /// check.
    pub fn normalize_once(
        &self,
        pod: &schedplug_pod,
        scores: &mut [NodeScore<'_>],
    ) -> Result<(), String> {
        if scores.is_empty() {
            return Ok(());
        }
        // The host's array: entries node_score_size apart (the v1.0 size).
        let mut raw: Vec<schedplug_node_score> = scores
            .iter()
            .map(|s| schedplug_node_score {
                node_name: st(s.node_name),
                score: s.score,
            })
            .collect();
        let custom = self.d.normalize_score.is_some();
        if let Some(f) = self.d.normalize_score {
            let mut reason = ReasonBuffer::new();
            // SAFETY: the instance is alive; the array is writable and
            // holds raw.len() entries.
            let code = unsafe {
                f(
                    self.instance,
                    pod,
                    raw.as_mut_ptr(),
                    raw.len() as u64,
                    reason.get(),
                )
            };
            if code != SCHEDPLUG_SUCCESS {
                // runtime::normalize_failed
                return Err(format!(
                    "plugin {} failed to normalize scores: {}",
                    self.name,
                    no_reason(&reason.text())
                ));
            }
        } else if self.settings.normalize_policy == SCHEDPLUG_NORMALIZE_LINEAR {
            min_max(&mut raw, false);
        } else if self.settings.normalize_policy == SCHEDPLUG_NORMALIZE_REVERSE {
            min_max(&mut raw, true);
        }
        for (s, r) in scores.iter_mut().zip(&raw) {
            s.score = r.score;
        }
        // The host never clamps (host/plugin/plugin_instance.cpp,
        // PluginInstance::normalize, with runtime::out_of_range): a score
        // outside [0, 100] is an error naming the plugin and the node,
        // which kube-scheduler would fail the cycle on anyway.
        for s in scores.iter() {
            if s.score < 0 || s.score > 100 {
                let how = if custom {
                    "after its normalize_score()"
                } else {
                    "with normalize policy NONE (declare LINEAR or REVERSE, or implement \
                     normalize_score, to map raw values)"
                };
                return Err(format!(
                    "plugin {} gave node \"{}\" the score {} {how}; scores must be in [0, 100]",
                    self.name, s.node_name, s.score
                ));
            }
        }
        Ok(())
    }

    /// refresh() once. Err: the host's message.
    pub fn refresh(&self) -> Result<(), String> {
        let f = match self.d.refresh {
            Some(f) => f,
            None => return Ok(()),
        };
        let mut reason = ReasonBuffer::new();
        // SAFETY: the instance is alive.
        match unsafe { f(self.instance, reason.get()) } {
            SCHEDPLUG_SUCCESS => Ok(()),
            _ => Err(format!(
                "plugin {} refresh failed: {}",
                self.name,
                no_reason(&reason.text())
            )),
        }
    }

    /// One scheduling cycle of `pod` over `nodes`, as schedplug-host runs
    /// it: pod_begin once (or applies() for both gates), filter on every
    /// node, score on the nodes that passed, normalization of those scores,
    /// then pod_end. A filter or score ERROR fails the cycle
    /// ([`Cycle::error`]), as it fails the pod in kube-scheduler. The
    /// hints' promises are checked as [`filter_raw`](Plugin::filter_raw)
    /// checks them, and the score identity promise on the whole score pass
    /// (gates, scores, normalization) at once; the first broken promise
    /// fails the cycle, and no other promise is checked in it, so that it
    /// is reported once.
    ///
    /// The hooks see only the declared data ([`data`](Plugin::data)), as
    /// on the host. When the pod or the nodes carry data the plugin did not
    /// declare, the cycle runs again with each such bit sent; if that
    /// changes an answer (a gate, a verdict or reason, a raw or normalized
    /// score, the cycle's error), the plugin reads data it did not declare:
    /// the rows stay as the host would answer, and [`Cycle::error`] is a
    /// sentence naming the bit to declare, the hook and the node
    /// ([`undeclared_data_problem`](Plugin::undeclared_data_problem)). Those
    /// extra cycles run before the host's, so the hooks' last calls see what
    /// the host would send; a plugin that logs sees them in its logs.
    pub fn run(&self, pod: &Pod, nodes: &[Node]) -> Cycle {
        // The check's cycles first: a plugin keeping what it saw last keeps
        // the host's view.
        let undeclared = self.undeclared_data_problem(pod, nodes);
        let mut cycle = self.run_sending(pod, nodes, self.data(), true);
        if let Some(problem) = undeclared {
            cycle.error = Some(match cycle.error.take() {
                None => problem,
                Some(e) => format!("{problem}; the cycle failed too: {e}"),
            });
        }
        cycle
    }

    /// None when the hooks answer the same for `pod` over `nodes` with the
    /// declared data only and with each undeclared SCHEDPLUG_DATA_* bit the
    /// test gave (the pod and nodes carry it); else a sentence: which bits
    /// change the answers, where (hook, node), and to declare them.
    pub fn undeclared_data_problem(&self, pod: &Pod, nodes: &[Node]) -> Option<String> {
        let mut given = carried_pod(pod.view().raw());
        for node in nodes {
            given |= carried_node(node.view().raw());
        }
        let undeclared = given & !self.data() & SCHEDPLUG_DATA_ALL;
        if undeclared == 0 {
            return None;
        }
        let host = self.run_sending(pod, nodes, self.data(), false);
        let mut reads = 0;
        let mut first = None;
        for bit in (0..64).map(|i| 1u64 << i).filter(|b| undeclared & b != 0) {
            let d = self.cycle_difference(
                &host,
                &self.run_sending(pod, nodes, self.data() | bit, false),
            );
            if d.is_some() {
                reads |= bit;
                first = first.or(d);
            }
        }
        if reads == 0 {
            reads = undeclared; // only together, if at all
        }
        let all = self.run_sending(pod, nodes, self.data() | reads, false);
        let (whence, with) = self.cycle_difference(&host, &all).or(first)?;
        let names = data_bit_names(reads);
        let it = if reads.count_ones() == 1 {
            "it"
        } else {
            "them"
        };
        Some(format!(
            "{} reads data it did not declare ({names}): {whence} without {it} (as schedplug-host \
             sends it) and {with} with {it} (as the test gave it); add {names} to the data it \
             declares (DATA in its impl Plugin, or settings.data in configure)",
            self.name
        ))
    }

    /// Where two cycles of one pod first differ, in words: "on node \"n\"
    /// its filter answered X" for the first, and the second's answer. None
    /// when they answered the same.
    fn cycle_difference(&self, a: &Cycle, b: &Cycle) -> Option<(String, String)> {
        let gate = |c: &Cycle| {
            format!(
                "{} filter, {} score",
                if c.filter_skipped { "skipped" } else { "ran" },
                if c.score_skipped { "skipped" } else { "ran" }
            )
        };
        if a.filter_skipped != b.filter_skipped || a.score_skipped != b.score_skipped {
            let hook = if self.d.pod_begin.is_some() {
                "pod_begin"
            } else {
                "applies"
            };
            return Some((format!("its {hook} {}", gate(a)), gate(b)));
        }
        let said = |s: &Status| {
            if s.reason().is_empty() {
                code_name(s.code()).to_string()
            } else {
                format!("{} (\"{}\")", code_name(s.code()), s.reason())
            }
        };
        let raw = |r: &NodeResult| {
            if r.scored {
                r.raw.to_string()
            } else {
                "no score".to_string()
            }
        };
        for (x, y) in a.nodes.iter().zip(&b.nodes) {
            let on = format!("on node \"{}\" its", x.node);
            if x.filter.code() != y.filter.code() || x.filter.reason() != y.filter.reason() {
                return Some((
                    format!("{on} filter answered {}", said(&x.filter)),
                    said(&y.filter),
                ));
            }
            if x.scored != y.scored || x.raw != y.raw {
                return Some((format!("{on} score answered {}", raw(x)), raw(y)));
            }
            if x.score != y.score {
                return Some((
                    format!("{on} score normalized to {}", x.score),
                    y.score.to_string(),
                ));
            }
        }
        if a.nodes.len() != b.nodes.len() || a.error != b.error {
            let failed = |c: &Cycle| match &c.error {
                None => "no error".to_string(),
                Some(e) => format!("the error \"{e}\""),
            };
            return Some((format!("its cycle had {}", failed(a)), failed(b)));
        }
        None
    }

    /// One cycle as [`run`](Plugin::run) makes it, the hooks seeing the
    /// data `bits`; the hints' promises are checked when `promises`.
    fn run_sending(&self, pod: &Pod, nodes: &[Node], bits: u64, promises: bool) -> Cycle {
        let built = pod.view();
        let node_views: Vec<Built<'_, schedplug_node>> = nodes.iter().map(Node::view).collect();
        let mut cycle = Cycle::default();
        let scope = self.begin_pod_sending(built.raw(), bits);
        if let Some(e) = scope.error() {
            cycle.error = Some(e.to_string());
            return cycle;
        }
        let view = *scope.pod();
        cycle.filter_skipped = !scope.runs_filter() || self.d.filter.is_none();
        cycle.score_skipped = !scope.runs_score() || self.d.score.is_none();
        let names: Vec<&str> = nodes.iter().map(Node::name).collect();
        let mut scores: Vec<NodeScore<'_>> = Vec::new();
        let mut scored_rows = Vec::new();
        let mut feasible_nodes = Vec::new(); // sent
        for (i, nv) in node_views.iter().enumerate() {
            let nv = sent_node(nv.raw(), bits);
            // Promises are checked until the cycle has failed.
            let mut broken = None;
            let mut filter = if cycle.filter_skipped {
                // A promise about the pod's identity or its undeclared
                // labels and annotations covers the gates too: a pod whose
                // filter was skipped is checked like one whose filter ran.
                if promises && self.d.filter.is_some() && cycle.error.is_none() {
                    broken = self.pod_promise_problem(built.raw(), &nv);
                }
                Status::skip()
            } else {
                let v = self.filter_once(&view, &nv);
                if promises && v.code() != SCHEDPLUG_ERROR && cycle.error.is_none() {
                    broken = self.filter_promise_problem(built.raw(), &view, &nv, &v);
                }
                v
            };
            if let Some(problem) = broken {
                filter = Status::error(problem);
            }
            if filter.code() == SCHEDPLUG_ERROR && cycle.error.is_none() {
                cycle.error = Some(filter.reason().to_string());
            }
            let feasible = matches!(filter.code(), SCHEDPLUG_SUCCESS | SCHEDPLUG_SKIP);
            if feasible {
                feasible_nodes.push(nv);
            }
            let mut row = NodeResult {
                node: names[i].to_string(),
                filter,
                scored: false,
                raw: 0,
                score: 0,
            };
            if feasible && !cycle.score_skipped {
                match self.score_once(&view, &nv) {
                    Err(e) => {
                        if cycle.error.is_none() {
                            cycle.error = Some(e);
                        }
                    }
                    Ok(value) => {
                        row.scored = true;
                        row.raw = value;
                        scores.push(NodeScore {
                            node_name: names[i],
                            score: value,
                        });
                        scored_rows.push(i);
                    }
                }
            }
            cycle.nodes.push(row);
        }
        if cycle.error.is_none() && !scores.is_empty() {
            match self.normalize_once(&view, &mut scores) {
                Err(e) => cycle.error = Some(e),
                Ok(()) => {
                    for (s, &row) in scores.iter().zip(&scored_rows) {
                        cycle.nodes[row].score = s.score;
                    }
                }
            }
        }
        // The gates count, as for the filter: checked also when they
        // skipped score, on the nodes that passed filter.
        if promises && cycle.error.is_none() && self.d.score.is_some() {
            cycle.error = self.score_identity_problem(built.raw(), &feasible_nodes, true);
        }
        drop(scope); // pod_end
        cycle
    }

    /// The promises about the pod (identity, then undeclared keys): the
    /// first one broken on `node`, in a sentence.
    fn pod_promise_problem(&self, given: &schedplug_pod, node: &schedplug_node) -> Option<String> {
        self.identity_problem(given, node)
            .or_else(|| self.undeclared_keys_problem(given, node))
    }

    /// For a plugin that promised SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY:
    /// begins `given` afresh and filters it on `node`, then does the same
    /// for a copy named "twin-of-<name>" with the uid "twin-of-<uid>"; a
    /// sentence naming what differed (None also without the promise).
    pub fn identity_problem(&self, given: &schedplug_pod, node: &schedplug_node) -> Option<String> {
        if self.settings.hints & SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY == 0 {
            return None;
        }
        let node = sent_node(node, self.data());
        with_twin(given, |again, twin| {
            let got = self.outcome(again, &node);
            let twin_got = self.outcome(twin, &node);
            (got != twin_got).then(|| {
                twin_differs(
                    "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY",
                    &self.name,
                    &format!("on node \"{}\" ", text(node.name)),
                    given,
                    &got,
                    &twin_got,
                    "applies, pod_begin and filter",
                )
            })
        })
    }

    /// For a plugin that promised SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY:
    /// begins `given` afresh, scores it on `nodes` (sent) and, when
    /// `normalized`, normalizes those scores; then does the same for a copy
    /// named "twin-of-<name>" with the uid "twin-of-<uid>"; a sentence
    /// naming what differed (None also without the promise).
    pub fn score_identity_problem(
        &self,
        given: &schedplug_pod,
        nodes: &[schedplug_node],
        normalized: bool,
    ) -> Option<String> {
        if self.settings.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY == 0 {
            return None;
        }
        with_twin(given, |again, twin| {
            let got = self.score_outcome(again, nodes, normalized);
            let twin_got = self.score_outcome(twin, nodes, normalized);
            (got != twin_got).then(|| {
                twin_differs(
                    "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY",
                    &self.name,
                    "",
                    given,
                    &got,
                    &twin_got,
                    "applies, pod_begin, score and normalize_score",
                )
            })
        })
    }

    /// For a plugin that promised
    /// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS: begins `given` afresh
    /// and filters it on `node`, then does the same for a copy that keeps
    /// only the labels and annotations whose keys the plugin declared and
    /// gains the label and annotation [`UNDECLARED_KEY`]: "x"; a sentence
    /// naming what differed (None also without the promise).
    pub fn undeclared_keys_problem(
        &self,
        given: &schedplug_pod,
        node: &schedplug_node,
    ) -> Option<String> {
        if self.settings.hints & SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS == 0 {
            return None;
        }
        let node = sent_node(node, self.data());
        let declared =
            |keys: &[String], k: &str| keys.binary_search_by(|x| x.as_str().cmp(k)).is_ok();
        let mut extra = UNDECLARED_KEY.to_string();
        while declared(&self.label_keys, &extra) || declared(&self.annotation_keys, &extra) {
            extra.push('-');
        }
        let value = "x";
        let kv_size = read_field!(given as *const schedplug_pod, schedplug_pod, kv_size)
            .map_or(0, |n| n as usize)
            .max(size_of::<schedplug_kv>());
        let mut again = *given;
        again.state = ptr::null_mut();
        let mut copy = again;
        let (labels, dropped_labels, _label_store) =
            only_declared(given.labels, kv_size, &self.label_keys, &extra, value);
        let (annotations, dropped_annotations, _annotation_store) = only_declared(
            given.annotations,
            kv_size,
            &self.annotation_keys,
            &extra,
            value,
        );
        copy.labels = labels;
        copy.annotations = annotations;
        let got = self.outcome(&again, &node);
        let copy_got = self.outcome(&copy, &node);
        if got == copy_got {
            return None;
        }
        let listed = |keys: &[String]| {
            if keys.is_empty() {
                "none".to_string()
            } else {
                keys.iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        Some(format!(
            "{} promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (HINTS), but on node \
             \"{}\" pod \"{}\" got {got} and a copy without its undeclared labels ({}) and \
             annotations ({}) and with the undeclared label and annotation \"{extra}\": \
             \"{value}\" got {copy_got}; declare every pod label and annotation key the plugin \
             reads in applies, pod_begin and filter (declared label keys: {}; annotation keys: \
             {}), or drop the hint",
            self.name,
            text(node.name),
            text(given.name),
            listed(&dropped_labels),
            listed(&dropped_annotations),
            listed(&self.label_keys),
            listed(&self.annotation_keys)
        ))
    }

    /// How pod_begin (or applies) gated the pod of `scope`, in words;
    /// empty without either hook.
    fn gates(&self, scope: &PodScope<'_>) -> String {
        if self.d.pod_begin.is_some() {
            if let Some(e) = scope.error() {
                return format!("pod_begin failing ({e})");
            }
            let skipped = match (scope.runs_filter(), scope.runs_score()) {
                (false, true) => "filter",
                (false, false) => "filter and score",
                (true, false) => "score",
                (true, true) => "nothing",
            };
            return format!("pod_begin skipping {skipped}");
        }
        if self.d.applies.is_some() {
            return format!("applies {}", scope.runs_filter());
        }
        String::new()
    }

    /// What the host would make of `pod` on `node`, in words: how pod_begin
    /// (or applies) gated it, then the filter's verdict.
    fn outcome(&self, pod: &schedplug_pod, node: &schedplug_node) -> String {
        let scope = self.begin_pod_raw(pod);
        let out = self.gates(&scope);
        if scope.error().is_some() || !scope.runs_filter() {
            return out;
        }
        then(
            out,
            format!("filter {}", said(&self.filter_once(scope.pod(), node))),
        )
    }

    /// The same for scoring `pod` on `nodes` (sent): the gates, each node's
    /// score, and when `normalized` the normalized scores.
    fn score_outcome(
        &self,
        pod: &schedplug_pod,
        nodes: &[schedplug_node],
        normalized: bool,
    ) -> String {
        let scope = self.begin_pod_raw(pod);
        let out = self.gates(&scope);
        if scope.error().is_some() || !scope.runs_score() {
            return out;
        }
        let names: Vec<String> = nodes.iter().map(|n| text(n.name)).collect();
        let mut scores = Vec::new();
        let mut each = Vec::new();
        for (node, name) in nodes.iter().zip(&names) {
            match self.score_once(scope.pod(), node) {
                Ok(v) => {
                    each.push(format!("\"{name}\" {v}"));
                    scores.push(NodeScore {
                        node_name: name,
                        score: v,
                    });
                }
                Err(e) => each.push(format!("\"{name}\" Error (\"{e}\")")),
            }
        }
        let each = if each.is_empty() {
            "on no node".to_string()
        } else {
            each.join(", ")
        };
        let scored = then(out, format!("score {each}"));
        if !normalized || scores.is_empty() {
            return scored;
        }
        match self.normalize_once(scope.pod(), &mut scores) {
            Ok(()) => format!("{scored}, normalized {}", scores_listed(&scores)),
            Err(e) => format!("{scored}, normalization Error (\"{e}\")"),
        }
    }

    /// The same for normalizing `raw` for `pod`: the gates, then the
    /// normalized scores.
    fn normalize_outcome(&self, pod: &schedplug_pod, raw: &[NodeScore<'_>]) -> String {
        let scope = self.begin_pod_raw(pod);
        let out = self.gates(&scope);
        if scope.error().is_some() || !scope.runs_score() {
            return out;
        }
        let mut scores = raw.to_vec();
        match self.normalize_once(scope.pod(), &mut scores) {
            Ok(()) => then(out, format!("normalized {}", scores_listed(&scores))),
            Err(e) => then(out, format!("normalization Error (\"{e}\")")),
        }
    }
}

/// `next` after `before` ("<before>, then <next>"), or `next` alone.
fn then(before: String, next: String) -> String {
    if before.is_empty() {
        next
    } else {
        format!("{before}, then {next}")
    }
}

/// "\"a\" 1, \"b\" 2"
fn scores_listed(scores: &[NodeScore<'_>]) -> String {
    scores
        .iter()
        .map(|s| format!("\"{}\" {}", s.node_name, s.score))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Calls `f` with `given` begun afresh (no state) and a copy named
/// "twin-of-<name>" with the uid "twin-of-<uid>", for the identity
/// promises.
fn with_twin<R>(given: &schedplug_pod, f: impl FnOnce(&schedplug_pod, &schedplug_pod) -> R) -> R {
    let twin_name = format!("twin-of-{}", text(given.name));
    let twin_uid = format!("twin-of-{}", text(given.uid));
    let mut again = *given;
    again.state = ptr::null_mut();
    let mut twin = again;
    twin.name = st(&twin_name);
    twin.uid = st(&twin_uid);
    f(&again, &twin)
}

/// The sentence for `plugin`'s broken `hint`: `place` (empty or ending in
/// a space) pod `given` got `got` and its twin `twin_got`; the advice
/// names the `hooks` that must not read name and uid.
fn twin_differs(
    hint: &str,
    plugin: &str,
    place: &str,
    given: &schedplug_pod,
    got: &str,
    twin_got: &str,
    hooks: &str,
) -> String {
    let (name, uid) = (text(given.name), text(given.uid));
    format!(
        "{plugin} promised {hint} (HINTS), but {place}pod \"{name}\" (uid \"{uid}\") got {got} \
         and a copy named \"twin-of-{name}\" (uid \"twin-of-{uid}\") got {twin_got}; drop the \
         hint, or read neither the pod's name nor its uid in {hooks}"
    )
}

impl Drop for Plugin {
    fn drop(&mut self) {
        if let (false, Some(destroy)) = (self.instance.is_null(), self.d.destroy) {
            // SAFETY: the instance create() made, destroyed once.
            unsafe { destroy(self.instance) }
        }
        if !self.handle.is_null() {
            // SAFETY: after destroy nothing of the object is in use.
            unsafe { dl::dlclose(self.handle) };
        }
    }
}

/// The dynamic loader (in glibc's libc since 2.34, in libdl before, which
/// std links on linux-gnu).
mod dl {
    use std::ffi::c_void;
    use std::os::raw::{c_char, c_int};
    pub const RTLD_NOW: c_int = 2;
    pub const RTLD_LOCAL: c_int = 0;
    extern "C" {
        pub fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
        pub fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        pub fn dlerror() -> *mut c_char;
        pub fn dlclose(handle: *mut c_void) -> c_int;
    }
}

fn said(s: &Status) -> String {
    if s.reason().is_empty() {
        code_name(s.code()).to_string()
    } else {
        format!("{} (\"{}\")", code_name(s.code()), s.reason())
    }
}

/// `list` (entries `kv_size` apart) with only the entries whose keys are in
/// `keep` (sorted), plus `extra`: `value`, still sorted and laid out
/// `kv_size` apart; the keys left out; and the storage the list points to.
fn only_declared(
    list: schedplug_kv_list,
    kv_size: usize,
    keep: &[String],
    extra: &str,
    value: &str,
) -> (schedplug_kv_list, Vec<String>, Vec<u64>) {
    let mut kept: Vec<schedplug_kv> = Vec::new();
    let mut dropped = Vec::new();
    let count = if list.items.is_null() {
        0
    } else {
        list.count as usize
    };
    for i in 0..count {
        // SAFETY: the view's list holds `count` entries kv_size apart.
        let kv =
            unsafe { ((list.items as *const u8).add(i * kv_size) as *const schedplug_kv).read() };
        let key = text(kv.key);
        if keep.binary_search(&key).is_ok() {
            kept.push(kv);
        } else {
            dropped.push(key);
        }
    }
    let added = schedplug_kv {
        key: st(extra),
        value: st(value),
    };
    let at = kept
        .iter()
        .position(|kv| text(kv.key).as_bytes() > extra.as_bytes())
        .unwrap_or(kept.len());
    kept.insert(at, added);
    // u64 words keep the entries aligned.
    let mut store = vec![0u64; (kept.len() * kv_size + 7) / 8];
    for (i, kv) in kept.iter().enumerate() {
        // SAFETY: `store` holds kept.len() entries of kv_size >= the entry.
        unsafe {
            ((store.as_mut_ptr() as *mut u8).add(i * kv_size) as *mut schedplug_kv).write(*kv)
        }
    }
    let out = schedplug_kv_list {
        items: store.as_ptr() as *const schedplug_kv,
        count: kept.len() as u64,
    };
    (out, dropped, store)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(values: &[i64]) -> Vec<schedplug_node_score> {
        values
            .iter()
            .map(|&v| schedplug_node_score {
                node_name: schedplug_str::default(),
                score: v,
            })
            .collect()
    }

    #[test]
    fn min_max_is_exact_and_rounds() {
        let mut s = scores(&[0, 1, 2]);
        min_max(&mut s, false);
        assert_eq!(s.iter().map(|s| s.score).collect::<Vec<_>>(), [0, 50, 100]);
        let mut s = scores(&[i64::MIN, 0, i64::MAX]);
        min_max(&mut s, false);
        assert_eq!(s.iter().map(|s| s.score).collect::<Vec<_>>(), [0, 50, 100]);
        let mut s = scores(&[10, 20, 40]);
        min_max(&mut s, true);
        assert_eq!(s.iter().map(|s| s.score).collect::<Vec<_>>(), [100, 67, 0]);
        let mut s = scores(&[7, 7]);
        min_max(&mut s, true);
        assert_eq!(s.iter().map(|s| s.score).collect::<Vec<_>>(), [100, 100]);
    }

    #[test]
    fn names_are_checked_as_the_host_does() {
        assert!(is_upper_camel_case("HwEncrypt"));
        assert!(!is_upper_camel_case("hw_encrypt"));
        assert_eq!(upper_camel_case_of("hw_encrypt"), "HwEncrypt");
        assert_eq!(upper_camel_case_of("-"), "");
    }

    #[test]
    fn views_are_sorted_and_masked() {
        let pod = Pod::new("p")
            .label("b", "2")
            .label("a", "1")
            .node_name("n1")
            .request("cpu", 5);
        let built = pod.view();
        let view = unsafe { crate::view::Pod::from_raw(built.raw()) };
        assert_eq!(
            view.labels().iter().collect::<Vec<_>>(),
            [("a", "1"), ("b", "2")]
        );
        assert_eq!(view.node_name(), "n1");
        assert_eq!(view.requests().get("cpu"), 5);
        let masked = sent_pod(built.raw(), 0);
        assert_eq!(
            unsafe { crate::view::Pod::from_raw(&masked) }.node_name(),
            ""
        );
    }
}
