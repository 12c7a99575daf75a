//! The schedplug C ABI, version 1, exactly as `sdk/include/schedplug/plugin.h`
//! defines it: the same names, the same fields in the same order, the same
//! constants. `tests/layout.rs` compiles the header and fails on any drift.
//!
//! Read plugin.h for what every field means; the comments here are one line
//! each, to keep the mapping obvious.

// One file, although over 700 lines: it mirrors plugin.h item for item in the
// header's order, which is what tests/layout.rs checks and what keeps the two
// readable side by side.
#![allow(non_camel_case_types)]

use std::ffi::c_void;
use std::os::raw::c_char;

// Every struct here is valid all-zero (null pointers, `None` hooks, zero
// counts), which is also what "absent" means in the ABI; Default gives that.
macro_rules! zeroed_default {
    ($($t:ident),* $(,)?) => {
        $(
            impl Default for $t {
                fn default() -> Self {
                    // SAFETY: every field is an integer, a float, a raw
                    // pointer, an Option of a fn pointer, or a struct of
                    // those: all-zero is a valid value of each.
                    unsafe { std::mem::zeroed() }
                }
            }
        )*
    };
}

/// The ABI version this header describes.
pub const SCHEDPLUG_ABI_VERSION: u32 = 1;

/// The name of the one symbol a plugin exports.
pub const SCHEDPLUG_ENTRY_SYMBOL: &str = "schedplug_plugin_v1";

// ---------------------------------------------------------------------------
// Basic views
// ---------------------------------------------------------------------------

/// A borrowed string: `len` bytes at `data`, not NUL-terminated.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_str {
    pub data: *const c_char,
    pub len: u64,
}

/// One label, annotation or node-selector entry.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_kv {
    pub key: schedplug_str,
    pub value: schedplug_str,
}

/// A borrowed array of entries, sorted by key in byte order, keys unique.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_kv_list {
    pub items: *const schedplug_kv,
    pub count: u64,
}

/// One resource quantity, in the canonical unit of its kind.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_resource {
    pub name: schedplug_str,
    pub value: i64,
}

/// A borrowed array of resources, sorted by name in byte order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_resource_list {
    pub items: *const schedplug_resource,
    pub count: u64,
}

/// A node taint.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_taint {
    pub key: schedplug_str,
    pub value: schedplug_str,
    pub effect: schedplug_str,
}

/// A pod toleration.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_toleration {
    pub key: schedplug_str,
    pub op: schedplug_str,
    pub value: schedplug_str,
    pub effect: schedplug_str,
    pub has_toleration_seconds: i32,
    pub toleration_seconds: i64,
}

// ---- v1.2 element types ---------------------------------------------------

/// One owner reference of a pod (metadata.ownerReferences).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_owner {
    pub kind: schedplug_str,
    pub name: schedplug_str,
    pub controller: i32,
}

/// One port of a container.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_container_port {
    pub container_port: i32,
    pub host_port: i32,
    pub protocol: schedplug_str,
    pub host_ip: schedplug_str,
}

/// One app container of a pod (spec.containers, in spec order).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_container {
    pub name: schedplug_str,
    pub image: schedplug_str,
    pub requests: schedplug_resource_list,
    pub limits: schedplug_resource_list,
    pub ports: *const schedplug_container_port,
    pub port_count: u64,
}

/// One node condition (status.conditions).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_node_condition {
    pub r#type: schedplug_str,
    pub status: schedplug_str,
}

/// One pod already on a node, compact.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_node_pod {
    pub namespace_name: schedplug_str,
    pub name: schedplug_str,
    pub labels: schedplug_kv_list,
    pub priority: i32,
    pub requests: schedplug_resource_list,
    pub owner_kind: schedplug_str,
}

// ---- v1.3 element types ---------------------------------------------------

/// One volume of a pod (spec.volumes, in spec order).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_volume {
    pub name: schedplug_str,
    pub source: schedplug_str,
    pub claim_name: schedplug_str,
    pub read_only: i32,
}

/// One container image a node holds (status.images).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_node_image {
    pub names: *const schedplug_str,
    pub name_count: u64,
    pub size_bytes: i64,
}

/// One requirement of a selector (matchExpressions, matchFields).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_selector_requirement {
    pub key: schedplug_str,
    pub op: schedplug_str,
    pub values: *const schedplug_str,
    pub value_count: u64,
}

/// A label selector (metav1.LabelSelector); `present` 0 means unset.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_label_selector {
    pub present: i32,
    pub match_labels: schedplug_kv_list,
    pub match_expressions: *const schedplug_selector_requirement,
    pub match_expression_count: u64,
}

/// One node selector term of a node affinity.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_node_selector_term {
    pub weight: i32,
    pub match_expressions: *const schedplug_selector_requirement,
    pub match_expression_count: u64,
    pub match_fields: *const schedplug_selector_requirement,
    pub match_field_count: u64,
}

/// One topology spread constraint (spec.topologySpreadConstraints).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_topology_spread_constraint {
    pub max_skew: i32,
    pub min_domains: i32,
    pub topology_key: schedplug_str,
    pub when_unsatisfiable: schedplug_str,
    pub label_selector: schedplug_label_selector,
    pub node_affinity_policy: schedplug_str,
    pub node_taints_policy: schedplug_str,
    pub match_label_keys: *const schedplug_str,
    pub match_label_key_count: u64,
}

/// One pod (anti-)affinity term.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_pod_affinity_term {
    pub weight: i32,
    pub topology_key: schedplug_str,
    pub label_selector: schedplug_label_selector,
    pub namespaces: *const schedplug_str,
    pub namespace_count: u64,
    pub namespace_selector: schedplug_label_selector,
    pub match_label_keys: *const schedplug_str,
    pub match_label_key_count: u64,
    pub mismatch_label_keys: *const schedplug_str,
    pub mismatch_label_key_count: u64,
}

// The data beyond v1.1's that a plugin declares it reads
// (schedplug_settings.data).

/// pod->node_name (spec.nodeName).
pub const SCHEDPLUG_DATA_POD_NODE_NAME: u64 = 1 << 0;
/// pod->nominated_node_name (status.nominatedNodeName).
pub const SCHEDPLUG_DATA_POD_NOMINATED_NODE: u64 = 1 << 1;
/// pod->priority_class_name (spec.priorityClassName).
pub const SCHEDPLUG_DATA_POD_PRIORITY_CLASS: u64 = 1 << 2;
/// pod->owners (metadata.ownerReferences).
pub const SCHEDPLUG_DATA_POD_OWNERS: u64 = 1 << 3;
/// pod->containers (image, requests, limits, ports).
pub const SCHEDPLUG_DATA_POD_CONTAINERS: u64 = 1 << 4;
/// node->unschedulable (spec.unschedulable).
pub const SCHEDPLUG_DATA_NODE_UNSCHEDULABLE: u64 = 1 << 5;
/// node->conditions (status.conditions).
pub const SCHEDPLUG_DATA_NODE_CONDITIONS: u64 = 1 << 6;
/// node->capacity (status.capacity).
pub const SCHEDPLUG_DATA_NODE_CAPACITY: u64 = 1 << 7;
/// node->pod_list: the pods on the node, compact.
pub const SCHEDPLUG_DATA_NODE_PODS: u64 = 1 << 8;
/// v1.3: pod->volumes (spec.volumes).
pub const SCHEDPLUG_DATA_POD_VOLUMES: u64 = 1 << 9;
/// v1.3: node->images (status.images).
pub const SCHEDPLUG_DATA_NODE_IMAGES: u64 = 1 << 10;
/// v1.3: pod->node_affinity_required / _preferred.
pub const SCHEDPLUG_DATA_POD_NODE_AFFINITY: u64 = 1 << 11;
/// v1.3: pod->topology_spread.
pub const SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD: u64 = 1 << 12;
/// v1.3: pod->pod_affinity_* and pod->pod_anti_affinity_*.
pub const SCHEDPLUG_DATA_POD_AFFINITY: u64 = 1 << 13;
/// Every SCHEDPLUG_DATA_* bit this ABI version defines.
pub const SCHEDPLUG_DATA_ALL: u64 = (1 << 14) - 1;

// ---------------------------------------------------------------------------
// Pod and node views
// ---------------------------------------------------------------------------

/// The pod being scheduled (borrowed, read-only, valid for one hook call).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_pod {
    pub struct_size: u32,
    pub namespace_name: schedplug_str,
    pub name: schedplug_str,
    pub uid: schedplug_str,
    pub labels: schedplug_kv_list,
    pub annotations: schedplug_kv_list,
    pub priority: i32,
    pub requests: schedplug_resource_list,
    pub node_selector: schedplug_kv_list,
    pub tolerations: *const schedplug_toleration,
    pub toleration_count: u64,
    // v1.1
    pub kv_size: u32,
    pub resource_size: u32,
    pub toleration_size: u32,
    pub node_score_size: u32,
    pub state: *mut c_void,
    // v1.2
    pub node_name: schedplug_str,
    pub nominated_node_name: schedplug_str,
    pub priority_class_name: schedplug_str,
    pub owners: *const schedplug_owner,
    pub owner_count: u64,
    pub containers: *const schedplug_container,
    pub container_count: u64,
    pub owner_size: u32,
    pub container_size: u32,
    pub port_size: u32,
    // v1.3
    pub volume_size: u32,
    pub volumes: *const schedplug_volume,
    pub volume_count: u64,
    pub requirement_size: u32,
    pub node_selector_term_size: u32,
    pub topology_spread_size: u32,
    pub pod_affinity_term_size: u32,
    pub node_affinity_required: *const schedplug_node_selector_term,
    pub node_affinity_required_count: u64,
    pub node_affinity_preferred: *const schedplug_node_selector_term,
    pub node_affinity_preferred_count: u64,
    pub topology_spread: *const schedplug_topology_spread_constraint,
    pub topology_spread_count: u64,
    pub pod_affinity_required: *const schedplug_pod_affinity_term,
    pub pod_affinity_required_count: u64,
    pub pod_affinity_preferred: *const schedplug_pod_affinity_term,
    pub pod_affinity_preferred_count: u64,
    pub pod_anti_affinity_required: *const schedplug_pod_affinity_term,
    pub pod_anti_affinity_required_count: u64,
    pub pod_anti_affinity_preferred: *const schedplug_pod_affinity_term,
    pub pod_anti_affinity_preferred_count: u64,
}

/// One node of the cluster, as the scheduler's snapshot sees it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_node {
    pub struct_size: u32,
    pub name: schedplug_str,
    pub labels: schedplug_kv_list,
    pub annotations: schedplug_kv_list,
    pub taints: *const schedplug_taint,
    pub taint_count: u64,
    pub allocatable: schedplug_resource_list,
    pub requested: schedplug_resource_list,
    pub pod_count: u32,
    // v1.1
    pub kv_size: u32,
    pub resource_size: u32,
    pub taint_size: u32,
    // v1.2
    pub unschedulable: i32,
    pub condition_size: u32,
    pub conditions: *const schedplug_node_condition,
    pub condition_count: u64,
    pub capacity: schedplug_resource_list,
    pub pod_list: *const schedplug_node_pod,
    pub pod_list_count: u64,
    pub node_pod_size: u32,
    // v1.3
    pub image_size: u32,
    pub images: *const schedplug_node_image,
    pub image_count: u64,
}

// ---------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------

/// The result of a hook; the values equal kube-scheduler's status codes.
pub type schedplug_code = i32;
/// The node fits / the score is valid / the call worked.
pub const SCHEDPLUG_SUCCESS: schedplug_code = 0;
/// A real internal error (a Filter Error aborts the pod's cycle).
pub const SCHEDPLUG_ERROR: schedplug_code = 1;
/// The node does not fit now; preemption may help.
pub const SCHEDPLUG_UNSCHEDULABLE: schedplug_code = 2;
/// The node does not fit and preemption cannot change that.
pub const SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE: schedplug_code = 3;
/// v1.6, permit() only: hold the pod until the plugin allows or rejects it
/// (schedplug_host.permit_allow / permit_reject) or its timeout passes.
pub const SCHEDPLUG_WAIT: schedplug_code = 4;
/// This plugin has nothing to say about this pod.
pub const SCHEDPLUG_SKIP: schedplug_code = 5;

/// Longest reason, including the terminating NUL.
pub const SCHEDPLUG_REASON_MAX: u32 = 256;

/// A host-owned buffer for a NUL-terminated reason of at most `capacity` bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_reason {
    pub text: *mut c_char,
    pub capacity: u64,
}

// ---------------------------------------------------------------------------
// Score normalization
// ---------------------------------------------------------------------------

/// How the host normalizes raw scores when there is no normalize_score.
pub type schedplug_normalize_policy = u32;
/// Scores are already in [0, 100].
pub const SCHEDPLUG_NORMALIZE_NONE: schedplug_normalize_policy = 0;
/// Min-max onto [0, 100]: the highest raw score becomes 100.
pub const SCHEDPLUG_NORMALIZE_LINEAR: schedplug_normalize_policy = 1;
/// Reversed min-max: the lowest raw score becomes 100.
pub const SCHEDPLUG_NORMALIZE_REVERSE: schedplug_normalize_policy = 2;

/// One entry of normalize_score's array: a node name and its score.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_node_score {
    pub node_name: schedplug_str,
    pub score: i64,
}

// ---------------------------------------------------------------------------
// Cluster events
// ---------------------------------------------------------------------------

/// A node was added.
pub const SCHEDPLUG_EVENT_NODE_ADD: u64 = 1 << 0;
/// A node was deleted.
pub const SCHEDPLUG_EVENT_NODE_DELETE: u64 = 1 << 1;
/// A node's labels changed.
pub const SCHEDPLUG_EVENT_NODE_UPDATE_LABEL: u64 = 1 << 2;
/// A node's taints changed.
pub const SCHEDPLUG_EVENT_NODE_UPDATE_TAINT: u64 = 1 << 3;
/// A node's allocatable changed.
pub const SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE: u64 = 1 << 4;
/// A node's annotations changed.
pub const SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION: u64 = 1 << 5;
/// A node's conditions changed.
pub const SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION: u64 = 1 << 6;
/// A pod was added.
pub const SCHEDPLUG_EVENT_POD_ADD: u64 = 1 << 7;
/// A pod was deleted.
pub const SCHEDPLUG_EVENT_POD_DELETE: u64 = 1 << 8;
/// A pod's labels changed.
pub const SCHEDPLUG_EVENT_POD_UPDATE_LABEL: u64 = 1 << 9;
/// Every SCHEDPLUG_EVENT_* bit this ABI version defines.
pub const SCHEDPLUG_EVENT_ALL: u64 = (1 << 10) - 1;

// ---------------------------------------------------------------------------
// Services the host offers the plugin
// ---------------------------------------------------------------------------

/// The level of a line written with schedplug_host.log.
pub type schedplug_log_level = i32;
/// Log level: error.
pub const SCHEDPLUG_LOG_ERROR: schedplug_log_level = 0;
/// Log level: warning.
pub const SCHEDPLUG_LOG_WARNING: schedplug_log_level = 1;
/// Log level: info.
pub const SCHEDPLUG_LOG_INFO: schedplug_log_level = 2;
/// Log level: debug.
pub const SCHEDPLUG_LOG_DEBUG: schedplug_log_level = 3;

/// Per-instance settings (v1.1) that create() may decide from its args.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_settings {
    pub struct_size: u32,
    pub refresh_period_ms: u32,
    pub events: u64,
    pub normalize_policy: schedplug_normalize_policy,
    pub reserved: u32,
    // v1.2
    pub data: u64,
    // v1.3
    pub hints: u64,
    // v1.4
    pub pod_label_keys: *const schedplug_str,
    pub pod_label_key_count: u64,
    pub pod_annotation_keys: *const schedplug_str,
    pub pod_annotation_key_count: u64,
}

/// The most keys pod_label_keys, and pod_annotation_keys, may hold (v1.4).
pub const SCHEDPLUG_POD_KEYS_MAX: u32 = 64;

/// filter()'s verdict does not depend on the pods on the node.
pub const SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS: u64 = 1 << 0;
/// v1.4: applies/pod_begin/filter read neither the pod's name nor its uid.
pub const SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY: u64 = 1 << 1;
/// v1.4: only the declared pod label and annotation keys are read.
pub const SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS: u64 = 1 << 2;
/// v1.5: applies/pod_begin/score/normalize_score read neither the pod's
/// name nor its uid (plugin.h).
pub const SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY: u64 = 1 << 3;
/// Every SCHEDPLUG_HINT_* bit this ABI version defines.
pub const SCHEDPLUG_HINT_ALL: u64 = (1 << 4) - 1;

/// One JSON object of the plugin's args; opaque and host-owned.
#[repr(C)]
pub struct schedplug_args {
    // Zero-sized and neither Send, Sync nor Unpin: only ever behind a pointer.
    _opaque: [u8; 0],
    _marker: std::marker::PhantomData<(*mut u8, std::marker::PhantomPinned)>,
}

/// The host services handed to create(), valid until destroy() returns.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_host {
    pub struct_size: u32,
    pub context: *mut c_void,
    pub log: Option<
        unsafe extern "C" fn(context: *mut c_void, level: schedplug_log_level, msg: schedplug_str),
    >,
    // v1.1
    pub settings: *mut schedplug_settings,
    pub args: *const schedplug_args,
    pub args_allow_only: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            obj: *const schedplug_args,
            known: *const *const c_char,
            count: u64,
            error: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub arg_string: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            obj: *const schedplug_args,
            key: *const c_char,
            out: *mut schedplug_str,
            error: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub arg_bool: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            obj: *const schedplug_args,
            key: *const c_char,
            out: *mut i32,
            error: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub arg_int: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            obj: *const schedplug_args,
            key: *const c_char,
            min: i64,
            max: i64,
            out: *mut i64,
            error: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub arg_float: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            obj: *const schedplug_args,
            key: *const c_char,
            min: f64,
            max: f64,
            out: *mut f64,
            error: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub arg_duration: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            obj: *const schedplug_args,
            key: *const c_char,
            out_ns: *mut i64,
            error: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub arg_string_list: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            obj: *const schedplug_args,
            key: *const c_char,
            items: *mut *const schedplug_str,
            count: *mut u64,
            error: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub arg_object: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            obj: *const schedplug_args,
            key: *const c_char,
            out: *mut *const schedplug_args,
            error: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    // v1.6: valid until destroy() returns, from any thread.
    pub permit_allow: Option<
        unsafe extern "C" fn(context: *mut c_void, pod_uid: schedplug_str) -> schedplug_code,
    >,
    pub permit_reject: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            pod_uid: schedplug_str,
            reason: schedplug_str,
        ) -> schedplug_code,
    >,
}

/// What pod_begin() returns besides its status (v1.1).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_pod_begin_result {
    pub struct_size: u32,
    pub skip: u32,
    pub state: *mut c_void,
}

/// Skip this plugin's filter for the pod (every node passes it).
pub const SCHEDPLUG_SKIP_FILTER: u32 = 1;
/// Skip this plugin's score for the pod (it adds nothing to any node).
pub const SCHEDPLUG_SKIP_SCORE: u32 = 2;

/// What permit() returns besides its status (v1.6).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_permit_result {
    pub struct_size: u32,
    pub reserved: u32,
    /// With SCHEDPLUG_WAIT: milliseconds, 1 to
    /// SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS; 0 means the most.
    pub timeout_ms: u64,
}

/// The longest a pod may wait in permit(): kube-scheduler's limit, 15 min.
pub const SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS: u32 = 900000;

/// The labels and annotations pre_bind() asks to set on the pod (v1.6).
/// Host-owned, valid during pre_bind() only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_pod_patch {
    pub struct_size: u32,
    pub reserved: u32,
    pub context: *mut c_void,
    pub set_annotation: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            key: schedplug_str,
            value: schedplug_str,
        ) -> schedplug_code,
    >,
    pub set_label: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            key: schedplug_str,
            value: schedplug_str,
        ) -> schedplug_code,
    >,
}

/// The most labels and annotations one pre_bind() may set, together.
pub const SCHEDPLUG_POD_PATCH_MAX: u32 = 16;
/// The longest annotation value pre_bind() may set, in bytes.
pub const SCHEDPLUG_POD_PATCH_VALUE_MAX: u32 = 4096;

// ---------------------------------------------------------------------------
// The descriptor
// ---------------------------------------------------------------------------

/// The descriptor a plugin returns from schedplug_plugin_v1(); static.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct schedplug_plugin {
    pub abi_version: u32,
    pub struct_size: u32,
    pub name: *const c_char,
    pub version: *const c_char,
    pub create: Option<
        unsafe extern "C" fn(
            args_json: *const c_char,
            args_len: u64,
            host: *const schedplug_host,
            instance_out: *mut *mut c_void,
            error: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub destroy: Option<unsafe extern "C" fn(instance: *mut c_void)>,
    pub applies:
        Option<unsafe extern "C" fn(instance: *mut c_void, pod: *const schedplug_pod) -> i32>,
    pub filter: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            pod: *const schedplug_pod,
            node: *const schedplug_node,
            reason: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub score: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            pod: *const schedplug_pod,
            node: *const schedplug_node,
            score: *mut i64,
            reason: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub normalize_score: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            pod: *const schedplug_pod,
            scores: *mut schedplug_node_score,
            count: u64,
            reason: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub normalize_policy: schedplug_normalize_policy,
    pub refresh: Option<
        unsafe extern "C" fn(instance: *mut c_void, error: *mut schedplug_reason) -> schedplug_code,
    >,
    pub refresh_period_ms: u32,
    pub events: u64,
    // v1.1
    pub pod_begin: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            pod: *const schedplug_pod,
            out: *mut schedplug_pod_begin_result,
            reason: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub pod_end: Option<unsafe extern "C" fn(instance: *mut c_void, state: *mut c_void)>,
    // v1.6
    pub reserve: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            pod: *const schedplug_pod,
            node: *const schedplug_node,
            reason: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub unreserve: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            pod: *const schedplug_pod,
            node: *const schedplug_node,
        ),
    >,
    pub permit: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            pod: *const schedplug_pod,
            node: *const schedplug_node,
            out: *mut schedplug_permit_result,
            reason: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub pre_bind: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            pod: *const schedplug_pod,
            node: *const schedplug_node,
            patch: *mut schedplug_pod_patch,
            reason: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
    pub pre_enqueue: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            pod: *const schedplug_pod,
            reason: *mut schedplug_reason,
        ) -> schedplug_code,
    >,
}

/// The type of the entry symbol.
pub type schedplug_plugin_v1_fn = Option<unsafe extern "C" fn() -> *const schedplug_plugin>;

/// Which list of pod (anti-)affinity terms: the required affinity terms.
pub const SCHEDPLUG_POD_AFFINITY_REQUIRED: i32 = 0;
/// Which list of pod (anti-)affinity terms: the preferred affinity terms.
pub const SCHEDPLUG_POD_AFFINITY_PREFERRED: i32 = 1;
/// Which list of pod (anti-)affinity terms: the required anti-affinity terms.
pub const SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED: i32 = 2;
/// Which list of pod (anti-)affinity terms: the preferred anti-affinity terms.
pub const SCHEDPLUG_POD_ANTI_AFFINITY_PREFERRED: i32 = 3;

zeroed_default!(
    schedplug_str,
    schedplug_kv,
    schedplug_kv_list,
    schedplug_resource,
    schedplug_resource_list,
    schedplug_taint,
    schedplug_toleration,
    schedplug_owner,
    schedplug_container_port,
    schedplug_container,
    schedplug_node_condition,
    schedplug_node_pod,
    schedplug_volume,
    schedplug_node_image,
    schedplug_selector_requirement,
    schedplug_label_selector,
    schedplug_node_selector_term,
    schedplug_topology_spread_constraint,
    schedplug_pod_affinity_term,
    schedplug_pod,
    schedplug_node,
    schedplug_reason,
    schedplug_node_score,
    schedplug_settings,
    schedplug_host,
    schedplug_pod_begin_result,
    schedplug_permit_result,
    schedplug_pod_patch,
    schedplug_plugin,
);
