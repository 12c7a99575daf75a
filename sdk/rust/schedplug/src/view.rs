//! Borrowed, read-only views of the host's pod and node (valid for one hook
//! call: `'a`).
//!
//! Every read honours the view's `struct_size` (plugin.h's
//! SCHEDPLUG_HAS_FIELD): a field the host did not send reads as empty/zero,
//! so a plugin runs unchanged on an older host. Arrays are indexed with the
//! element size the host sent.

// One file, although long: every view reads through the struct_size-checked
// read_field! and the element-size Array at the top, one small wrapper per
// plugin.h struct.

use crate::abi::*;
use std::marker::PhantomData;
use std::mem::size_of;

/// The offset and size of `$field` in `$ty`, measured on a local value so
/// nothing is read (offset_of! is newer than Rust 1.63).
macro_rules! field_layout {
    ($ty:ident, $field:ident) => {{
        let u = std::mem::MaybeUninit::<$ty>::uninit();
        let base = u.as_ptr();
        // SAFETY: addr_of! takes the address inside a local allocation
        // without reading it.
        // (allow: the macro also expands inside unsafe fns, where Rust
        // 1.63 calls the block unnecessary)
        #[allow(unused_unsafe)]
        let p = unsafe { std::ptr::addr_of!((*base).$field) };
        (p as usize - base as usize, p)
    }};
}

/// `$view.$field` when `$view`'s struct_size covers it, else None.
/// `$view` is a `*const $ty` to a host view whose first field is
/// `uint32_t struct_size`, valid for struct_size bytes.
macro_rules! read_field {
    ($view:expr, $ty:ident, $field:ident) => {{
        let (offset, witness) = $crate::view::field_layout!($ty, $field);
        let view: *const $ty = $view;
        // SAFETY: the caller's view contract; read_at reads only within
        // struct_size.
        #[allow(unused_unsafe)]
        let value = unsafe { $crate::view::read_at(view as *const u8, offset, witness) };
        value
    }};
}
pub(crate) use {field_layout, read_field};

/// `struct_size >= offset + size_of::<T>()` (SCHEDPLUG_HAS_FIELD).
#[inline]
pub fn has_field<T>(struct_size: u32, offset: usize) -> bool {
    struct_size as usize >= offset + size_of::<T>()
}

/// Reads the `T` at `offset` of the view at `base` when the view's
/// struct_size (its first u32) covers it. `_witness` only names `T`.
///
/// # Safety
/// `base` is NULL or points to a view valid for its struct_size bytes.
#[inline]
pub(crate) unsafe fn read_at<T: Copy>(
    base: *const u8,
    offset: usize,
    _witness: *const T,
) -> Option<T> {
    if base.is_null() {
        return None;
    }
    let struct_size = (base as *const u32).read();
    if has_field::<T>(struct_size, offset) {
        Some((base.add(offset) as *const T).read())
    } else {
        None
    }
}

/// The element size to index with: the host's, else the v1.0 size. A size
/// smaller than v1.0's would be a host bug; it is not used, so that no read
/// goes past an element.
#[inline]
fn element_size<T>(sent: Option<u32>) -> usize {
    match sent {
        Some(n) if n as usize >= size_of::<T>() => n as usize,
        _ => size_of::<T>(),
    }
}

/// The bytes of a `schedplug_str` (NULL data reads as empty).
///
/// # Safety
/// `s.data` is NULL or valid for `s.len` bytes during `'a`.
#[inline]
unsafe fn bytes<'a>(s: schedplug_str) -> &'a [u8] {
    if s.data.is_null() || s.len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(s.data as *const u8, s.len as usize)
    }
}

/// Kubernetes strings are UTF-8; anything else reads as "" (the bytes stay
/// available through the `_bytes` accessors).
#[inline]
fn text(b: &[u8]) -> &str {
    // Labels and names are nearly always ASCII: checked inline, without
    // the call into the full validator.
    if b.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        return unsafe { std::str::from_utf8_unchecked(b) };
    }
    std::str::from_utf8(b).unwrap_or("")
}

/// A borrowed array of `count` elements `stride` bytes apart.
#[derive(Clone, Copy)]
struct Array<'a, T> {
    items: *const T,
    count: usize,
    stride: usize,
    _life: PhantomData<&'a T>,
}

impl<'a, T: Copy> Array<'a, T> {
    #[inline]
    fn new(items: *const T, count: u64, stride: usize) -> Array<'a, T> {
        Array {
            items,
            count: if items.is_null() { 0 } else { count as usize },
            stride,
            _life: PhantomData,
        }
    }

    #[inline]
    fn empty() -> Array<'a, T> {
        Array::new(std::ptr::null(), 0, size_of::<T>())
    }

    #[inline]
    fn get(&self, i: usize) -> Option<T> {
        if i >= self.count {
            return None;
        }
        // SAFETY: the host's array holds `count` elements `stride` apart,
        // each at least a v1.0 element (element_size).
        Some(unsafe { ((self.items as *const u8).add(i * self.stride) as *const T).read() })
    }

    /// Binary search of an array sorted by `key` in byte order.
    #[inline]
    fn find(&self, key: &[u8], key_of: impl Fn(&T) -> schedplug_str) -> Option<T> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let item = self.get(mid)?;
            // SAFETY: the host's strings are valid for the call ('a).
            match unsafe { bytes(key_of(&item)) }.cmp(key) {
                std::cmp::Ordering::Equal => return Some(item),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }
}

/// Labels, annotations or a node selector: sorted by key, keys unique.
#[derive(Clone, Copy)]
pub struct KeyValues<'a> {
    items: Array<'a, schedplug_kv>,
}

impl<'a> KeyValues<'a> {
    #[inline]
    fn new(list: Option<schedplug_kv_list>, kv_size: usize) -> KeyValues<'a> {
        KeyValues {
            items: list.map_or_else(Array::empty, |l| Array::new(l.items, l.count, kv_size)),
        }
    }

    /// The number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.count
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.count == 0
    }

    /// The value of `key` (exact, case-sensitive), by binary search.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.get_bytes(key.as_bytes()).map(text)
    }

    /// The value of `key` as bytes.
    #[inline]
    pub fn get_bytes(&self, key: &[u8]) -> Option<&'a [u8]> {
        self.items
            .find(key, |kv| kv.key)
            // SAFETY: borrowed from the host for 'a.
            .map(|kv| unsafe { bytes(kv.value) })
    }

    /// Whether `key` is present.
    #[inline]
    pub fn contains_key(&self, key: &str) -> bool {
        self.get_bytes(key.as_bytes()).is_some()
    }

    /// The entries in key order, as (key, value).
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let items = self.items;
        (0..items.count).filter_map(move |i| {
            let kv = items.get(i)?;
            // SAFETY: borrowed from the host for 'a.
            Some(unsafe { (text(bytes(kv.key)), text(bytes(kv.value))) })
        })
    }
}

/// Resource quantities, sorted by name; an absent resource is 0.
#[derive(Clone, Copy)]
pub struct Resources<'a> {
    items: Array<'a, schedplug_resource>,
}

impl<'a> Resources<'a> {
    #[inline]
    fn new(list: Option<schedplug_resource_list>, size: usize) -> Resources<'a> {
        Resources {
            items: list.map_or_else(Array::empty, |l| Array::new(l.items, l.count, size)),
        }
    }

    /// The value of resource `name` ("cpu" in millicores, "memory" in
    /// bytes, ...), 0 when absent.
    #[inline]
    pub fn get(&self, name: &str) -> i64 {
        self.items
            .find(name.as_bytes(), |r| r.name)
            .map_or(0, |r| r.value)
    }

    /// The number of resources listed.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.count
    }

    /// Whether none is listed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.count == 0
    }

    /// The resources in name order, as (name, value).
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, i64)> + 'a {
        let items = self.items;
        (0..items.count).filter_map(move |i| {
            let r = items.get(i)?;
            // SAFETY: borrowed from the host for 'a.
            Some((text(unsafe { bytes(r.name) }), r.value))
        })
    }
}

/// A node taint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taint<'a> {
    pub key: &'a str,
    pub value: &'a str,
    /// "NoSchedule", "PreferNoSchedule" or "NoExecute".
    pub effect: &'a str,
}

/// The element sizes of a pod's or a node's nested arrays, so an element
/// view (a container, a pod on the node) indexes its own arrays with the
/// sizes the host sent.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    kv: usize,
    resource: usize,
    port: usize,
    requirement: usize,
}

/// A borrowed array of the host's, read element by element: `len`, `get`,
/// `iter`. Elements are indexed with the element size the host sent.
pub struct List<'a, R: Copy, V> {
    items: Array<'a, R>,
    sizes: Sizes,
    make: fn(R, Sizes) -> V,
}

// By hand: derive would ask V to be Copy too.
impl<R: Copy, V> Clone for List<'_, R, V> {
    #[inline]
    fn clone(&self) -> Self {
        *self
    }
}
impl<R: Copy, V> Copy for List<'_, R, V> {}

impl<'a, R: Copy + 'a, V: 'a> List<'a, R, V> {
    #[inline]
    fn new(items: Array<'a, R>, sizes: Sizes, make: fn(R, Sizes) -> V) -> List<'a, R, V> {
        List { items, sizes, make }
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.count
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.count == 0
    }

    /// Element `i`, None past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<V> {
        self.items.get(i).map(|r| (self.make)(r, self.sizes))
    }

    /// The elements in order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = V> + 'a {
        let list = *self;
        (0..list.items.count).filter_map(move |i| list.get(i))
    }
}

/// # Safety (of every `fn(raw, Sizes) -> View` below)
/// The raw element is the host's, its strings and arrays valid for 'a.
#[inline]
fn string<'a>(s: schedplug_str) -> &'a str {
    // SAFETY: see above; borrowed from the host for 'a.
    text(unsafe { bytes(s) })
}

/// A list of strings (`names`, `values`, ...): plain arrays of
/// schedplug_str, which have no element size.
pub type Strings<'a> = List<'a, schedplug_str, &'a str>;

#[inline]
fn strings<'a>(items: *const schedplug_str, count: u64) -> Strings<'a> {
    let sizes = Sizes {
        kv: size_of::<schedplug_kv>(),
        resource: size_of::<schedplug_resource>(),
        port: size_of::<schedplug_container_port>(),
        requirement: size_of::<schedplug_selector_requirement>(),
    };
    List::new(
        Array::new(items, count, size_of::<schedplug_str>()),
        sizes,
        |s, _| string(s),
    )
}

impl<'a> Strings<'a> {
    /// Whether `s` is one of them.
    #[inline]
    pub fn contains(&self, s: &str) -> bool {
        self.iter().any(|x| x == s)
    }
}

/// A pod toleration. `op` is "Equal" or "Exists" (empty means "Equal");
/// an empty `effect` matches every effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Toleration<'a> {
    pub key: &'a str,
    pub op: &'a str,
    pub value: &'a str,
    pub effect: &'a str,
    /// tolerationSeconds, when set.
    pub seconds: Option<i64>,
}

#[inline]
fn toleration<'a>(t: schedplug_toleration, _: Sizes) -> Toleration<'a> {
    Toleration {
        key: string(t.key),
        op: string(t.op),
        value: string(t.value),
        effect: string(t.effect),
        seconds: if t.has_toleration_seconds != 0 {
            Some(t.toleration_seconds)
        } else {
            None
        },
    }
}

/// One owner reference of a pod (v1.2, SCHEDPLUG_DATA_POD_OWNERS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner<'a> {
    /// "ReplicaSet", "StatefulSet", "Job", ...
    pub kind: &'a str,
    pub name: &'a str,
    /// Whether this owner is the pod's controller.
    pub controller: bool,
}

#[inline]
fn owner<'a>(o: schedplug_owner, _: Sizes) -> Owner<'a> {
    Owner {
        kind: string(o.kind),
        name: string(o.name),
        controller: o.controller != 0,
    }
}

/// One port of a container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerPort<'a> {
    pub container_port: i32,
    /// 0: no host port.
    pub host_port: i32,
    /// "TCP", "UDP" or "SCTP".
    pub protocol: &'a str,
    /// "": every address.
    pub host_ip: &'a str,
}

#[inline]
fn port<'a>(p: schedplug_container_port, _: Sizes) -> ContainerPort<'a> {
    ContainerPort {
        container_port: p.container_port,
        host_port: p.host_port,
        protocol: string(p.protocol),
        host_ip: string(p.host_ip),
    }
}

/// One app container of a pod (v1.2, SCHEDPLUG_DATA_POD_CONTAINERS), in
/// spec order.
#[derive(Clone, Copy)]
pub struct Container<'a> {
    raw: schedplug_container,
    sizes: Sizes,
    _life: PhantomData<&'a ()>,
}

#[inline]
fn container<'a>(raw: schedplug_container, sizes: Sizes) -> Container<'a> {
    Container {
        raw,
        sizes,
        _life: PhantomData,
    }
}

impl<'a> Container<'a> {
    #[inline]
    pub fn name(&self) -> &'a str {
        string(self.raw.name)
    }
    #[inline]
    pub fn image(&self) -> &'a str {
        string(self.raw.image)
    }
    /// Its requests, in canonical units.
    #[inline]
    pub fn requests(&self) -> Resources<'a> {
        Resources::new(Some(self.raw.requests), self.sizes.resource)
    }
    /// Its limits, in canonical units.
    #[inline]
    pub fn limits(&self) -> Resources<'a> {
        Resources::new(Some(self.raw.limits), self.sizes.resource)
    }
    /// Its ports.
    #[inline]
    pub fn ports(&self) -> List<'a, schedplug_container_port, ContainerPort<'a>> {
        List::new(
            Array::new(self.raw.ports, self.raw.port_count, self.sizes.port),
            self.sizes,
            port,
        )
    }
}

/// One node condition (v1.2, SCHEDPLUG_DATA_NODE_CONDITIONS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeCondition<'a> {
    /// Its type: "Ready", "MemoryPressure", ...
    pub kind: &'a str,
    /// "True", "False" or "Unknown".
    pub status: &'a str,
}

#[inline]
fn condition<'a>(c: schedplug_node_condition, _: Sizes) -> NodeCondition<'a> {
    NodeCondition {
        kind: string(c.r#type),
        status: string(c.status),
    }
}

/// One pod already on a node, compact (v1.2, SCHEDPLUG_DATA_NODE_PODS).
#[derive(Clone, Copy)]
pub struct NodePod<'a> {
    raw: schedplug_node_pod,
    sizes: Sizes,
    _life: PhantomData<&'a ()>,
}

#[inline]
fn node_pod<'a>(raw: schedplug_node_pod, sizes: Sizes) -> NodePod<'a> {
    NodePod {
        raw,
        sizes,
        _life: PhantomData,
    }
}

impl<'a> NodePod<'a> {
    #[inline]
    pub fn namespace(&self) -> &'a str {
        string(self.raw.namespace_name)
    }
    #[inline]
    pub fn name(&self) -> &'a str {
        string(self.raw.name)
    }
    #[inline]
    pub fn labels(&self) -> KeyValues<'a> {
        KeyValues::new(Some(self.raw.labels), self.sizes.kv)
    }
    #[inline]
    pub fn priority(&self) -> i32 {
        self.raw.priority
    }
    /// Its effective requests, as for the pod being scheduled.
    #[inline]
    pub fn requests(&self) -> Resources<'a> {
        Resources::new(Some(self.raw.requests), self.sizes.resource)
    }
    /// Its controller's kind ("ReplicaSet", ...; "" for none).
    #[inline]
    pub fn owner_kind(&self) -> &'a str {
        string(self.raw.owner_kind)
    }
}

/// One volume of a pod (v1.3, SCHEDPLUG_DATA_POD_VOLUMES), in spec order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Volume<'a> {
    pub name: &'a str,
    /// The key of its source in the pod spec: "persistentVolumeClaim",
    /// "ephemeral", "configMap", ...
    pub source: &'a str,
    /// The PVC it uses ("<pod>-<volume>" for a generic ephemeral volume),
    /// else "".
    pub claim_name: &'a str,
    pub read_only: bool,
}

#[inline]
fn volume<'a>(v: schedplug_volume, _: Sizes) -> Volume<'a> {
    Volume {
        name: string(v.name),
        source: string(v.source),
        claim_name: string(v.claim_name),
        read_only: v.read_only != 0,
    }
}

/// One container image a node holds (v1.3, SCHEDPLUG_DATA_NODE_IMAGES).
#[derive(Clone, Copy)]
pub struct NodeImage<'a> {
    raw: schedplug_node_image,
    _life: PhantomData<&'a ()>,
}

#[inline]
fn image<'a>(raw: schedplug_node_image, _: Sizes) -> NodeImage<'a> {
    NodeImage {
        raw,
        _life: PhantomData,
    }
}

impl<'a> NodeImage<'a> {
    /// Its names (a tag and a digest reference, typically).
    #[inline]
    pub fn names(&self) -> Strings<'a> {
        strings(self.raw.names, self.raw.name_count)
    }
    /// Whether `name` is one of its names.
    #[inline]
    pub fn has_name(&self, name: &str) -> bool {
        self.names().contains(name)
    }
    #[inline]
    pub fn size_bytes(&self) -> i64 {
        self.raw.size_bytes
    }
}

/// One requirement of a selector (matchExpressions, matchFields).
#[derive(Clone, Copy)]
pub struct Requirement<'a> {
    pub key: &'a str,
    /// "In", "NotIn", "Exists", "DoesNotExist", "Gt" or "Lt".
    pub op: &'a str,
    /// In spec order.
    pub values: Strings<'a>,
}

#[inline]
fn requirement<'a>(r: schedplug_selector_requirement, _: Sizes) -> Requirement<'a> {
    Requirement {
        key: string(r.key),
        op: string(r.op),
        values: strings(r.values, r.value_count),
    }
}

/// Selector requirements, `requirement_size` apart.
pub type Requirements<'a> = List<'a, schedplug_selector_requirement, Requirement<'a>>;

#[inline]
fn requirements<'a>(
    items: *const schedplug_selector_requirement,
    count: u64,
    sizes: Sizes,
) -> Requirements<'a> {
    List::new(
        Array::new(items, count, sizes.requirement),
        sizes,
        requirement,
    )
}

/// A label selector (metav1.LabelSelector). An unset one (`present()`
/// false) differs from an empty one, which matches everything.
#[derive(Clone, Copy)]
pub struct LabelSelector<'a> {
    raw: schedplug_label_selector,
    sizes: Sizes,
    _life: PhantomData<&'a ()>,
}

#[inline]
fn selector<'a>(raw: schedplug_label_selector, sizes: Sizes) -> LabelSelector<'a> {
    LabelSelector {
        raw,
        sizes,
        _life: PhantomData,
    }
}

impl<'a> LabelSelector<'a> {
    /// Whether the field is set.
    #[inline]
    pub fn present(&self) -> bool {
        self.raw.present != 0
    }
    /// matchLabels, sorted by key.
    #[inline]
    pub fn match_labels(&self) -> KeyValues<'a> {
        KeyValues::new(Some(self.raw.match_labels), self.sizes.kv)
    }
    /// matchExpressions.
    #[inline]
    pub fn match_expressions(&self) -> Requirements<'a> {
        requirements(
            self.raw.match_expressions,
            self.raw.match_expression_count,
            self.sizes,
        )
    }
}

/// One node selector term of a node affinity (v1.3,
/// SCHEDPLUG_DATA_POD_NODE_AFFINITY).
#[derive(Clone, Copy)]
pub struct NodeSelectorTerm<'a> {
    raw: schedplug_node_selector_term,
    sizes: Sizes,
    _life: PhantomData<&'a ()>,
}

#[inline]
fn node_term<'a>(raw: schedplug_node_selector_term, sizes: Sizes) -> NodeSelectorTerm<'a> {
    NodeSelectorTerm {
        raw,
        sizes,
        _life: PhantomData,
    }
}

impl<'a> NodeSelectorTerm<'a> {
    /// A preferred term's weight (1..100); 0 for a required term.
    #[inline]
    pub fn weight(&self) -> i32 {
        self.raw.weight
    }
    #[inline]
    pub fn match_expressions(&self) -> Requirements<'a> {
        requirements(
            self.raw.match_expressions,
            self.raw.match_expression_count,
            self.sizes,
        )
    }
    #[inline]
    pub fn match_fields(&self) -> Requirements<'a> {
        requirements(
            self.raw.match_fields,
            self.raw.match_field_count,
            self.sizes,
        )
    }
}

/// One topology spread constraint (v1.3,
/// SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD).
#[derive(Clone, Copy)]
pub struct TopologySpreadConstraint<'a> {
    raw: schedplug_topology_spread_constraint,
    sizes: Sizes,
    _life: PhantomData<&'a ()>,
}

#[inline]
fn spread<'a>(
    raw: schedplug_topology_spread_constraint,
    sizes: Sizes,
) -> TopologySpreadConstraint<'a> {
    TopologySpreadConstraint {
        raw,
        sizes,
        _life: PhantomData,
    }
}

impl<'a> TopologySpreadConstraint<'a> {
    #[inline]
    pub fn max_skew(&self) -> i32 {
        self.raw.max_skew
    }
    /// 0: unset.
    #[inline]
    pub fn min_domains(&self) -> i32 {
        self.raw.min_domains
    }
    #[inline]
    pub fn topology_key(&self) -> &'a str {
        string(self.raw.topology_key)
    }
    /// "DoNotSchedule" or "ScheduleAnyway".
    #[inline]
    pub fn when_unsatisfiable(&self) -> &'a str {
        string(self.raw.when_unsatisfiable)
    }
    #[inline]
    pub fn label_selector(&self) -> LabelSelector<'a> {
        selector(self.raw.label_selector, self.sizes)
    }
    /// "Honor", "Ignore"; "": unset.
    #[inline]
    pub fn node_affinity_policy(&self) -> &'a str {
        string(self.raw.node_affinity_policy)
    }
    /// "Honor", "Ignore"; "": unset.
    #[inline]
    pub fn node_taints_policy(&self) -> &'a str {
        string(self.raw.node_taints_policy)
    }
    #[inline]
    pub fn match_label_keys(&self) -> Strings<'a> {
        strings(self.raw.match_label_keys, self.raw.match_label_key_count)
    }
}

/// One pod (anti-)affinity term (v1.3, SCHEDPLUG_DATA_POD_AFFINITY).
#[derive(Clone, Copy)]
pub struct PodAffinityTerm<'a> {
    raw: schedplug_pod_affinity_term,
    sizes: Sizes,
    _life: PhantomData<&'a ()>,
}

#[inline]
fn pod_term<'a>(raw: schedplug_pod_affinity_term, sizes: Sizes) -> PodAffinityTerm<'a> {
    PodAffinityTerm {
        raw,
        sizes,
        _life: PhantomData,
    }
}

impl<'a> PodAffinityTerm<'a> {
    /// A preferred term's weight (1..100); 0 for a required term.
    #[inline]
    pub fn weight(&self) -> i32 {
        self.raw.weight
    }
    #[inline]
    pub fn topology_key(&self) -> &'a str {
        string(self.raw.topology_key)
    }
    #[inline]
    pub fn label_selector(&self) -> LabelSelector<'a> {
        selector(self.raw.label_selector, self.sizes)
    }
    #[inline]
    pub fn namespaces(&self) -> Strings<'a> {
        strings(self.raw.namespaces, self.raw.namespace_count)
    }
    #[inline]
    pub fn namespace_selector(&self) -> LabelSelector<'a> {
        selector(self.raw.namespace_selector, self.sizes)
    }
    #[inline]
    pub fn match_label_keys(&self) -> Strings<'a> {
        strings(self.raw.match_label_keys, self.raw.match_label_key_count)
    }
    #[inline]
    pub fn mismatch_label_keys(&self) -> Strings<'a> {
        strings(
            self.raw.mismatch_label_keys,
            self.raw.mismatch_label_key_count,
        )
    }
}

/// The pod being scheduled.
#[derive(Clone, Copy)]
pub struct Pod<'a> {
    raw: *const schedplug_pod,
    _life: PhantomData<&'a schedplug_pod>,
}

impl<'a> Pod<'a> {
    /// A view of the host's pod.
    ///
    /// # Safety
    /// `raw` points to a `schedplug_pod` valid for its `struct_size` bytes,
    /// and everything it points to stays valid and unchanged during `'a`
    /// (the hook call). The export layer does this for plugin code.
    #[inline]
    pub unsafe fn from_raw(raw: *const schedplug_pod) -> Pod<'a> {
        Pod {
            raw,
            _life: PhantomData,
        }
    }

    /// The C view.
    #[inline]
    pub fn as_raw(&self) -> *const schedplug_pod {
        self.raw
    }

    /// struct_size as the host sent it.
    #[inline]
    pub fn struct_size(&self) -> u32 {
        read_field!(self.raw, schedplug_pod, struct_size).unwrap_or(0)
    }

    #[inline]
    fn string(&self, s: Option<schedplug_str>) -> &'a [u8] {
        // SAFETY: borrowed from the host for 'a.
        s.map_or(&[], |s| unsafe { bytes(s) })
    }

    #[inline]
    fn kv_size(&self) -> usize {
        element_size::<schedplug_kv>(read_field!(self.raw, schedplug_pod, kv_size))
    }

    /// metadata.namespace.
    #[inline]
    pub fn namespace(&self) -> &'a str {
        text(self.namespace_bytes())
    }

    /// metadata.namespace as bytes.
    #[inline]
    pub fn namespace_bytes(&self) -> &'a [u8] {
        self.string(read_field!(self.raw, schedplug_pod, namespace_name))
    }

    /// metadata.name.
    #[inline]
    pub fn name(&self) -> &'a str {
        text(self.name_bytes())
    }

    /// metadata.name as bytes.
    #[inline]
    pub fn name_bytes(&self) -> &'a [u8] {
        self.string(read_field!(self.raw, schedplug_pod, name))
    }

    /// metadata.uid.
    #[inline]
    pub fn uid(&self) -> &'a str {
        text(self.string(read_field!(self.raw, schedplug_pod, uid)))
    }

    /// metadata.labels.
    #[inline]
    pub fn labels(&self) -> KeyValues<'a> {
        KeyValues::new(read_field!(self.raw, schedplug_pod, labels), self.kv_size())
    }

    /// metadata.annotations.
    #[inline]
    pub fn annotations(&self) -> KeyValues<'a> {
        KeyValues::new(
            read_field!(self.raw, schedplug_pod, annotations),
            self.kv_size(),
        )
    }

    /// spec.nodeSelector.
    #[inline]
    pub fn node_selector(&self) -> KeyValues<'a> {
        KeyValues::new(
            read_field!(self.raw, schedplug_pod, node_selector),
            self.kv_size(),
        )
    }

    /// The pod's priority.
    #[inline]
    pub fn priority(&self) -> i32 {
        read_field!(self.raw, schedplug_pod, priority).unwrap_or(0)
    }

    /// The pod's effective requests.
    #[inline]
    pub fn requests(&self) -> Resources<'a> {
        Resources::new(
            read_field!(self.raw, schedplug_pod, requests),
            element_size::<schedplug_resource>(read_field!(self.raw, schedplug_pod, resource_size)),
        )
    }

    /// v1.2, SCHEDPLUG_DATA_POD_NODE_NAME: spec.nodeName ("" when not sent).
    #[inline]
    pub fn node_name(&self) -> &'a str {
        text(self.string(read_field!(self.raw, schedplug_pod, node_name)))
    }

    /// v1.2, SCHEDPLUG_DATA_POD_PRIORITY_CLASS: spec.priorityClassName.
    #[inline]
    pub fn priority_class_name(&self) -> &'a str {
        text(self.string(read_field!(self.raw, schedplug_pod, priority_class_name)))
    }

    #[inline]
    fn sizes(&self) -> Sizes {
        Sizes {
            kv: self.kv_size(),
            resource: element_size::<schedplug_resource>(read_field!(
                self.raw,
                schedplug_pod,
                resource_size
            )),
            port: element_size::<schedplug_container_port>(read_field!(
                self.raw,
                schedplug_pod,
                port_size
            )),
            requirement: element_size::<schedplug_selector_requirement>(read_field!(
                self.raw,
                schedplug_pod,
                requirement_size
            )),
        }
    }

    /// An array of the pod's when `sent` (its block of fields is within
    /// struct_size), indexed with the element size `size`.
    #[inline]
    fn list<R: Copy + 'a, V: 'a>(
        &self,
        sent: bool,
        items: Option<*const R>,
        count: Option<u64>,
        size: Option<u32>,
        make: fn(R, Sizes) -> V,
    ) -> List<'a, R, V> {
        let array = match (sent, items, count) {
            (true, Some(items), Some(count)) => Array::new(items, count, element_size::<R>(size)),
            _ => Array::empty(),
        };
        List::new(array, self.sizes(), make)
    }

    /// spec.tolerations.
    #[inline]
    pub fn tolerations(&self) -> List<'a, schedplug_toleration, Toleration<'a>> {
        self.list(
            true,
            read_field!(self.raw, schedplug_pod, tolerations),
            read_field!(self.raw, schedplug_pod, toleration_count),
            read_field!(self.raw, schedplug_pod, toleration_size),
            toleration,
        )
    }

    /// v1.2, SCHEDPLUG_DATA_POD_NOMINATED_NODE: status.nominatedNodeName.
    #[inline]
    pub fn nominated_node_name(&self) -> &'a str {
        text(self.string(read_field!(self.raw, schedplug_pod, nominated_node_name)))
    }

    /// Whether the host sent the whole v1.2 block (plugin.h's helpers test
    /// its last field, port_size, before reading owners and containers).
    #[inline]
    fn has_v1_2(&self) -> bool {
        read_field!(self.raw, schedplug_pod, port_size).is_some()
    }

    /// v1.2, SCHEDPLUG_DATA_POD_OWNERS: metadata.ownerReferences.
    #[inline]
    pub fn owners(&self) -> List<'a, schedplug_owner, Owner<'a>> {
        self.list(
            self.has_v1_2(),
            read_field!(self.raw, schedplug_pod, owners),
            read_field!(self.raw, schedplug_pod, owner_count),
            read_field!(self.raw, schedplug_pod, owner_size),
            owner,
        )
    }

    /// The pod's controller (the owner with controller set), if any.
    #[inline]
    pub fn controller(&self) -> Option<Owner<'a>> {
        self.owners().iter().find(|o| o.controller)
    }

    /// v1.2, SCHEDPLUG_DATA_POD_CONTAINERS: the app containers, in spec
    /// order (init containers are not listed).
    #[inline]
    pub fn containers(&self) -> List<'a, schedplug_container, Container<'a>> {
        self.list(
            self.has_v1_2(),
            read_field!(self.raw, schedplug_pod, containers),
            read_field!(self.raw, schedplug_pod, container_count),
            read_field!(self.raw, schedplug_pod, container_size),
            container,
        )
    }

    /// v1.3, SCHEDPLUG_DATA_POD_VOLUMES: spec.volumes, in spec order.
    #[inline]
    pub fn volumes(&self) -> List<'a, schedplug_volume, Volume<'a>> {
        let sent = read_field!(self.raw, schedplug_pod, volume_count).is_some();
        self.list(
            sent,
            read_field!(self.raw, schedplug_pod, volumes),
            read_field!(self.raw, schedplug_pod, volume_count),
            read_field!(self.raw, schedplug_pod, volume_size),
            volume,
        )
    }

    /// Whether the host sent the whole v1.3 block (plugin.h's helpers test
    /// its last field before reading the terms).
    #[inline]
    fn has_v1_3(&self) -> bool {
        read_field!(self.raw, schedplug_pod, pod_anti_affinity_preferred_count).is_some()
    }

    #[inline]
    fn node_terms(
        &self,
        items: Option<*const schedplug_node_selector_term>,
        count: Option<u64>,
    ) -> List<'a, schedplug_node_selector_term, NodeSelectorTerm<'a>> {
        self.list(
            self.has_v1_3(),
            items,
            count,
            read_field!(self.raw, schedplug_pod, node_selector_term_size),
            node_term,
        )
    }

    /// v1.3, SCHEDPLUG_DATA_POD_NODE_AFFINITY: the required terms (ORed).
    #[inline]
    pub fn node_affinity_required(
        &self,
    ) -> List<'a, schedplug_node_selector_term, NodeSelectorTerm<'a>> {
        self.node_terms(
            read_field!(self.raw, schedplug_pod, node_affinity_required),
            read_field!(self.raw, schedplug_pod, node_affinity_required_count),
        )
    }

    /// v1.3, SCHEDPLUG_DATA_POD_NODE_AFFINITY: the preferred terms, with
    /// their weights.
    #[inline]
    pub fn node_affinity_preferred(
        &self,
    ) -> List<'a, schedplug_node_selector_term, NodeSelectorTerm<'a>> {
        self.node_terms(
            read_field!(self.raw, schedplug_pod, node_affinity_preferred),
            read_field!(self.raw, schedplug_pod, node_affinity_preferred_count),
        )
    }

    /// v1.3, SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD:
    /// spec.topologySpreadConstraints.
    #[inline]
    pub fn topology_spread(
        &self,
    ) -> List<'a, schedplug_topology_spread_constraint, TopologySpreadConstraint<'a>> {
        self.list(
            self.has_v1_3(),
            read_field!(self.raw, schedplug_pod, topology_spread),
            read_field!(self.raw, schedplug_pod, topology_spread_count),
            read_field!(self.raw, schedplug_pod, topology_spread_size),
            spread,
        )
    }

    #[inline]
    fn pod_terms(
        &self,
        items: Option<*const schedplug_pod_affinity_term>,
        count: Option<u64>,
    ) -> List<'a, schedplug_pod_affinity_term, PodAffinityTerm<'a>> {
        self.list(
            self.has_v1_3(),
            items,
            count,
            read_field!(self.raw, schedplug_pod, pod_affinity_term_size),
            pod_term,
        )
    }

    /// v1.3, SCHEDPLUG_DATA_POD_AFFINITY: required pod affinity terms.
    #[inline]
    pub fn pod_affinity_required(
        &self,
    ) -> List<'a, schedplug_pod_affinity_term, PodAffinityTerm<'a>> {
        self.pod_terms(
            read_field!(self.raw, schedplug_pod, pod_affinity_required),
            read_field!(self.raw, schedplug_pod, pod_affinity_required_count),
        )
    }

    /// v1.3, SCHEDPLUG_DATA_POD_AFFINITY: preferred pod affinity terms.
    #[inline]
    pub fn pod_affinity_preferred(
        &self,
    ) -> List<'a, schedplug_pod_affinity_term, PodAffinityTerm<'a>> {
        self.pod_terms(
            read_field!(self.raw, schedplug_pod, pod_affinity_preferred),
            read_field!(self.raw, schedplug_pod, pod_affinity_preferred_count),
        )
    }

    /// v1.3, SCHEDPLUG_DATA_POD_AFFINITY: required pod anti-affinity terms.
    #[inline]
    pub fn pod_anti_affinity_required(
        &self,
    ) -> List<'a, schedplug_pod_affinity_term, PodAffinityTerm<'a>> {
        self.pod_terms(
            read_field!(self.raw, schedplug_pod, pod_anti_affinity_required),
            read_field!(self.raw, schedplug_pod, pod_anti_affinity_required_count),
        )
    }

    /// v1.3, SCHEDPLUG_DATA_POD_AFFINITY: preferred pod anti-affinity
    /// terms.
    #[inline]
    pub fn pod_anti_affinity_preferred(
        &self,
    ) -> List<'a, schedplug_pod_affinity_term, PodAffinityTerm<'a>> {
        self.pod_terms(
            read_field!(self.raw, schedplug_pod, pod_anti_affinity_preferred),
            read_field!(self.raw, schedplug_pod, pod_anti_affinity_preferred_count),
        )
    }

    /// The per-pod state pointer (v1.1; NULL when not sent).
    #[inline]
    pub(crate) fn state_ptr(&self) -> *mut std::ffi::c_void {
        read_field!(self.raw, schedplug_pod, state).unwrap_or(std::ptr::null_mut())
    }

    /// The stride of normalize_score's entries.
    #[inline]
    pub(crate) fn node_score_size(&self) -> usize {
        element_size::<schedplug_node_score>(read_field!(self.raw, schedplug_pod, node_score_size))
    }
}

/// One node of the cluster.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    raw: *const schedplug_node,
    _life: PhantomData<&'a schedplug_node>,
}

impl<'a> Node<'a> {
    /// A view of the host's node.
    ///
    /// # Safety
    /// As [`Pod::from_raw`].
    #[inline]
    pub unsafe fn from_raw(raw: *const schedplug_node) -> Node<'a> {
        Node {
            raw,
            _life: PhantomData,
        }
    }

    /// The C view.
    #[inline]
    pub fn as_raw(&self) -> *const schedplug_node {
        self.raw
    }

    /// struct_size as the host sent it.
    #[inline]
    pub fn struct_size(&self) -> u32 {
        read_field!(self.raw, schedplug_node, struct_size).unwrap_or(0)
    }

    #[inline]
    fn string(&self, s: Option<schedplug_str>) -> &'a [u8] {
        // SAFETY: borrowed from the host for 'a.
        s.map_or(&[], |s| unsafe { bytes(s) })
    }

    #[inline]
    fn kv_size(&self) -> usize {
        element_size::<schedplug_kv>(read_field!(self.raw, schedplug_node, kv_size))
    }

    #[inline]
    fn resource_size(&self) -> usize {
        element_size::<schedplug_resource>(read_field!(self.raw, schedplug_node, resource_size))
    }

    /// metadata.name.
    #[inline]
    pub fn name(&self) -> &'a str {
        text(self.name_bytes())
    }

    /// metadata.name as bytes.
    #[inline]
    pub fn name_bytes(&self) -> &'a [u8] {
        self.string(read_field!(self.raw, schedplug_node, name))
    }

    /// metadata.labels.
    #[inline]
    pub fn labels(&self) -> KeyValues<'a> {
        KeyValues::new(
            read_field!(self.raw, schedplug_node, labels),
            self.kv_size(),
        )
    }

    /// metadata.annotations.
    #[inline]
    pub fn annotations(&self) -> KeyValues<'a> {
        KeyValues::new(
            read_field!(self.raw, schedplug_node, annotations),
            self.kv_size(),
        )
    }

    /// spec.taints.
    #[inline]
    pub fn taints(&self) -> impl Iterator<Item = Taint<'a>> + 'a {
        let items = read_field!(self.raw, schedplug_node, taints).unwrap_or(std::ptr::null());
        let count = read_field!(self.raw, schedplug_node, taint_count).unwrap_or(0);
        let stride =
            element_size::<schedplug_taint>(read_field!(self.raw, schedplug_node, taint_size));
        let array: Array<'a, schedplug_taint> = Array::new(items, count, stride);
        (0..array.count).filter_map(move |i| {
            let t = array.get(i)?;
            // SAFETY: borrowed from the host for 'a.
            Some(unsafe {
                Taint {
                    key: text(bytes(t.key)),
                    value: text(bytes(t.value)),
                    effect: text(bytes(t.effect)),
                }
            })
        })
    }

    /// status.allocatable.
    #[inline]
    pub fn allocatable(&self) -> Resources<'a> {
        Resources::new(
            read_field!(self.raw, schedplug_node, allocatable),
            self.resource_size(),
        )
    }

    /// The sum of the requests of the pods already on the node.
    #[inline]
    pub fn requested(&self) -> Resources<'a> {
        Resources::new(
            read_field!(self.raw, schedplug_node, requested),
            self.resource_size(),
        )
    }

    /// The number of pods on the node.
    #[inline]
    pub fn pod_count(&self) -> u32 {
        read_field!(self.raw, schedplug_node, pod_count).unwrap_or(0)
    }

    /// v1.2, SCHEDPLUG_DATA_NODE_UNSCHEDULABLE: cordoned (false when not
    /// sent).
    #[inline]
    pub fn unschedulable(&self) -> bool {
        read_field!(self.raw, schedplug_node, unschedulable).unwrap_or(0) != 0
    }

    #[inline]
    fn sizes(&self) -> Sizes {
        Sizes {
            kv: self.kv_size(),
            resource: self.resource_size(),
            port: size_of::<schedplug_container_port>(),
            requirement: size_of::<schedplug_selector_requirement>(),
        }
    }

    /// Whether the host sent the whole v1.2 block (plugin.h's helpers test
    /// its last field, node_pod_size).
    #[inline]
    fn has_v1_2(&self) -> bool {
        read_field!(self.raw, schedplug_node, node_pod_size).is_some()
    }

    #[inline]
    fn list<R: Copy + 'a, V: 'a>(
        &self,
        sent: bool,
        items: Option<*const R>,
        count: Option<u64>,
        size: Option<u32>,
        make: fn(R, Sizes) -> V,
    ) -> List<'a, R, V> {
        let array = match (sent, items, count) {
            (true, Some(items), Some(count)) => Array::new(items, count, element_size::<R>(size)),
            _ => Array::empty(),
        };
        List::new(array, self.sizes(), make)
    }

    /// v1.2, SCHEDPLUG_DATA_NODE_CONDITIONS: status.conditions.
    #[inline]
    pub fn conditions(&self) -> List<'a, schedplug_node_condition, NodeCondition<'a>> {
        self.list(
            self.has_v1_2(),
            read_field!(self.raw, schedplug_node, conditions),
            read_field!(self.raw, schedplug_node, condition_count),
            read_field!(self.raw, schedplug_node, condition_size),
            condition,
        )
    }

    /// The status of condition `kind` ("Ready", ...), None when not listed.
    #[inline]
    pub fn condition(&self, kind: &str) -> Option<&'a str> {
        self.conditions()
            .iter()
            .find(|c| c.kind == kind)
            .map(|c| c.status)
    }

    /// v1.2, SCHEDPLUG_DATA_NODE_PODS: the pods on the node, sorted by
    /// namespace then name.
    #[inline]
    pub fn pods(&self) -> List<'a, schedplug_node_pod, NodePod<'a>> {
        self.list(
            self.has_v1_2(),
            read_field!(self.raw, schedplug_node, pod_list),
            read_field!(self.raw, schedplug_node, pod_list_count),
            read_field!(self.raw, schedplug_node, node_pod_size),
            node_pod,
        )
    }

    /// v1.3, SCHEDPLUG_DATA_NODE_IMAGES: status.images.
    #[inline]
    pub fn images(&self) -> List<'a, schedplug_node_image, NodeImage<'a>> {
        let sent = read_field!(self.raw, schedplug_node, image_count).is_some();
        self.list(
            sent,
            read_field!(self.raw, schedplug_node, images),
            read_field!(self.raw, schedplug_node, image_count),
            read_field!(self.raw, schedplug_node, image_size),
            image,
        )
    }

    /// Whether the node holds an image with the name `name`.
    #[inline]
    pub fn has_image(&self, name: &str) -> bool {
        self.images().iter().any(|i| i.has_name(name))
    }

    /// v1.2, SCHEDPLUG_DATA_NODE_CAPACITY: status.capacity.
    #[inline]
    pub fn capacity(&self) -> Resources<'a> {
        // Like plugin.h's helper: only a host that sent the whole v1.2
        // block sent capacity.
        let sent = read_field!(self.raw, schedplug_node, node_pod_size).is_some();
        Resources::new(
            read_field!(self.raw, schedplug_node, capacity).filter(|_| sent),
            self.resource_size(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn s(v: &'static str) -> schedplug_str {
        schedplug_str {
            data: v.as_ptr() as *const std::os::raw::c_char,
            len: v.len() as u64,
        }
    }

    fn kv(k: &'static str, v: &'static str) -> schedplug_kv {
        schedplug_kv {
            key: s(k),
            value: s(v),
        }
    }

    #[test]
    fn pod_reads_strings_and_sorted_lists() {
        let labels = [kv("app", "web"), kv("tier", "front"), kv("zone", "a")];
        let annotations = [kv("note", "é")];
        let requests = [
            schedplug_resource {
                name: s("cpu"),
                value: 500,
            },
            schedplug_resource {
                name: s("memory"),
                value: 1 << 30,
            },
        ];
        let raw = schedplug_pod {
            struct_size: size_of::<schedplug_pod>() as u32,
            namespace_name: s("default"),
            name: s("web-1"),
            uid: s("u-1"),
            labels: schedplug_kv_list {
                items: labels.as_ptr(),
                count: 3,
            },
            annotations: schedplug_kv_list {
                items: annotations.as_ptr(),
                count: 1,
            },
            priority: 7,
            requests: schedplug_resource_list {
                items: requests.as_ptr(),
                count: 2,
            },
            kv_size: size_of::<schedplug_kv>() as u32,
            node_name: s("n1"),
            ..Default::default()
        };
        let pod = unsafe { Pod::from_raw(&raw) };
        assert_eq!(pod.name(), "web-1");
        assert_eq!(pod.namespace(), "default");
        assert_eq!(pod.uid(), "u-1");
        assert_eq!(pod.priority(), 7);
        assert_eq!(pod.labels().len(), 3);
        assert_eq!(pod.labels().get("app"), Some("web"));
        assert_eq!(pod.labels().get("zone"), Some("a"));
        assert_eq!(pod.labels().get("tier"), Some("front"));
        assert_eq!(pod.labels().get("nope"), None);
        assert!(pod.labels().contains_key("tier"));
        assert_eq!(
            pod.labels().iter().collect::<Vec<_>>(),
            vec![("app", "web"), ("tier", "front"), ("zone", "a")]
        );
        assert_eq!(pod.annotations().get("note"), Some("é"));
        assert!(pod.node_selector().is_empty());
        assert_eq!(pod.requests().get("cpu"), 500);
        assert_eq!(pod.requests().get("memory"), 1 << 30);
        assert_eq!(pod.requests().get("gpu"), 0);
        assert_eq!(pod.node_name(), "n1");
        assert_eq!(pod.priority_class_name(), "");
    }

    #[test]
    fn fields_beyond_struct_size_read_as_empty() {
        // A v1.0 host: struct_size ends at toleration_count; everything
        // after it must not be read, even though this buffer has it.
        let v1_0 = field_layout!(schedplug_pod, toleration_count).0 + 8;
        let raw = schedplug_pod {
            struct_size: v1_0 as u32,
            name: s("p"),
            kv_size: 999, // garbage a v1.0 host would not have sent
            state: 1 as *mut std::ffi::c_void,
            node_name: s("must not be read"),
            ..Default::default()
        };
        let pod = unsafe { Pod::from_raw(&raw) };
        assert_eq!(pod.name(), "p");
        assert_eq!(pod.kv_size(), size_of::<schedplug_kv>());
        assert!(pod.state_ptr().is_null());
        assert_eq!(pod.node_name(), "");
        // And a struct_size that stops inside the v1.2 block.
        let raw = schedplug_pod {
            struct_size: field_layout!(schedplug_pod, node_name).0 as u32 + 8,
            node_name: s("cut"),
            ..Default::default()
        };
        assert_eq!(unsafe { Pod::from_raw(&raw) }.node_name(), "");
        let mut ok = raw;
        ok.struct_size += 8;
        assert_eq!(unsafe { Pod::from_raw(&ok) }.node_name(), "cut");
    }

    #[test]
    fn only_struct_size_bytes_are_read() {
        // A view allocated at exactly its v1.0 size, as an old host does:
        // reading a later field must not touch memory past it (Miri and
        // sanitizers would flag it; here the bytes after are poisoned).
        let v1_0 = field_layout!(schedplug_node, pod_count).0 + 4;
        let full = schedplug_node {
            struct_size: v1_0 as u32,
            name: s("n"),
            pod_count: 3,
            ..Default::default()
        };
        // u64 words keep the view aligned.
        let mut buf = vec![0xa5a5_a5a5_a5a5_a5a5u64; size_of::<schedplug_node>() / 8];
        unsafe {
            std::ptr::copy_nonoverlapping(
                &full as *const _ as *const u8,
                buf.as_mut_ptr() as *mut u8,
                v1_0,
            );
        }
        let node = unsafe { Node::from_raw(buf.as_ptr() as *const schedplug_node) };
        assert_eq!(node.name(), "n");
        assert_eq!(node.pod_count(), 3);
        assert!(!node.unschedulable());
        assert!(node.capacity().is_empty());
    }

    #[test]
    fn arrays_use_the_element_size_the_host_sent() {
        // A newer host with 48-byte kv entries (16 unknown bytes each).
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct BigKv {
            kv: schedplug_kv,
            extra: [u64; 2],
        }
        let big = |k, v| BigKv {
            kv: kv(k, v),
            extra: [u64::MAX; 2],
        };
        let labels = [big("a", "1"), big("b", "2"), big("c", "3")];
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct BigTaint {
            t: schedplug_taint,
            extra: u64,
        }
        let taints = [
            BigTaint {
                t: schedplug_taint {
                    key: s("k1"),
                    value: s("v1"),
                    effect: s("NoSchedule"),
                },
                extra: 0,
            },
            BigTaint {
                t: schedplug_taint {
                    key: s("k2"),
                    value: s(""),
                    effect: s("NoExecute"),
                },
                extra: 0,
            },
        ];
        let raw = schedplug_node {
            struct_size: size_of::<schedplug_node>() as u32,
            name: s("n1"),
            labels: schedplug_kv_list {
                items: labels.as_ptr() as *const schedplug_kv,
                count: 3,
            },
            taints: taints.as_ptr() as *const schedplug_taint,
            taint_count: 2,
            kv_size: size_of::<BigKv>() as u32,
            taint_size: size_of::<BigTaint>() as u32,
            unschedulable: 1,
            ..Default::default()
        };
        let node = unsafe { Node::from_raw(&raw) };
        assert_eq!(node.labels().get("a"), Some("1"));
        assert_eq!(node.labels().get("b"), Some("2"));
        assert_eq!(node.labels().get("c"), Some("3"));
        assert_eq!(node.labels().iter().count(), 3);
        let t: Vec<_> = node.taints().collect();
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[1],
            Taint {
                key: "k2",
                value: "",
                effect: "NoExecute"
            }
        );
        assert!(node.unschedulable());
    }

    #[test]
    fn null_and_invalid_data_read_as_empty() {
        let bad = [0xffu8, 0xfe];
        let raw = schedplug_pod {
            struct_size: size_of::<schedplug_pod>() as u32,
            name: schedplug_str {
                data: bad.as_ptr() as *const std::os::raw::c_char,
                len: 2,
            },
            namespace_name: schedplug_str {
                data: std::ptr::null(),
                len: 5,
            },
            labels: schedplug_kv_list {
                items: std::ptr::null(),
                count: 4,
            },
            ..Default::default()
        };
        let pod = unsafe { Pod::from_raw(&raw) };
        assert_eq!(pod.name(), "");
        assert_eq!(pod.name_bytes(), &bad);
        assert_eq!(pod.namespace(), "");
        assert!(pod.labels().is_empty());
        assert_eq!(pod.labels().get("x"), None);
        let none = unsafe { Pod::from_raw(std::ptr::null()) };
        assert_eq!((none.name(), none.struct_size()), ("", 0));
    }

    #[test]
    fn arrays_honour_the_blocks_and_element_sizes() {
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct BigOwner {
            o: schedplug_owner,
            extra: [u64; 3],
        }
        let owners = [
            BigOwner {
                o: schedplug_owner {
                    kind: s("ReplicaSet"),
                    name: s("rs"),
                    controller: 1,
                },
                extra: [u64::MAX; 3],
            },
            BigOwner {
                o: schedplug_owner {
                    kind: s("Job"),
                    name: s("j"),
                    controller: 0,
                },
                extra: [u64::MAX; 3],
            },
        ];
        let raw = schedplug_pod {
            struct_size: size_of::<schedplug_pod>() as u32,
            owners: owners.as_ptr() as *const schedplug_owner,
            owner_count: 2,
            owner_size: size_of::<BigOwner>() as u32,
            volume_count: 3, // NULL items: read as empty
            ..Default::default()
        };
        let pod = unsafe { Pod::from_raw(&raw) };
        let got: Vec<_> = pod
            .owners()
            .iter()
            .map(|o| (o.kind, o.controller))
            .collect();
        assert_eq!(got, [("ReplicaSet", true), ("Job", false)]);
        assert_eq!(pod.controller().map(|o| o.name), Some("rs"));
        assert!(pod.owners().get(2).is_none());
        assert!(pod.volumes().is_empty());
        // A host whose v1.2 block stops before port_size sent no owners
        // (plugin.h's schedplug_pod_owner_count).
        let mut cut = raw;
        cut.struct_size = field_layout!(schedplug_pod, port_size).0 as u32;
        let pod = unsafe { Pod::from_raw(&cut) };
        assert!(pod.owners().is_empty());
        assert!(pod.containers().is_empty());
        // Nor does a v1.1 node send conditions, pods or images.
        let conditions = [schedplug_node_condition {
            r#type: s("Ready"),
            status: s("True"),
        }];
        let node = schedplug_node {
            struct_size: size_of::<schedplug_node>() as u32,
            conditions: conditions.as_ptr(),
            condition_count: 1,
            ..Default::default()
        };
        assert_eq!(
            unsafe { Node::from_raw(&node) }.condition("Ready"),
            Some("True")
        );
        let mut v1_1 = node;
        v1_1.struct_size = field_layout!(schedplug_node, taint_size).0 as u32 + 4;
        let old = unsafe { Node::from_raw(&v1_1) };
        assert_eq!(old.condition("Ready"), None);
        assert!(old.pods().is_empty() && old.images().is_empty());
        // The v1.3 terms need the whole v1.3 block.
        let values = [s("a")];
        let reqs = [schedplug_selector_requirement {
            key: s("zone"),
            op: s("In"),
            values: values.as_ptr(),
            value_count: 1,
        }];
        let terms = [schedplug_node_selector_term {
            weight: 0,
            match_expressions: reqs.as_ptr(),
            match_expression_count: 1,
            ..Default::default()
        }];
        let raw = schedplug_pod {
            struct_size: size_of::<schedplug_pod>() as u32,
            node_affinity_required: terms.as_ptr(),
            node_affinity_required_count: 1,
            ..Default::default()
        };
        let pod = unsafe { Pod::from_raw(&raw) };
        let term = pod.node_affinity_required().get(0).unwrap();
        let r = term.match_expressions().get(0).unwrap();
        assert_eq!((r.key, r.op, r.values.get(0)), ("zone", "In", Some("a")));
        assert!(r.values.contains("a") && !r.values.contains("b"));
        let mut cut = raw;
        cut.struct_size = field_layout!(schedplug_pod, pod_anti_affinity_preferred_count).0 as u32;
        assert!(unsafe { Pod::from_raw(&cut) }
            .node_affinity_required()
            .is_empty());
    }
}
