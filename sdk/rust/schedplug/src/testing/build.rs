//! The test kit's pods and nodes: the builders (Pod, Node, Container,
//! NodePod, the v1.3 terms), the views they give a plugin, and which data
//! (SCHEDPLUG_DATA_*) a view carries and shows.
//!
//! One file, although long: every builder fills the same `Store` its view
//! points into, and the data masks read the views the builders make; split
//! apart they would need their internals opened to each other.

use super::*;
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
    pub(super) labels: BTreeMap<String, String>,
    priority: i32,
    pub(super) requests: BTreeMap<String, i64>,
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
    pub(super) name: String,
    pub(super) labels: BTreeMap<String, String>,
    pub(super) annotations: BTreeMap<String, String>,
    pub(super) taints: Vec<(String, String, String)>,
    pub(super) allocatable: BTreeMap<String, i64>,
    pub(super) requested: BTreeMap<String, i64>,
    pub(super) capacity: BTreeMap<String, i64>,
    pub(super) pod_count: Option<u32>,
    pub(super) requested_set: bool,
    pub(super) unschedulable: bool,
    pub(super) conditions: Vec<(String, String)>,
    pub(super) pods: BTreeMap<(String, String), NodePod>,
    pub(super) images: Vec<(Vec<String>, i64)>,
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

pub(super) fn st(s: &str) -> schedplug_str {
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
pub(super) fn text(s: schedplug_str) -> String {
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
