/*
 * schedplug C ABI, version 1.
 *
 * A schedplug plugin is a shared object that exports one function,
 * `schedplug_plugin_v1`, returning a pointer to a `schedplug_plugin`
 * descriptor. The host (schedplug-host) loads the object with
 * RTLD_NOW | RTLD_LOCAL, calls that function, checks the descriptor's
 * `abi_version` and `struct_size` before it reads anything else, and then
 * runs the plugin's hooks inside kube-scheduler's scheduling cycle.
 *
 * Conventions used throughout this header:
 *
 *   - Every public name starts with `schedplug_` (types, functions) or
 *     `SCHEDPLUG_` (macros and constants).
 *   - Strings are `schedplug_str` views: pointer + length, NOT
 *     NUL-terminated unless stated. `data` may be NULL when `len` is 0.
 *   - "Borrowed" means: owned by the host, read-only for the plugin, valid
 *     only until the hook that received it returns. Copy what you keep.
 *   - Whoever allocates frees. The host never frees plugin memory, and the
 *     plugin never frees host memory.
 *   - Only fixed-width integers, pointers and the structs below cross the
 *     boundary: no enum, bool, int, long or size_t in a struct or a hook's
 *     signature. Enumerations are integer typedefs whose values are macros.
 *     The ABI is defined for LP64 platforms (Linux x86-64 and arm64).
 *   - No hook may throw a C++ exception or longjmp across this boundary.
 *     The C++ layer (plugin.hpp) catches every exception for you.
 *
 * Versioning: ABI version 1 only grows, append-only.
 *
 *   1. SCHEDPLUG_ABI_VERSION changes only for an incompatible change; a host
 *      refuses a descriptor of any other version.
 *   2. Within version 1, fields are appended at the end of a struct; a field
 *      is never removed, reordered, retyped or given a new meaning. Every
 *      struct that can grow says how big it is: `struct_size` for the
 *      descriptor, the pod and node views, the host services and the
 *      instance settings; an element size (the views' `*_size` fields) for
 *      the elements of an array. Hooks are never changed: new behaviour
 *      comes with a new, optional hook appended to the descriptor.
 *   3. The reader reads only what fits in the size the writer reported. The
 *      host copies the descriptor into a zero-filled struct of its own size
 *      and ignores trailing fields it does not know. A plugin reads a view
 *      field appended after v1.0 only when SCHEDPLUG_HAS_FIELD() says the
 *      host sent it, and indexes arrays with the element size the view
 *      gives (the helpers at the end of this header do both).
 *   4. Every appended field is optional: zero / NULL means "not used" and
 *      keeps the earlier behaviour. So a plugin built against an older
 *      header runs unchanged on a newer host, and a plugin built against a
 *      newer header runs on an older host, which ignores the fields it does
 *      not know (the plugin sees the smaller struct_size and falls back).
 *   5. A host hands array elements larger than their v1.0 size only to a
 *      plugin whose descriptor is at least as large as v1.1's (it indexes by
 *      element size); older plugins get v1.0-sized elements.
 *
 *   v1.0  the first release: the descriptor up to `events`, the views up to
 *         `pod_count` / `toleration_count`, schedplug_host up to `log`.
 *   v1.1  fixed-width types in place of enum and size_t (same layout on
 *         LP64); element sizes in the pod and node views; per-instance
 *         settings and typed args in schedplug_host; per-pod state and
 *         separate filter / score gates (pod_begin, pod_end, pod->state).
 *   v1.2  pod and node data a plugin declares it reads
 *         (schedplug_settings.data, SCHEDPLUG_DATA_*): the pod's
 *         spec.nodeName, nominated node, priority class, owners and
 *         containers; the node's spec.unschedulable, conditions, capacity
 *         and the pods already on it. Only declared data crosses the wire.
 *   v1.3  hints (schedplug_settings.hints, SCHEDPLUG_HINT_*): promises about
 *         an instance's hooks that let the scheduler skip work; more
 *         declared data: the pod's volumes (with their PVC names), node
 *         affinity, topology spread constraints and pod (anti-)affinity
 *         terms; the node's images (status.images).
 *   v1.4  hints SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY and
 *         SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, with the pod label
 *         and annotation keys the latter declares (schedplug_settings.
 *         pod_label_keys, pod_annotation_keys). A v1.3 host refuses either
 *         bit as an unknown SCHEDPLUG_HINT_* bit, as every host refuses bits
 *         it does not know, and has no key fields (SCHEDPLUG_HAS_FIELD).
 *   v1.5  hint SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY: the identity
 *         promise for score() and normalize_score(). A v1.4 host refuses
 *         the bit as unknown; no field changes.
 *   v1.6  hooks for plugins that own a resource (devices, quotas, gates):
 *         reserve, unreserve, permit, pre_bind and pre_enqueue appended to
 *         the descriptor; permit_allow / permit_reject in schedplug_host;
 *         the status code SCHEDPLUG_WAIT. A v1.5 host ignores the hooks
 *         (the descriptor is larger than it knows) and so never calls them:
 *         `schedplug check` on a v1.5 host does not list them.
 *
 * Threading contract:
 *
 *   - `create` and `destroy` are never called concurrently with anything
 *     else on the same instance.
 *   - `applies`, `pod_begin`, `pod_end`, `filter`, `score` and
 *     `normalize_score` may be called concurrently from several host
 *     threads on the SAME instance (for different nodes, and for different
 *     pods). They must only read state that is safe to read concurrently.
 *     A pod's state (pod_begin) is created before, and released after,
 *     every filter / score call that sees it.
 *   - `refresh` runs on a background thread owned by the host, one call at a
 *     time per instance, concurrently with filter/score. State that refresh
 *     publishes must be published safely (e.g. an atomic shared_ptr swap or
 *     a mutex held briefly by readers).
 *   - v1.6: `reserve`, `unreserve`, `permit`, `pre_bind` and `pre_enqueue`
 *     may run concurrently with every other hook except create/destroy,
 *     for different pods (kube-scheduler binds pods on goroutines of their
 *     own while it schedules the next). For ONE pod they come in the order
 *     kube-scheduler runs them: reserve, then permit, then pre_bind, with
 *     unreserve possibly after any of them; never two at once for the same
 *     pod. State they share (reservations) needs a lock.
 *
 * One header, although long: it is the whole C ABI, the one file a C plugin
 * includes, and tests/layout.rs of the Rust SDK compares it with abi.rs item by
 * item.
 */
#ifndef SCHEDPLUG_PLUGIN_H
#define SCHEDPLUG_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
static_assert(sizeof(void*) == 8 && sizeof(uint64_t) == sizeof(size_t),
              "the schedplug ABI is defined for LP64 platforms");
#else
_Static_assert(sizeof(void*) == 8 && sizeof(uint64_t) == sizeof(size_t),
               "the schedplug ABI is defined for LP64 platforms");
#endif

/* The ABI version this header describes. The host refuses a plugin whose
 * descriptor reports any other version, naming both. */
#define SCHEDPLUG_ABI_VERSION 1u

/* The name of the one symbol a plugin exports. */
#define SCHEDPLUG_ENTRY_SYMBOL "schedplug_plugin_v1"

/* Marks a symbol as exported even when the plugin is built with
 * -fvisibility=hidden (which it should be). */
#if defined(__GNUC__) || defined(__clang__)
#define SCHEDPLUG_EXPORT __attribute__((visibility("default")))
#else
#define SCHEDPLUG_EXPORT
#endif

/* ------------------------------------------------------------------------ */
/* Basic views                                                              */
/* ------------------------------------------------------------------------ */

/* A borrowed string: `len` bytes at `data`, not NUL-terminated. */
typedef struct schedplug_str {
  const char* data;
  uint64_t len;
} schedplug_str;

/* One label, annotation or node-selector entry. */
typedef struct schedplug_kv {
  schedplug_str key;
  schedplug_str value;
} schedplug_kv;

/* A borrowed array of entries, sorted by key in byte order (memcmp), keys
 * unique. Binary search is valid; see schedplug_kv_find(). */
typedef struct schedplug_kv_list {
  const schedplug_kv* items;
  uint64_t count;
} schedplug_kv_list;

/* One resource quantity, in the canonical unit of its kind:
 *   "cpu"                millicores (1 CPU = 1000)
 *   "memory"             bytes
 *   "ephemeral-storage"  bytes
 *   "pods"               count
 *   extended resources   their integer value (e.g. "nvidia.com/gpu": 2)
 */
typedef struct schedplug_resource {
  schedplug_str name;
  int64_t value;
} schedplug_resource;

/* A borrowed array of resources, sorted by name in byte order. A resource
 * that is absent is zero. */
typedef struct schedplug_resource_list {
  const schedplug_resource* items;
  uint64_t count;
} schedplug_resource_list;

/* A node taint. `effect` is "NoSchedule", "PreferNoSchedule" or
 * "NoExecute". */
typedef struct schedplug_taint {
  schedplug_str key;
  schedplug_str value;
  schedplug_str effect;
} schedplug_taint;

/* A pod toleration. `op` is "Equal" or "Exists" (empty means "Equal");
 * an empty `effect` matches every effect. `toleration_seconds` is only
 * meaningful when `has_toleration_seconds` is non-zero. */
typedef struct schedplug_toleration {
  schedplug_str key;
  schedplug_str op;
  schedplug_str value;
  schedplug_str effect;
  int32_t has_toleration_seconds;
  int64_t toleration_seconds;
} schedplug_toleration;

/* ---- v1.2 element types (the data of SCHEDPLUG_DATA_* below) ---------- */

/* One owner reference of a pod (metadata.ownerReferences). */
typedef struct schedplug_owner {
  schedplug_str kind; /* e.g. "ReplicaSet", "StatefulSet", "Job" */
  schedplug_str name;
  int32_t controller; /* 1 when this owner is the pod's controller */
} schedplug_owner;

/* One port of a container. `protocol` is "TCP", "UDP" or "SCTP". */
typedef struct schedplug_container_port {
  int32_t container_port;
  int32_t host_port; /* 0: no host port */
  schedplug_str protocol;
  schedplug_str host_ip; /* empty: every address */
} schedplug_container_port;

/* One app container of a pod (spec.containers, in spec order; init
 * containers are not listed). `requests` and `limits` are sorted by name,
 * in the canonical units of schedplug_resource, entries `resource_size`
 * apart; `ports` entries are `port_size` apart (both sizes are the pod
 * view's). */
typedef struct schedplug_container {
  schedplug_str name;
  schedplug_str image;
  schedplug_resource_list requests;
  schedplug_resource_list limits;
  const schedplug_container_port* ports;
  uint64_t port_count;
} schedplug_container;

/* One node condition (status.conditions): `type` such as "Ready" or
 * "MemoryPressure", `status` "True", "False" or "Unknown". */
typedef struct schedplug_node_condition {
  schedplug_str type;
  schedplug_str status;
} schedplug_node_condition;

/* One pod already on a node, compact. `labels` are sorted (entries the
 * node view's `kv_size` apart), `requests` are the pod's effective requests
 * as for the pod being scheduled (entries `resource_size` apart),
 * `owner_kind` is its controller's kind ("ReplicaSet", ...; empty: none). */
typedef struct schedplug_node_pod {
  schedplug_str namespace_name;
  schedplug_str name;
  schedplug_kv_list labels;
  int32_t priority;
  schedplug_resource_list requests;
  schedplug_str owner_kind;
} schedplug_node_pod;

/* ---- v1.3 element types ---------------------------------------------- */

/* One volume of a pod (spec.volumes, in spec order). `source` is the key
 * of its volume source in the pod spec: "persistentVolumeClaim",
 * "ephemeral", "configMap", "secret", "emptyDir", "hostPath", "csi", ...
 * `claim_name` is the PersistentVolumeClaim it uses: the claimName of a
 * "persistentVolumeClaim" source, "<pod name>-<volume name>" for a generic
 * "ephemeral" volume (the claim Kubernetes creates for it); else empty.
 * `read_only` is 1 when the source sets readOnly (persistentVolumeClaim,
 * csi and the other sources that have the field). */
typedef struct schedplug_volume {
  schedplug_str name;
  schedplug_str source;
  schedplug_str claim_name;
  int32_t read_only;
} schedplug_volume;

/* One container image a node holds (status.images): its names (a tag and
 * a digest reference, typically; `names` is an array of `name_count`
 * strings, borrowed like the view) and its size in bytes. */
typedef struct schedplug_node_image {
  const schedplug_str* names;
  uint64_t name_count;
  int64_t size_bytes;
} schedplug_node_image;

/* One requirement of a selector (matchExpressions, matchFields): `op` is
 * "In", "NotIn", "Exists", "DoesNotExist", "Gt" or "Lt" as in the pod spec;
 * `values` is an array of `value_count` strings, in spec order. */
typedef struct schedplug_selector_requirement {
  schedplug_str key;
  schedplug_str op;
  const schedplug_str* values;
  uint64_t value_count;
} schedplug_selector_requirement;

/* A label selector (metav1.LabelSelector). `present` is 0 when the field is
 * unset (nil), which differs from an empty selector (present, matching
 * everything). `match_labels` is sorted by key, entries the pod view's
 * `kv_size` apart; `match_expressions` entries are `requirement_size`
 * apart. */
typedef struct schedplug_label_selector {
  int32_t present;
  schedplug_kv_list match_labels;
  const schedplug_selector_requirement* match_expressions;
  uint64_t match_expression_count;
} schedplug_label_selector;

/* One node selector term of a node affinity. `weight` is the preferred
 * term's weight (1..100); 0 for a required term. Requirements are
 * `requirement_size` apart (the pod view's). */
typedef struct schedplug_node_selector_term {
  int32_t weight;
  const schedplug_selector_requirement* match_expressions;
  uint64_t match_expression_count;
  const schedplug_selector_requirement* match_fields;
  uint64_t match_field_count;
} schedplug_node_selector_term;

/* One topology spread constraint (spec.topologySpreadConstraints).
 * `min_domains` 0: unset; `node_affinity_policy` / `node_taints_policy`
 * ("Honor", "Ignore") empty: unset; `match_label_keys` an array of
 * `match_label_key_count` strings. */
typedef struct schedplug_topology_spread_constraint {
  int32_t max_skew;
  int32_t min_domains;
  schedplug_str topology_key;
  schedplug_str when_unsatisfiable; /* "DoNotSchedule", "ScheduleAnyway" */
  schedplug_label_selector label_selector;
  schedplug_str node_affinity_policy;
  schedplug_str node_taints_policy;
  const schedplug_str* match_label_keys;
  uint64_t match_label_key_count;
} schedplug_topology_spread_constraint;

/* One pod (anti-)affinity term. `weight` is the preferred term's weight
 * (1..100); 0 for a required term. `namespaces` (an array of
 * `namespace_count` strings), `match_label_keys` and `mismatch_label_keys`
 * likewise. */
typedef struct schedplug_pod_affinity_term {
  int32_t weight;
  schedplug_str topology_key;
  schedplug_label_selector label_selector;
  const schedplug_str* namespaces;
  uint64_t namespace_count;
  schedplug_label_selector namespace_selector;
  const schedplug_str* match_label_keys;
  uint64_t match_label_key_count;
  const schedplug_str* mismatch_label_keys;
  uint64_t mismatch_label_key_count;
} schedplug_pod_affinity_term;

/* The data beyond v1.1's that a plugin reads. A plugin declares what it
 * reads in schedplug_settings.data during create(); the scheduler's shim
 * converts and sends only the data some plugin declared, so a profile that
 * declares none pays nothing. A field whose bit no plugin declared is empty
 * (zero / NULL); a plugin may see data another plugin declared, but must
 * declare what it reads. */
/* pod->node_name (spec.nodeName; empty for a pod the scheduler places). */
#define SCHEDPLUG_DATA_POD_NODE_NAME (1ull << 0)
/* pod->nominated_node_name (status.nominatedNodeName). */
#define SCHEDPLUG_DATA_POD_NOMINATED_NODE (1ull << 1)
/* pod->priority_class_name (spec.priorityClassName). */
#define SCHEDPLUG_DATA_POD_PRIORITY_CLASS (1ull << 2)
/* pod->owners (metadata.ownerReferences: kind, name, controller). */
#define SCHEDPLUG_DATA_POD_OWNERS (1ull << 3)
/* pod->containers (image, requests, limits, ports). */
#define SCHEDPLUG_DATA_POD_CONTAINERS (1ull << 4)
/* node->unschedulable (spec.unschedulable, i.e. cordoned). */
#define SCHEDPLUG_DATA_NODE_UNSCHEDULABLE (1ull << 5)
/* node->conditions (status.conditions: type and status). */
#define SCHEDPLUG_DATA_NODE_CONDITIONS (1ull << 6)
/* node->capacity (status.capacity). */
#define SCHEDPLUG_DATA_NODE_CAPACITY (1ull << 7)
/* node->pod_list: the pods on the node, compact (schedplug_node_pod). */
#define SCHEDPLUG_DATA_NODE_PODS (1ull << 8)
/* v1.3: pod->volumes (spec.volumes: name, source kind, PVC name). */
#define SCHEDPLUG_DATA_POD_VOLUMES (1ull << 9)
/* v1.3: node->images (status.images: names and size). */
#define SCHEDPLUG_DATA_NODE_IMAGES (1ull << 10)
/* v1.3: pod->node_affinity_required / _preferred (spec.affinity.
 * nodeAffinity: the required terms, the preferred terms with weights). */
#define SCHEDPLUG_DATA_POD_NODE_AFFINITY (1ull << 11)
/* v1.3: pod->topology_spread (spec.topologySpreadConstraints). */
#define SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD (1ull << 12)
/* v1.3: pod->pod_affinity_* and pod->pod_anti_affinity_* (spec.affinity.
 * podAffinity and podAntiAffinity, required and preferred terms). */
#define SCHEDPLUG_DATA_POD_AFFINITY (1ull << 13)
/* Every bit this ABI version defines. */
#define SCHEDPLUG_DATA_ALL ((1ull << 14) - 1)

/* ------------------------------------------------------------------------ */
/* Pod and node views (borrowed, read-only, valid for one hook call)        */
/* ------------------------------------------------------------------------ */

/* The pod being scheduled. */
typedef struct schedplug_pod {
  uint32_t struct_size; /* sizeof(schedplug_pod) as the host knows it */
  schedplug_str namespace_name;
  schedplug_str name;
  schedplug_str uid;
  schedplug_kv_list labels;
  schedplug_kv_list annotations;
  int32_t priority;
  /* The pod's effective requests, as kube-scheduler computes them
   * (max of init containers and sum of containers, plus overhead). */
  schedplug_resource_list requests;
  schedplug_kv_list node_selector;
  const schedplug_toleration* tolerations;
  uint64_t toleration_count;

  /* ---- v1.1: test with SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, field) ---- */
  /* Element sizes: entries of `labels`, `annotations` and `node_selector`
   * are `kv_size` bytes apart, `requests` entries `resource_size`,
   * `tolerations` `toleration_size`; normalize_score's `scores` entries are
   * `node_score_size` bytes apart. Index with the helpers below. */
  uint32_t kv_size;
  uint32_t resource_size;
  uint32_t toleration_size;
  uint32_t node_score_size;
  /* This plugin's per-pod state: what its pod_begin() returned for this pod
   * in `out->state` (borrowed: released by pod_end, never by the plugin's
   * filter/score). NULL when the plugin has no pod_begin (or its pod_begin
   * set none), and on a host that predates v1.1, which never calls
   * pod_begin: then compute what you need in the hook itself. */
  void* state;

  /* ---- v1.2: test with SCHEDPLUG_HAS_FIELD; filled only when some plugin
   * declared the SCHEDPLUG_DATA_* bit named beside the field (else empty).
   * Every pointer is borrowed for the call, like the rest of the view. -- */
  schedplug_str node_name;           /* DATA_POD_NODE_NAME */
  schedplug_str nominated_node_name; /* DATA_POD_NOMINATED_NODE */
  schedplug_str priority_class_name; /* DATA_POD_PRIORITY_CLASS */
  const schedplug_owner* owners;     /* DATA_POD_OWNERS, `owner_size` apart */
  uint64_t owner_count;
  /* DATA_POD_CONTAINERS, `container_size` apart; ports `port_size` apart */
  const schedplug_container* containers;
  uint64_t container_count;
  uint32_t owner_size;
  uint32_t container_size;
  uint32_t port_size;

  /* ---- v1.3: test with SCHEDPLUG_HAS_FIELD; filled only when some plugin
   * declared the SCHEDPLUG_DATA_* bit named beside the field (else empty).
   * Every pointer is borrowed for the call, like the rest of the view. -- */
  uint32_t volume_size;
  /* DATA_POD_VOLUMES, `volume_size` apart */
  const schedplug_volume* volumes;
  uint64_t volume_count;
  /* Element sizes of the selector requirements, node selector terms,
   * topology spread constraints and pod affinity terms below. */
  uint32_t requirement_size;
  uint32_t node_selector_term_size;
  uint32_t topology_spread_size;
  uint32_t pod_affinity_term_size;
  /* DATA_POD_NODE_AFFINITY: required terms (ORed), preferred terms with
   * their weights, `node_selector_term_size` apart */
  const schedplug_node_selector_term* node_affinity_required;
  uint64_t node_affinity_required_count;
  const schedplug_node_selector_term* node_affinity_preferred;
  uint64_t node_affinity_preferred_count;
  /* DATA_POD_TOPOLOGY_SPREAD, `topology_spread_size` apart */
  const schedplug_topology_spread_constraint* topology_spread;
  uint64_t topology_spread_count;
  /* DATA_POD_AFFINITY: pod affinity and anti-affinity terms, required and
   * preferred (with weights), `pod_affinity_term_size` apart */
  const schedplug_pod_affinity_term* pod_affinity_required;
  uint64_t pod_affinity_required_count;
  const schedplug_pod_affinity_term* pod_affinity_preferred;
  uint64_t pod_affinity_preferred_count;
  const schedplug_pod_affinity_term* pod_anti_affinity_required;
  uint64_t pod_anti_affinity_required_count;
  const schedplug_pod_affinity_term* pod_anti_affinity_preferred;
  uint64_t pod_anti_affinity_preferred_count;
} schedplug_pod;

/* One node of the cluster, as the scheduler's snapshot sees it. */
typedef struct schedplug_node {
  uint32_t struct_size; /* sizeof(schedplug_node) as the host knows it */
  schedplug_str name;
  schedplug_kv_list labels;
  schedplug_kv_list annotations;
  const schedplug_taint* taints;
  uint64_t taint_count;
  schedplug_resource_list allocatable;
  /* Sum of the requests of the pods already on (or nominated to, in a
   * preemption dry run) this node. */
  schedplug_resource_list requested;
  uint32_t pod_count;

  /* ---- v1.1: test with SCHEDPLUG_HAS_FIELD(node, schedplug_node, field) ----
   */
  /* Element sizes of `labels` / `annotations`, `allocatable` / `requested`
   * and `taints`, as in schedplug_pod. */
  uint32_t kv_size;
  uint32_t resource_size;
  uint32_t taint_size;

  /* ---- v1.2: test with SCHEDPLUG_HAS_FIELD; filled only when some plugin
   * declared the SCHEDPLUG_DATA_* bit named beside the field (else empty).
   * Every pointer is borrowed for the call, like the rest of the view. -- */
  int32_t unschedulable; /* DATA_NODE_UNSCHEDULABLE: 1 when cordoned */
  uint32_t condition_size;
  /* DATA_NODE_CONDITIONS, `condition_size` apart */
  const schedplug_node_condition* conditions;
  uint64_t condition_count;
  /* DATA_NODE_CAPACITY, entries `resource_size` apart */
  schedplug_resource_list capacity;
  /* DATA_NODE_PODS: the pods on the node (those `pod_count` counts), sorted
   * by namespace then name, `node_pod_size` apart */
  const schedplug_node_pod* pod_list;
  uint64_t pod_list_count;
  uint32_t node_pod_size;

  /* ---- v1.3: test with SCHEDPLUG_HAS_FIELD; filled only when some plugin
   * declared the SCHEDPLUG_DATA_* bit named beside the field (else empty).
   * Every pointer is borrowed for the call, like the rest of the view. -- */
  uint32_t image_size;
  /* DATA_NODE_IMAGES, `image_size` apart */
  const schedplug_node_image* images;
  uint64_t image_count;
} schedplug_node;

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/* The result of a hook. The values equal kube-scheduler's status codes. */
typedef int32_t schedplug_code;
/* The node fits / the score is valid / the call worked. */
#define SCHEDPLUG_SUCCESS 0
/* A real internal error. A Filter Error ABORTS the pod's whole scheduling
 * cycle in kube-scheduler; use it only when the plugin cannot decide, never
 * to reject a node. */
#define SCHEDPLUG_ERROR 1
/* The node does not fit now; preemption may help. */
#define SCHEDPLUG_UNSCHEDULABLE 2
/* The node does not fit and preemption cannot change that. */
#define SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE 3
/* v1.6, permit() only: hold the pod at the end of its scheduling cycle
 * until the plugin allows or rejects it (schedplug_host.permit_allow /
 * permit_reject) or the timeout it set passes (then the pod is rejected). */
#define SCHEDPLUG_WAIT 4
/* This plugin has nothing to say about this pod. */
#define SCHEDPLUG_SKIP 5

/* Longest reason, including the terminating NUL. Longer reasons are cut. */
#define SCHEDPLUG_REASON_MAX 256u

/* A host-owned buffer for the reason that goes with a status, or for
 * create()'s error message. The plugin writes a NUL-terminated string of at
 * most `capacity` bytes into `text` (schedplug_reason_set() does that
 * safely, cutting on a character boundary); the host copies it after the
 * hook returns. Leave it untouched for "no reason".
 *
 * Write UTF-8. The host's copy always is: it drops a character cut off at
 * the end and replaces any other invalid byte with U+FFFD, so a reason
 * that quotes a pod's annotation never breaks the host's answer.
 *
 * A Filter reason is shown by kube-scheduler as
 *   "0/5 nodes are available: 3 <reason>."
 * so write a short phrase such as "node(s) lack hardware encryption". */
typedef struct schedplug_reason {
  char* text;
  uint64_t capacity;
} schedplug_reason;

/* The length of the longest prefix of `text` (`len` bytes) that is at most
 * `max` bytes long and does not end inside a UTF-8 character, so a text cut
 * to fit a buffer stays valid UTF-8 (the host replaces what is not, and
 * kube-scheduler shows reasons to users). */
static inline size_t schedplug_utf8_prefix(const char* text, size_t len,
                                           size_t max) {
  size_t n = max;
  int back = 0;
  if (len <= max) return len;
  /* text[n] is the first byte left out: while it continues a character
   * (10xxxxxx), that character started before the cut; leave it out too. */
  while (n > 0 && back < 3 && ((unsigned char)text[n] & 0xC0u) == 0x80u) {
    --n;
    ++back;
  }
  return n;
}

/* Copies `msg` (NUL-terminated) into `out`, cutting it to fit on a
 * character boundary. */
static inline void schedplug_reason_set(schedplug_reason* out,
                                        const char* msg) {
  size_t n;
  if (out == NULL || out->text == NULL || out->capacity == 0) return;
  n = schedplug_utf8_prefix(msg, strlen(msg), (size_t)(out->capacity - 1));
  memcpy(out->text, msg, n);
  out->text[n] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Score normalization                                                      */
/* ------------------------------------------------------------------------ */

/* kube-scheduler fails the whole cycle when a score is outside [0, 100]
 * after normalization, so the host always normalizes. A plugin either
 * implements `normalize_score` itself (then `normalize_policy` must be
 * NONE) or declares one of these policies. */
typedef uint32_t schedplug_normalize_policy;
/* Scores are already in [0, 100]; a value outside is an Error that names
 * the plugin. */
#define SCHEDPLUG_NORMALIZE_NONE 0u
/* Min-max onto [0, 100]: the highest raw score becomes 100. */
#define SCHEDPLUG_NORMALIZE_LINEAR 1u
/* Reversed min-max: the LOWEST raw score becomes 100 (latency, cost).
 * For LINEAR and REVERSE, when every node has the same raw score, every
 * node gets 100 (they are equally good). Results are rounded to the
 * nearest integer. */
#define SCHEDPLUG_NORMALIZE_REVERSE 2u

/* One entry of normalize_score's array: a borrowed node name and the
 * plugin's raw score, which normalize_score overwrites in place. */
typedef struct schedplug_node_score {
  schedplug_str node_name;
  int64_t score;
} schedplug_node_score;

/* ------------------------------------------------------------------------ */
/* Cluster events (for kube-scheduler's EnqueueExtensions)                  */
/* ------------------------------------------------------------------------ */

/* Events after which a pod this plugin rejected may fit, so kube-scheduler
 * moves it back to the active queue. OR them into `events`. Zero means
 * "any node or pod change" (the safe, slower default). */
#define SCHEDPLUG_EVENT_NODE_ADD (1ull << 0)
#define SCHEDPLUG_EVENT_NODE_DELETE (1ull << 1)
#define SCHEDPLUG_EVENT_NODE_UPDATE_LABEL (1ull << 2)
#define SCHEDPLUG_EVENT_NODE_UPDATE_TAINT (1ull << 3)
#define SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE (1ull << 4)
#define SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION (1ull << 5)
#define SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION (1ull << 6)
#define SCHEDPLUG_EVENT_POD_ADD (1ull << 7)
#define SCHEDPLUG_EVENT_POD_DELETE (1ull << 8)
#define SCHEDPLUG_EVENT_POD_UPDATE_LABEL (1ull << 9)
/* Every bit this ABI version defines. */
#define SCHEDPLUG_EVENT_ALL ((1ull << 10) - 1)

/* ------------------------------------------------------------------------ */
/* Services the host offers the plugin                                      */
/* ------------------------------------------------------------------------ */

typedef int32_t schedplug_log_level;
#define SCHEDPLUG_LOG_ERROR 0
#define SCHEDPLUG_LOG_WARNING 1
#define SCHEDPLUG_LOG_INFO 2
#define SCHEDPLUG_LOG_DEBUG 3

/* Per-instance settings (v1.1): what the descriptor declares statically,
 * decided by create() from the args instead. The host fills the struct with
 * the descriptor's values before create() and reads it back after a
 * successful create(); create() overwrites what depends on its args. Same
 * rules as the descriptor fields of the same name (a refresh hook needs a
 * period > 0; a policy other than NONE excludes normalize_score; events
 * only SCHEDPLUG_EVENT_* bits); data and hints take only SCHEDPLUG_DATA_*
 * and SCHEDPLUG_HINT_* bits; SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY and
 * SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY exclude a refresh hook, and the
 * latter needs a score hook; pod label and annotation keys need
 * SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, a non-NULL array when their
 * count is not 0, at most SCHEDPLUG_POD_KEYS_MAX keys a list, none empty.
 * The host refuses to start, naming the plugin, when they are broken. */
typedef struct schedplug_settings {
  uint32_t struct_size; /* sizeof(schedplug_settings) as the host knows it */
  /* How often refresh() runs, in milliseconds. */
  uint32_t refresh_period_ms;
  /* SCHEDPLUG_EVENT_* bits; 0 means every node and pod event. */
  uint64_t events;
  /* SCHEDPLUG_NORMALIZE_*, used when normalize_score is NULL. */
  schedplug_normalize_policy normalize_policy;
  uint32_t reserved; /* zero */

  /* ---- v1.2: test with SCHEDPLUG_HAS_FIELD(settings, ...) before writing */
  /* SCHEDPLUG_DATA_* bits: the pod and node data this instance reads. 0
   * (the default) keeps the views as v1.1 fills them. */
  uint64_t data;

  /* ---- v1.3: test with SCHEDPLUG_HAS_FIELD(settings, ...) before writing */
  /* SCHEDPLUG_HINT_* bits: promises about this instance's hooks that let
   * the scheduler skip work. 0 (the default) promises nothing. A host that
   * predates v1.3 has no such field and simply does not use the hints. */
  uint64_t hints;

  /* ---- v1.4: test with SCHEDPLUG_HAS_FIELD(settings, ...) before writing */
  /* The pod label keys and the pod annotation keys this instance reads,
   * for SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (empty without it).
   * Ownership: the arrays and the bytes of their keys are the instance's
   * (set them in create(), e.g. pointing into the instance); the host
   * copies them after create() returns and never reads them again, so they
   * need to stay valid only until then. Keys are compared byte for byte
   * with the pod's, as schedplug_kv_find() does; an empty list (count 0,
   * the default) declares no key. */
  const schedplug_str* pod_label_keys; /* pod_label_key_count views */
  uint64_t pod_label_key_count;
  const schedplug_str* pod_annotation_keys; /* pod_annotation_key_count views */
  uint64_t pod_annotation_key_count;
} schedplug_settings;

/* The most keys pod_label_keys, and pod_annotation_keys, may hold (v1.4). */
#define SCHEDPLUG_POD_KEYS_MAX 64u

/* filter()'s verdict on a node does not depend on the pods on it: it reads
 * nothing of node->requested, node->pod_count or node->pod_list. A
 * preemption dry run (kube-scheduler's "would the pod fit if these pods were
 * evicted?") and the nominated-pods pass only change a node's pods, so with
 * this hint the scheduler reuses the verdict the node got in the cycle's
 * PreFilter instead of asking the host about each changed copy of the node.
 * A false promise makes preemption decide on wrong verdicts: the C++ test
 * kit checks it on every node it runs (schedplug/testing.hpp). */
#define SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS (1ull << 0)
/* v1.4: applies(), pod_begin() and filter() give the same results (status
 * code, reason text, pod_begin's skip bits) for two pods that differ only
 * in their name and uid: the plugin reads neither pod->name nor pod->uid
 * (nor anything derived from them), and its verdicts depend on nothing else
 * that changes over time (no refresh hook, no clock, no randomness, no
 * counters). kube-scheduler schedules the replicas of a Deployment or a Job
 * one after another, and they are identical in everything a filter reads;
 * with this hint and SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS the scheduler
 * may reuse a node's verdict for the next pod that is identical apart from
 * name and uid, as long as the node object (labels, taints, allocatable,
 * conditions...) has not changed, instead of asking the host again. The
 * host refuses an instance that sets it and has a refresh hook. A false
 * promise makes the scheduler place pods on verdicts computed for another
 * pod: the C++ test kit checks it on every node it runs, with a copy of the
 * pod under another name and uid (schedplug/testing.hpp). */
#define SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY (1ull << 1)
/* v1.4: of the pod's labels and annotations, applies(), pod_begin() and
 * filter() read only those whose keys the instance lists in its settings
 * (schedplug_settings.pod_label_keys and pod_annotation_keys; none when a
 * list is empty): no other label or annotation, not even to count them or
 * to iterate over them. The pod's other fields stay free to read. Real pods
 * carry labels and annotations a filter never reads (a Deployment's
 * pod-template-hash, an app label, a tool's annotations); with this hint
 * and the other two (SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS,
 * SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY) the scheduler reuses a node's
 * verdict for the next pod that differs only in name, uid and undeclared
 * labels and annotations (e.g. pods of different Deployments that look the
 * same to the plugin), as long as the node object has not changed. The
 * hint is independent of the other two, but the scheduler uses it only
 * together with them. The host refuses keys without the hint. A false
 * promise makes the scheduler place pods on verdicts computed for another
 * pod: the C++ test kit checks it on every node it runs, with a copy of the
 * pod that keeps only the declared labels and annotations and gains an
 * undeclared one of each (schedplug/testing.hpp). A v1.3 host refuses the
 * bit as unknown, like the previous one, and has no key fields: test them
 * with SCHEDPLUG_HAS_FIELD(settings, schedplug_settings,
 * pod_annotation_key_count) before writing them. */
#define SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (1ull << 2)
/* v1.5: pod_begin(), applies(), score() and normalize_score() give the same
 * results (scores, status code, reason text, pod_begin's skip bits) for two
 * pods that differ only in their name and uid: the plugin reads neither
 * pod->name nor pod->uid (nor anything derived from them) in those hooks,
 * and its scores depend on nothing else that changes over time (no refresh
 * hook, no clock, no randomness, no counters). Scores may depend on the
 * node's pods (node->requested, pod_count, pod_list), not on other nodes.
 * kube-scheduler's opportunistic batching (KEP-5598) reuses the previous
 * cycle's ranking of the feasible nodes for the next pod with an equal
 * signature, only when the node chosen last no longer fits it (one pod per
 * node, so the other nodes' pods are unchanged), and runs Filter again only
 * on the node it picks; every Filter and Score plugin of the profile has to
 * sign the pod. kube-scheduler's own score plugins sign the pod fields
 * they read, without name and uid, although some scores read the node's
 * pods (NodeResourcesBalancedAllocation: the requested resources), and
 * PodTopologySpread, whose scores depend on other nodes, refuses. With this
 * hint (and, when the plugin has a filter hook,
 * SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY) the shim signs the pod for
 * the plugin. The signature holds the whole pod as the plugin sees it
 * (its declared data, all its labels and annotations) apart from name and
 * uid: SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS covers applies(),
 * pod_begin() and filter() only, so a plugin with a score hook is signed
 * with all its labels and annotations. The host refuses an instance that
 * sets this hint and has a refresh hook, or has no score hook. A false
 * promise makes the scheduler place pods on a ranking computed for another
 * pod: the C++ test kit checks it on every node it scores, with a copy of
 * the pod under another name and uid, normalization included
 * (schedplug/testing.hpp). A v1.4 host refuses the bit as unknown. */
#define SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY (1ull << 3)
/* Every bit this ABI version defines. */
#define SCHEDPLUG_HINT_ALL ((1ull << 4) - 1)

/* One JSON object of the plugin's args (the root, or a nested object),
 * read with the schedplug_host arg functions. Opaque, host-owned. */
typedef struct schedplug_args schedplug_args;

/* Handed to create(). Host-owned; valid until destroy() returns, so the
 * plugin may keep the pointer in its instance. Every function in it is
 * safe to call from any thread. */
typedef struct schedplug_host {
  uint32_t struct_size;
  /* Opaque; pass it back as the first argument of the functions below. */
  void* context;
  /* Writes one line to the host's log, prefixed with the plugin's name.
   * `msg` is borrowed for the duration of the call. */
  void (*log)(void* context, schedplug_log_level level, schedplug_str msg);

  /* ---- v1.1: test with SCHEDPLUG_HAS_FIELD(host, schedplug_host, field) -- */

  /* This instance's settings, pre-filled from the descriptor; create() may
   * change them. Valid during create() only. */
  schedplug_settings* settings;

  /* Typed args, so a C plugin needs no JSON parser. `args` is the root
   * object of the plugin's pluginConfig args (the `args_json` create()
   * receives). Valid during create() only, like everything the functions
   * below return: copy what you keep.
   *
   * Every getter returns
   *   SCHEDPLUG_SUCCESS  the arg is present and valid; *out is set;
   *   SCHEDPLUG_SKIP     the arg is absent; *out is untouched (your default);
   *   SCHEDPLUG_ERROR    the arg is present but of the wrong type or out of
   *                      range; `error` says which arg (with its path in
   *                      nested objects, e.g. "limits.cpu") and what it
   *                      should be -- return ERROR from create() with it.
   */
  const schedplug_args* args;
  /* ERROR when `obj` has a key that is not one of the `count` `known` keys,
   * naming it and the closest known key ("unknown arg "refreshPerod"; did
   * you mean "refreshPeriod"?"), so a misspelt arg is never ignored. */
  schedplug_code (*args_allow_only)(void* context, const schedplug_args* obj,
                                    const char* const* known, uint64_t count,
                                    schedplug_reason* error);
  /* A non-empty string. */
  schedplug_code (*arg_string)(void* context, const schedplug_args* obj,
                               const char* key, schedplug_str* out,
                               schedplug_reason* error);
  /* true or false; *out is 1 or 0. */
  schedplug_code (*arg_bool)(void* context, const schedplug_args* obj,
                             const char* key, int32_t* out,
                             schedplug_reason* error);
  /* An integer in [min, max]. */
  schedplug_code (*arg_int)(void* context, const schedplug_args* obj,
                            const char* key, int64_t min, int64_t max,
                            int64_t* out, schedplug_reason* error);
  /* A number in [min, max]. */
  schedplug_code (*arg_float)(void* context, const schedplug_args* obj,
                              const char* key, double min, double max,
                              double* out, schedplug_reason* error);
  /* A duration as Kubernetes writes one ("5s", "250ms", "1m30s", "2h"),
   * > 0, into *out_ns in nanoseconds. */
  schedplug_code (*arg_duration)(void* context, const schedplug_args* obj,
                                 const char* key, int64_t* out_ns,
                                 schedplug_reason* error);
  /* A list of non-empty strings (may be empty): *items, *count. */
  schedplug_code (*arg_string_list)(void* context, const schedplug_args* obj,
                                    const char* key,
                                    const schedplug_str** items,
                                    uint64_t* count, schedplug_reason* error);
  /* A nested object, read with these same functions. */
  schedplug_code (*arg_object)(void* context, const schedplug_args* obj,
                               const char* key, const schedplug_args** out,
                               schedplug_reason* error);

  /* ---- v1.6: test with SCHEDPLUG_HAS_FIELD(host, schedplug_host, field) -- */

  /* Ends the wait of a pod this instance's permit() answered WAIT for,
   * identified by its uid (`pod_uid`, borrowed for the call): the pod goes
   * on to binding once every plugin that made it wait has allowed it
   * (kube-scheduler's WaitingPod.Allow). Unlike the args functions, these
   * two stay valid until destroy() returns and may be called from any
   * thread, from inside any hook (permit() of the last member of a group
   * allowing the others, as coscheduling does) or from refresh().
   * Returns SUCCESS when the host passed the decision on to the scheduler,
   * SKIP when no pod with that uid waits on this instance (it was allowed,
   * rejected or timed out already, or never waited), ERROR when the
   * scheduler is not connected (the pod's wait then times out).
   * Delivery is asynchronous: the pod may still time out in between. */
  schedplug_code (*permit_allow)(void* context, schedplug_str pod_uid);
  /* Rejects a waiting pod (kube-scheduler's WaitingPod.Reject): its
   * reservations are undone (unreserve) and it goes back to the queue,
   * with `reason` (borrowed; cut at SCHEDPLUG_REASON_MAX bytes) shown on
   * the pod. Returns as permit_allow does. */
  schedplug_code (*permit_reject)(void* context, schedplug_str pod_uid,
                                  schedplug_str reason);
} schedplug_host;

/* What pod_begin() returns besides its status (v1.1). The host zeroes it
 * and sets struct_size before the call. */
typedef struct schedplug_pod_begin_result {
  uint32_t struct_size; /* sizeof(schedplug_pod_begin_result), host's */
  /* SCHEDPLUG_SKIP_* bits: hooks to skip for this pod. */
  uint32_t skip;
  /* Handed to filter/score as pod->state, then to pod_end(). */
  void* state;
} schedplug_pod_begin_result;

/* Skip this plugin's filter for the pod (every node passes it). */
#define SCHEDPLUG_SKIP_FILTER 1u
/* Skip this plugin's score for the pod (it adds nothing to any node). */
#define SCHEDPLUG_SKIP_SCORE 2u

/* What permit() returns besides its status (v1.6). The host zeroes it and
 * sets struct_size before the call. */
typedef struct schedplug_permit_result {
  uint32_t struct_size; /* sizeof(schedplug_permit_result), host's */
  uint32_t reserved;    /* zero */
  /* With SCHEDPLUG_WAIT: how long the pod may wait, in milliseconds, from
   * 1 to SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS; 0 means the most. Ignored for
   * the other codes. */
  uint64_t timeout_ms;
} schedplug_permit_result;

/* The longest a pod may wait in permit(): kube-scheduler's limit, 15 min. */
#define SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS 900000u

/* The labels and annotations pre_bind() asks to set on the pod before it
 * is bound (v1.6). Host-owned, valid during pre_bind() only; the functions
 * copy key and value (both borrowed for the call). Setting a key twice
 * keeps the last value. The scheduler writes every plugin's entries with
 * one patch of the pod before kube-scheduler binds it; a failed patch
 * fails the binding with a reason naming the plugins and the keys each
 * set, and the pod's reservations are undone (unreserve). Two plugins may
 * set one key only to the same value: the later plugin's PreBind fails
 * otherwise, its reason naming both. Each function returns SUCCESS, or ERROR
 * with nothing kept when the key or value is not valid for Kubernetes (a label
 * value longer than 63 bytes, a key that is not a qualified name, ...) or
 * when the patch would hold more than SCHEDPLUG_POD_PATCH_MAX entries or
 * SCHEDPLUG_POD_PATCH_VALUE_MAX bytes in one value: return ERROR from
 * pre_bind() then, the host names the key in the pod's failure. */
typedef struct schedplug_pod_patch {
  uint32_t struct_size; /* sizeof(schedplug_pod_patch), host's */
  uint32_t reserved;    /* zero */
  void* context;        /* pass it back as the functions' first argument */
  schedplug_code (*set_annotation)(void* context, schedplug_str key,
                                   schedplug_str value);
  schedplug_code (*set_label)(void* context, schedplug_str key,
                              schedplug_str value);
} schedplug_pod_patch;

/* The most labels and annotations one pre_bind() may set, together. */
#define SCHEDPLUG_POD_PATCH_MAX 16u
/* The longest annotation value pre_bind() may set, in bytes. */
#define SCHEDPLUG_POD_PATCH_VALUE_MAX 4096u

/* ------------------------------------------------------------------------ */
/* The descriptor                                                           */
/* ------------------------------------------------------------------------ */

/* The descriptor a plugin returns from schedplug_plugin_v1(). It must stay
 * valid and unchanged for as long as the shared object is loaded (make it a
 * static const object). A NULL function pointer means "not implemented";
 * which pointers are set decides the extension points the plugin offers:
 *
 *   filter           -> PreFilter + Filter in kube-scheduler
 *   score            -> PreScore + Score
 *   normalize_score  -> requires score (an error at load otherwise)
 *   refresh          -> requires refresh_period_ms > 0
 *   reserve          -> Reserve + Unreserve (v1.6)
 *   unreserve        -> requires reserve or permit (an error at load
 *                       otherwise)
 *   permit           -> Permit (v1.6)
 *   pre_bind         -> PreBind (v1.6)
 *   pre_enqueue      -> PreEnqueue (v1.6)
 *
 * Which of the v1.6 hooks a plugin has is part of what kube-scheduler
 * registered for it: a hot reload that adds or removes one of them is
 * refused (the host keeps serving the plugin it has, and says so), as is
 * a new plugin name.
 *
 * `instance` below is the pointer create() stored in *instance_out (NULL is
 * allowed for plugins without state).
 */
typedef struct schedplug_plugin {
  /* Must be SCHEDPLUG_ABI_VERSION. Checked first. */
  uint32_t abi_version;
  /* Must be sizeof(schedplug_plugin) as the plugin was compiled. The host
   * reads only the fields that fit in it. */
  uint32_t struct_size;

  /* The name kube-scheduler profiles enable, UpperCamelCase, unique among
   * loaded plugins, e.g. "HwEncrypt". NUL-terminated, static. */
  const char* name;
  /* The plugin's own version, e.g. "1.2.0". NUL-terminated, static. */
  const char* version;

  /* Called once per kube-scheduler profile that enables the plugin, with
   * that profile's pluginConfig args converted to JSON (`args_json`,
   * NUL-terminated, "{}" when there are none; borrowed for the call).
   * On success store the instance (may be NULL) and return SUCCESS. On
   * failure write a message that says which arg is wrong into `error` and
   * return ERROR; the host then refuses to start and shows the message. */
  schedplug_code (*create)(const char* args_json, uint64_t args_len,
                           const schedplug_host* host, void** instance_out,
                           schedplug_reason* error);
  /* Frees what create() allocated. May be NULL. */
  void (*destroy)(void* instance);

  /* Optional per-pod gate, called once per pod before filter/score.
   * Return 0 when the plugin has nothing to say about this pod: its filter
   * and score are then skipped for every node (kube-scheduler's Skip).
   * NULL means the plugin applies to every pod. */
  int32_t (*applies)(void* instance, const schedplug_pod* pod);

  /* Does `pod` fit on `node`? Return SUCCESS, UNSCHEDULABLE or
   * UNSCHEDULABLE_AND_UNRESOLVABLE with a reason, or ERROR. */
  schedplug_code (*filter)(void* instance, const schedplug_pod* pod,
                           const schedplug_node* node,
                           schedplug_reason* reason);

  /* Raw score of `node` for `pod` into *score. Return SUCCESS, or ERROR
   * with a reason. */
  schedplug_code (*score)(void* instance, const schedplug_pod* pod,
                          const schedplug_node* node, int64_t* score,
                          schedplug_reason* reason);

  /* Rewrites every scores[i].score into [0, 100]. `scores` is host-owned
   * and writable for the call; node names are borrowed. A value left out
   * of range is an Error that names the plugin; the host never clamps. */
  schedplug_code (*normalize_score)(void* instance, const schedplug_pod* pod,
                                    schedplug_node_score* scores,
                                    uint64_t count, schedplug_reason* reason);
  /* Used when normalize_score is NULL. */
  schedplug_normalize_policy normalize_policy;

  /* Background work (slow I/O with its own timeouts), called every
   * refresh_period_ms on a host thread, once right after create(). A
   * failure (ERROR with a reason) is logged and retried next period. */
  schedplug_code (*refresh)(void* instance, schedplug_reason* error);
  uint32_t refresh_period_ms;

  /* SCHEDPLUG_EVENT_* bits; 0 means every node and pod event. */
  uint64_t events;

  /* ---- v1.1 (a v1.0 host ignores these: keep `applies` meaningful, and
   * let filter/score work with pod->state NULL, if older hosts matter) --- */

  /* Optional per-pod hook (kube-scheduler's PreFilter/PreScore), replacing
   * `applies` when set. Called once for a pod before any filter or score
   * call for it, with the pod. It can
   *   - do the per-pod work every node would otherwise redo (parse an
   *     annotation, take a table lock once, look up a pod-wide value) and
   *     return the result in `out->state`: the host passes it, as
   *     `pod->state`, to every filter and score call for this pod, and
   *     hands it to pod_end() afterwards;
   *   - gate: set SCHEDPLUG_SKIP_FILTER and/or SCHEDPLUG_SKIP_SCORE in
   *     `out->skip` to skip filter and/or score for this pod (Skip);
   *   - fail: return ERROR with a reason; the pod's Filter (or Score) then
   *     fails with an Error naming the plugin, as a filter ERROR does.
   * Ownership: `pod` and its arrays are borrowed for the call (copy what
   * the state keeps); the state is the plugin's, the host only passes it
   * on and hands it back to pod_end.
   * Threading: pod_begin and pod_end for different pods may run
   * concurrently, like filter, and pod_end may run on another host thread
   * than its pod_begin. The state is read by filter/score calls on several
   * threads at once: treat it as immutable after pod_begin returns.
   * pod_end runs exactly once per successful pod_begin, after every call
   * that received the state has returned; it is not called when pod_begin
   * fails (free what you allocated before returning ERROR).
   * When: schedplug-host calls pod_begin once per pod per scheduling cycle
   * (in PreFilter, for every plugin of the profile, Filter and Score
   * alike) and passes the state to the cycle's filter calls, its
   * single-node filter calls and its score and normalize_score calls. The
   * cycle ends, and pod_end runs, after the cycle's scoring, or when the
   * scheduler's next pod begins (a cycle without scoring), when the
   * scheduler's session ends, or at shutdown. A call the host cannot tie to
   * the cycle (e.g. one that comes after the cycle ended) begins the pod
   * again for that call alone, with its own pod_end; so a plugin must not
   * assume one state per pod per cycle. */
  schedplug_code (*pod_begin)(void* instance, const schedplug_pod* pod,
                              schedplug_pod_begin_result* out,
                              schedplug_reason* reason);
  /* Releases a state pod_begin returned (called also for a NULL state).
   * May be NULL. */
  void (*pod_end)(void* instance, void* state);

  /* ---- v1.6: hooks for plugins that own a resource. A v1.5 host ignores
   * them. In all of them `pod` is the pod as filter() sees it (the
   * instance's declared data) with pod->state NULL (the cycle's pod_begin
   * state has ended), and `node` is the node kube-scheduler chose, as the
   * host's node table holds it at the call (the instance's declared data;
   * its pods are the pods kube-scheduler had on it, without `pod`); both
   * borrowed for the call. A plugin's state about the pod (what reserve()
   * took) is its own, kept in the instance, keyed by pod->uid; it must
   * survive until unreserve() or until the pod is bound, and a restarted
   * host starts without it: rebuild it from what pre_bind() wrote on the
   * pods (the node's pods and their labels). --------------------------- */

  /* kube-scheduler's Reserve: the pod will be bound to `node` unless a
   * later step fails. Take what the pod needs (pick device indices, count
   * it against a quota) so that the next pods' filter() calls see it.
   * Return SUCCESS, or UNSCHEDULABLE / ERROR with a reason: the pod's
   * cycle then fails and every Reserve plugin's unreserve() runs.
   * When: in the scheduling cycle, after scoring, once per placement. */
  schedplug_code (*reserve)(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node,
                            schedplug_reason* reason);
  /* kube-scheduler's Unreserve: release what reserve() took for the pod on
   * `node`. Called when a later Reserve plugin, a Permit plugin, a PreBind
   * plugin or the binding fails, or the pod is deleted while it waits.
   * It cannot fail. Required: idempotent and tolerant: kube-scheduler
   * calls it for every Reserve plugin of the profile, also when this
   * plugin's reserve() failed or never ran for the pod, and a restarted
   * host calls it for pods it never reserved. */
  void (*unreserve)(void* instance, const schedplug_pod* pod,
                    const schedplug_node* node);
  /* kube-scheduler's Permit, at the end of the scheduling cycle: return
   * SUCCESS to let the pod go on to binding, UNSCHEDULABLE with a reason
   * to reject it (its reservations are undone), or SCHEDPLUG_WAIT with
   * out->timeout_ms to hold it until schedplug_host.permit_allow or
   * permit_reject names its uid, or until the timeout rejects it. ERROR
   * with a reason fails the pod as a rejection does. */
  schedplug_code (*permit)(void* instance, const schedplug_pod* pod,
                           const schedplug_node* node,
                           schedplug_permit_result* out,
                           schedplug_reason* reason);
  /* kube-scheduler's PreBind, on the pod's binding goroutine: write the
   * plugin's choice onto the pod with patch->set_annotation / set_label
   * (e.g. the device indices reserve() picked, for the node's device
   * plugin to read). Return SUCCESS, or ERROR with a reason: the binding
   * then fails and the pod's reservations are undone. The scheduler applies
   * every native plugin's patch in one write before it binds the pod. */
  schedplug_code (*pre_bind)(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_pod_patch* patch,
                             schedplug_reason* reason);
  /* kube-scheduler's PreEnqueue: may the pod enter the scheduling queue?
   * Return SUCCESS to admit it, or UNSCHEDULABLE_AND_UNRESOLVABLE with a
   * reason to keep it out (kubectl describe shows the reason); kube-
   * scheduler asks again when one of the instance's events happens
   * (settings.events: e.g. SCHEDPLUG_EVENT_POD_DELETE for a quota that a
   * deleted pod frees). ERROR keeps it out too, with the reason logged.
   * Called for every pod of the profile that is added or updated, before
   * any cycle: keep it cheap, and read nothing of nodes. */
  schedplug_code (*pre_enqueue)(void* instance, const schedplug_pod* pod,
                                schedplug_reason* reason);
} schedplug_plugin;

/* The type of the entry symbol. */
typedef const schedplug_plugin* (*schedplug_plugin_v1_fn)(void);

/* ------------------------------------------------------------------------ */
/* Small helpers for C plugins                                              */
/* ------------------------------------------------------------------------ */

/* Makes a view of a NUL-terminated string. */
static inline schedplug_str schedplug_str_of(const char* s) {
  schedplug_str out;
  out.data = s;
  out.len = s ? strlen(s) : 0;
  return out;
}

/* 1 when the view equals the NUL-terminated `s`, byte for byte. */
static inline int schedplug_str_eq(schedplug_str a, const char* s) {
  size_t n = strlen(s);
  return a.len == n && (n == 0 || memcmp(a.data, s, n) == 0);
}

static inline int schedplug_str_cmp(schedplug_str a, schedplug_str b) {
  size_t n = a.len < b.len ? a.len : b.len;
  int c = n ? memcmp(a.data, b.data, n) : 0;
  if (c != 0) return c;
  return a.len < b.len ? -1 : (a.len > b.len ? 1 : 0);
}

/* 1 when the host-owned `view` (a pointer to a schedplug_pod, _node,
 * _host, ...) is large enough to hold `field` of `type`: the host that
 * filled it knows that field. */
#define SCHEDPLUG_HAS_FIELD(view, type, field) \
  ((view)->struct_size >=                      \
   offsetof(type, field) + sizeof(((const type*)0)->field))

/* The element size to index an array with: the view's `size` when the host
 * sent one, else the v1.0 size of the element. */
static inline uint64_t schedplug_element_size(uint32_t size,
                                              uint64_t v1_0_size) {
  return size != 0 ? size : v1_0_size;
}

/* Element sizes of a pod's and a node's arrays (see the views). */
static inline uint64_t schedplug_pod_kv_size(const schedplug_pod* pod) {
  return schedplug_element_size(
      SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, kv_size) ? pod->kv_size : 0,
      sizeof(schedplug_kv));
}
static inline uint64_t schedplug_pod_resource_size(const schedplug_pod* pod) {
  return schedplug_element_size(
      SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, resource_size)
          ? pod->resource_size
          : 0,
      sizeof(schedplug_resource));
}
static inline uint64_t schedplug_pod_toleration_size(const schedplug_pod* pod) {
  return schedplug_element_size(
      SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, toleration_size)
          ? pod->toleration_size
          : 0,
      sizeof(schedplug_toleration));
}
static inline uint64_t schedplug_pod_node_score_size(const schedplug_pod* pod) {
  return schedplug_element_size(
      SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, node_score_size)
          ? pod->node_score_size
          : 0,
      sizeof(schedplug_node_score));
}
static inline uint64_t schedplug_node_kv_size(const schedplug_node* node) {
  return schedplug_element_size(
      SCHEDPLUG_HAS_FIELD(node, schedplug_node, kv_size) ? node->kv_size : 0,
      sizeof(schedplug_kv));
}
static inline uint64_t schedplug_node_resource_size(
    const schedplug_node* node) {
  return schedplug_element_size(
      SCHEDPLUG_HAS_FIELD(node, schedplug_node, resource_size)
          ? node->resource_size
          : 0,
      sizeof(schedplug_resource));
}
static inline uint64_t schedplug_node_taint_size(const schedplug_node* node) {
  return schedplug_element_size(
      SCHEDPLUG_HAS_FIELD(node, schedplug_node, taint_size) ? node->taint_size
                                                            : 0,
      sizeof(schedplug_taint));
}

/* Element `i` of an array whose elements are `size` bytes apart. */
static inline const void* schedplug_element_at(const void* items, uint64_t size,
                                               uint64_t i) {
  return (const char*)items + i * size;
}

/* Binary search for `key` (exact, case-sensitive) in a sorted list whose
 * entries are `size` bytes apart. Returns the entry or NULL. */
static inline const schedplug_kv* schedplug_kv_find_sized(
    schedplug_kv_list list, uint64_t size, const char* key) {
  schedplug_str k = schedplug_str_of(key);
  uint64_t lo = 0, hi = list.count;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    const schedplug_kv* kv =
        (const schedplug_kv*)schedplug_element_at(list.items, size, mid);
    int c = schedplug_str_cmp(kv->key, k);
    if (c == 0) return kv;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* The v1.0 search, for lists of v1.0-sized entries. Prefer the per-view
 * helpers below, which use the element size the host sent. */
static inline const schedplug_kv* schedplug_kv_find(schedplug_kv_list list,
                                                    const char* key) {
  return schedplug_kv_find_sized(list, sizeof(schedplug_kv), key);
}

/* The value of resource `name` in a list whose entries are `size` bytes
 * apart, 0 when absent. */
static inline int64_t schedplug_resource_get_sized(schedplug_resource_list list,
                                                   uint64_t size,
                                                   const char* name) {
  schedplug_str k = schedplug_str_of(name);
  uint64_t lo = 0, hi = list.count;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    const schedplug_resource* r =
        (const schedplug_resource*)schedplug_element_at(list.items, size, mid);
    int c = schedplug_str_cmp(r->name, k);
    if (c == 0) return r->value;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

/* The v1.0 lookup, for lists of v1.0-sized entries. */
static inline int64_t schedplug_resource_get(schedplug_resource_list list,
                                             const char* name) {
  return schedplug_resource_get_sized(list, sizeof(schedplug_resource), name);
}

/* Lookups on the views, with the element sizes the host sent. */
static inline const schedplug_kv* schedplug_pod_label(const schedplug_pod* pod,
                                                      const char* key) {
  return schedplug_kv_find_sized(pod->labels, schedplug_pod_kv_size(pod), key);
}
static inline const schedplug_kv* schedplug_pod_annotation(
    const schedplug_pod* pod, const char* key) {
  return schedplug_kv_find_sized(pod->annotations, schedplug_pod_kv_size(pod),
                                 key);
}
static inline const schedplug_kv* schedplug_pod_node_selector(
    const schedplug_pod* pod, const char* key) {
  return schedplug_kv_find_sized(pod->node_selector, schedplug_pod_kv_size(pod),
                                 key);
}
static inline int64_t schedplug_pod_request(const schedplug_pod* pod,
                                            const char* resource) {
  return schedplug_resource_get_sized(
      pod->requests, schedplug_pod_resource_size(pod), resource);
}
static inline const schedplug_toleration* schedplug_pod_toleration(
    const schedplug_pod* pod, uint64_t i) {
  return (const schedplug_toleration*)schedplug_element_at(
      pod->tolerations, schedplug_pod_toleration_size(pod), i);
}
static inline const schedplug_kv* schedplug_node_label(
    const schedplug_node* node, const char* key) {
  return schedplug_kv_find_sized(node->labels, schedplug_node_kv_size(node),
                                 key);
}
static inline const schedplug_kv* schedplug_node_annotation(
    const schedplug_node* node, const char* key) {
  return schedplug_kv_find_sized(node->annotations,
                                 schedplug_node_kv_size(node), key);
}
static inline int64_t schedplug_node_allocatable(const schedplug_node* node,
                                                 const char* resource) {
  return schedplug_resource_get_sized(
      node->allocatable, schedplug_node_resource_size(node), resource);
}
static inline int64_t schedplug_node_requested(const schedplug_node* node,
                                               const char* resource) {
  return schedplug_resource_get_sized(
      node->requested, schedplug_node_resource_size(node), resource);
}
static inline const schedplug_taint* schedplug_node_taint(
    const schedplug_node* node, uint64_t i) {
  return (const schedplug_taint*)schedplug_element_at(
      node->taints, schedplug_node_taint_size(node), i);
}
/* v1.2 data (see SCHEDPLUG_DATA_*): empty when the host did not send it. */
static inline schedplug_str schedplug_pod_node_name(const schedplug_pod* pod) {
  schedplug_str none = {NULL, 0};
  return SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, node_name) ? pod->node_name
                                                            : none;
}
static inline schedplug_str schedplug_pod_nominated_node_name(
    const schedplug_pod* pod) {
  schedplug_str none = {NULL, 0};
  return SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, nominated_node_name)
             ? pod->nominated_node_name
             : none;
}
static inline schedplug_str schedplug_pod_priority_class_name(
    const schedplug_pod* pod) {
  schedplug_str none = {NULL, 0};
  return SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, priority_class_name)
             ? pod->priority_class_name
             : none;
}
static inline uint64_t schedplug_pod_owner_count(const schedplug_pod* pod) {
  return SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, port_size) ? pod->owner_count
                                                            : 0;
}
static inline const schedplug_owner* schedplug_pod_owner(
    const schedplug_pod* pod, uint64_t i) {
  return (const schedplug_owner*)schedplug_element_at(
      pod->owners,
      schedplug_element_size(pod->owner_size, sizeof(schedplug_owner)), i);
}
static inline uint64_t schedplug_pod_container_count(const schedplug_pod* pod) {
  return SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, port_size)
             ? pod->container_count
             : 0;
}
static inline const schedplug_container* schedplug_pod_container(
    const schedplug_pod* pod, uint64_t i) {
  return (const schedplug_container*)schedplug_element_at(
      pod->containers,
      schedplug_element_size(pod->container_size, sizeof(schedplug_container)),
      i);
}
static inline const schedplug_container_port* schedplug_container_port_at(
    const schedplug_pod* pod, const schedplug_container* c, uint64_t i) {
  return (const schedplug_container_port*)schedplug_element_at(
      c->ports,
      schedplug_element_size(pod->port_size, sizeof(schedplug_container_port)),
      i);
}
static inline int32_t schedplug_node_unschedulable(const schedplug_node* node) {
  return SCHEDPLUG_HAS_FIELD(node, schedplug_node, unschedulable)
             ? node->unschedulable
             : 0;
}
static inline uint64_t schedplug_node_condition_count(
    const schedplug_node* node) {
  return SCHEDPLUG_HAS_FIELD(node, schedplug_node, node_pod_size)
             ? node->condition_count
             : 0;
}
static inline const schedplug_node_condition* schedplug_node_condition_at(
    const schedplug_node* node, uint64_t i) {
  return (const schedplug_node_condition*)schedplug_element_at(
      node->conditions,
      schedplug_element_size(node->condition_size,
                             sizeof(schedplug_node_condition)),
      i);
}
static inline int64_t schedplug_node_capacity(const schedplug_node* node,
                                              const char* resource) {
  if (!SCHEDPLUG_HAS_FIELD(node, schedplug_node, node_pod_size)) return 0;
  return schedplug_resource_get_sized(
      node->capacity, schedplug_node_resource_size(node), resource);
}
static inline uint64_t schedplug_node_pod_list_count(
    const schedplug_node* node) {
  return SCHEDPLUG_HAS_FIELD(node, schedplug_node, node_pod_size)
             ? node->pod_list_count
             : 0;
}
static inline const schedplug_node_pod* schedplug_node_pod_at(
    const schedplug_node* node, uint64_t i) {
  return (const schedplug_node_pod*)schedplug_element_at(
      node->pod_list,
      schedplug_element_size(node->node_pod_size, sizeof(schedplug_node_pod)),
      i);
}
/* v1.3 data (see SCHEDPLUG_DATA_*): empty when the host did not send it. */
static inline uint64_t schedplug_pod_volume_count(const schedplug_pod* pod) {
  return SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, volume_count)
             ? pod->volume_count
             : 0;
}
static inline const schedplug_volume* schedplug_pod_volume(
    const schedplug_pod* pod, uint64_t i) {
  return (const schedplug_volume*)schedplug_element_at(
      pod->volumes,
      schedplug_element_size(pod->volume_size, sizeof(schedplug_volume)), i);
}
static inline uint64_t schedplug_node_image_count(const schedplug_node* node) {
  return SCHEDPLUG_HAS_FIELD(node, schedplug_node, image_count)
             ? node->image_count
             : 0;
}
static inline const schedplug_node_image* schedplug_node_image_at(
    const schedplug_node* node, uint64_t i) {
  return (const schedplug_node_image*)schedplug_element_at(
      node->images,
      schedplug_element_size(node->image_size, sizeof(schedplug_node_image)),
      i);
}
/* The lists of DATA_POD_NODE_AFFINITY, DATA_POD_TOPOLOGY_SPREAD and
 * DATA_POD_AFFINITY: `*count` is set to the list's length (0 on an older
 * host), and entry `i` is read with the _at() helpers below. */
static inline const schedplug_node_selector_term* schedplug_pod_node_affinity(
    const schedplug_pod* pod, int32_t preferred, uint64_t* count) {
  if (!SCHEDPLUG_HAS_FIELD(pod, schedplug_pod,
                           pod_anti_affinity_preferred_count)) {
    *count = 0;
    return NULL;
  }
  *count = preferred ? pod->node_affinity_preferred_count
                     : pod->node_affinity_required_count;
  return preferred ? pod->node_affinity_preferred : pod->node_affinity_required;
}
static inline const schedplug_node_selector_term*
schedplug_node_selector_term_at(const schedplug_pod* pod,
                                const schedplug_node_selector_term* terms,
                                uint64_t i) {
  return (const schedplug_node_selector_term*)schedplug_element_at(
      terms,
      schedplug_element_size(pod->node_selector_term_size,
                             sizeof(schedplug_node_selector_term)),
      i);
}
static inline const schedplug_selector_requirement* schedplug_requirement_at(
    const schedplug_pod* pod, const schedplug_selector_requirement* items,
    uint64_t i) {
  return (const schedplug_selector_requirement*)schedplug_element_at(
      items,
      schedplug_element_size(pod->requirement_size,
                             sizeof(schedplug_selector_requirement)),
      i);
}
static inline uint64_t schedplug_pod_topology_spread_count(
    const schedplug_pod* pod) {
  return SCHEDPLUG_HAS_FIELD(pod, schedplug_pod,
                             pod_anti_affinity_preferred_count)
             ? pod->topology_spread_count
             : 0;
}
static inline const schedplug_topology_spread_constraint*
schedplug_pod_topology_spread(const schedplug_pod* pod, uint64_t i) {
  return (const schedplug_topology_spread_constraint*)schedplug_element_at(
      pod->topology_spread,
      schedplug_element_size(pod->topology_spread_size,
                             sizeof(schedplug_topology_spread_constraint)),
      i);
}
/* Which list of pod (anti-)affinity terms schedplug_pod_affinity() returns. */
#define SCHEDPLUG_POD_AFFINITY_REQUIRED 0
#define SCHEDPLUG_POD_AFFINITY_PREFERRED 1
#define SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED 2
#define SCHEDPLUG_POD_ANTI_AFFINITY_PREFERRED 3
static inline const schedplug_pod_affinity_term* schedplug_pod_affinity(
    const schedplug_pod* pod, int32_t which, uint64_t* count) {
  *count = 0;
  if (!SCHEDPLUG_HAS_FIELD(pod, schedplug_pod,
                           pod_anti_affinity_preferred_count))
    return NULL;
  switch (which) {
    case SCHEDPLUG_POD_AFFINITY_REQUIRED:
      *count = pod->pod_affinity_required_count;
      return pod->pod_affinity_required;
    case SCHEDPLUG_POD_AFFINITY_PREFERRED:
      *count = pod->pod_affinity_preferred_count;
      return pod->pod_affinity_preferred;
    case SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED:
      *count = pod->pod_anti_affinity_required_count;
      return pod->pod_anti_affinity_required;
    case SCHEDPLUG_POD_ANTI_AFFINITY_PREFERRED:
      *count = pod->pod_anti_affinity_preferred_count;
      return pod->pod_anti_affinity_preferred;
    default:
      return NULL;
  }
}
static inline const schedplug_pod_affinity_term* schedplug_pod_affinity_term_at(
    const schedplug_pod* pod, const schedplug_pod_affinity_term* terms,
    uint64_t i) {
  return (const schedplug_pod_affinity_term*)schedplug_element_at(
      terms,
      schedplug_element_size(pod->pod_affinity_term_size,
                             sizeof(schedplug_pod_affinity_term)),
      i);
}

/* Entry `i` of normalize_score's `scores` for `pod`. */
static inline schedplug_node_score* schedplug_node_score_at(
    const schedplug_pod* pod, schedplug_node_score* scores, uint64_t i) {
  return (schedplug_node_score*)((char*)scores +
                                 i * schedplug_pod_node_score_size(pod));
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SCHEDPLUG_PLUGIN_H */
