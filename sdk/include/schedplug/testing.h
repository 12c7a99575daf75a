/* schedplug test kit for tests written in C: load a built plugin .so the way
 * schedplug-host does, build pods and nodes, run one scheduling cycle
 * (filter, score, normalize) and read each node's row; call the hooks of
 * plugins that own a resource (reserve ... pre_enqueue, ABI v1.6).
 *
 *   schedplug_test_plugin* p = schedplug_test_load("zone_required.so", "{}",
 *                                                  err, sizeof err);
 *   schedplug_test_pod* pod = schedplug_test_pod_new("web");
 *   schedplug_test_node* n = schedplug_test_node_new("n1");
 *   schedplug_test_node_label(n, "topology.kubernetes.io/zone", "a");
 *   schedplug_test_result r;
 *   schedplug_test_run(p, pod, &n, 1, &r, err, sizeof err);
 *   // r.filter == SCHEDPLUG_SUCCESS, r.score == 100 when it scores ...
 *
 * The functions are the C++ kit's (schedplug/testing.hpp), so the rules are
 * the host's. Their definitions are compiled from C++: link the test with
 * schedplug_add_plugin_test() (CMake), which adds them, or compile one C++
 * file that says
 *   #define SCHEDPLUG_TESTING_DEFINE_C_API
 *   #include <schedplug/testing.hpp>
 * and link with -ldl. */
#ifndef SCHEDPLUG_TESTING_H
#define SCHEDPLUG_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "schedplug/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct schedplug_test_plugin schedplug_test_plugin;
typedef struct schedplug_test_pod schedplug_test_pod;
typedef struct schedplug_test_node schedplug_test_node;

/* Loads and creates the plugin with `args_json` (NULL: "{}"). NULL on
 * failure, with the host's message in `error`. */
schedplug_test_plugin* schedplug_test_load(const char* file,
                                           const char* args_json, char* error,
                                           size_t error_size);
void schedplug_test_unload(schedplug_test_plugin* plugin);

/* Pods and nodes. Resources in canonical units (millicores, bytes, counts). */
schedplug_test_pod* schedplug_test_pod_new(const char* name);
void schedplug_test_pod_label(schedplug_test_pod* pod, const char* key,
                              const char* value);
void schedplug_test_pod_annotation(schedplug_test_pod* pod, const char* key,
                                   const char* value);
void schedplug_test_pod_request(schedplug_test_pod* pod, const char* resource,
                                int64_t value);
void schedplug_test_pod_priority(schedplug_test_pod* pod, int32_t priority);
/* Without it: "uid-1". Pods that reserve, wait in permit or are decided on
 * need uids of their own. */
void schedplug_test_pod_uid(schedplug_test_pod* pod, const char* uid);
void schedplug_test_pod_free(schedplug_test_pod* pod);

/* Declared data (SCHEDPLUG_DATA_*, ABI v1.2). A plugin sees only the data
 * it declared (the rest empty), as schedplug-host shows it when no other
 * plugin of the profile declared more. */
void schedplug_test_pod_node_name(schedplug_test_pod* pod, const char* name);
void schedplug_test_pod_nominated_node_name(schedplug_test_pod* pod,
                                            const char* name);
void schedplug_test_pod_priority_class_name(schedplug_test_pod* pod,
                                            const char* name);
/* An owner reference (metadata.ownerReferences), in the order added. */
void schedplug_test_pod_owner(schedplug_test_pod* pod, const char* kind,
                              const char* name, int32_t controller);
/* An app container, in spec order (one with the name of a container
 * already added replaces it). The three functions after it change the
 * container added last. */
void schedplug_test_pod_container(schedplug_test_pod* pod, const char* name,
                                  const char* image);
void schedplug_test_pod_container_request(schedplug_test_pod* pod,
                                          const char* resource, int64_t value);
void schedplug_test_pod_container_limit(schedplug_test_pod* pod,
                                        const char* resource, int64_t value);
/* protocol NULL: "TCP"; host_ip NULL: every address. */
void schedplug_test_pod_container_port(schedplug_test_pod* pod,
                                       int32_t container_port,
                                       int32_t host_port, const char* protocol,
                                       const char* host_ip);

/* Declared data (ABI v1.3). String arrays (`values`, `names`, `labels`)
 * end with NULL; `labels` holds key, value, key, value, ... */
/* A volume: `source` is its source's key in the pod spec
 * ("persistentVolumeClaim", "ephemeral", "configMap", ...), `claim_name`
 * its PVC (NULL: none). */
void schedplug_test_pod_volume(schedplug_test_pod* pod, const char* name,
                               const char* source, const char* claim_name,
                               int32_t read_only);
/* One requirement of a node selector term: `field` 0 for matchExpressions,
 * 1 for matchFields; `op` "In", "NotIn", "Exists", "DoesNotExist", "Gt" or
 * "Lt". */
typedef struct schedplug_test_requirement {
  const char* key;
  const char* op;
  const char* const* values;
  int32_t field;
} schedplug_test_requirement;
/* A node affinity term of `count` requirements: `weight` 0 for a required
 * term (requiredDuringScheduling...), 1..100 for a preferred one. */
void schedplug_test_pod_node_affinity(
    schedplug_test_pod* pod, int32_t weight,
    const schedplug_test_requirement* requirements, uint64_t count);
/* A topology spread constraint whose label selector is `labels`
 * (matchLabels; NULL: no selector); `when_unsatisfiable` NULL:
 * "DoNotSchedule". */
void schedplug_test_pod_topology_spread(schedplug_test_pod* pod,
                                        int32_t max_skew,
                                        const char* topology_key,
                                        const char* when_unsatisfiable,
                                        const char* const* labels);
/* A pod (anti-)affinity term: `which` is SCHEDPLUG_POD_AFFINITY_REQUIRED,
 * _PREFERRED, SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED or _PREFERRED; `weight`
 * (1..100) counts for the preferred ones; `labels` is its label selector's
 * matchLabels (NULL: no selector). The C++ kit (schedplug/testing.hpp)
 * builds every other part of a term. */
void schedplug_test_pod_affinity(schedplug_test_pod* pod, int32_t which,
                                 int32_t weight, const char* topology_key,
                                 const char* const* labels);

schedplug_test_node* schedplug_test_node_new(const char* name);
void schedplug_test_node_label(schedplug_test_node* node, const char* key,
                               const char* value);
void schedplug_test_node_annotation(schedplug_test_node* node, const char* key,
                                    const char* value);
void schedplug_test_node_taint(schedplug_test_node* node, const char* key,
                               const char* value, const char* effect);
void schedplug_test_node_allocatable(schedplug_test_node* node,
                                     const char* resource, int64_t value);
void schedplug_test_node_requested(schedplug_test_node* node,
                                   const char* resource, int64_t value);
/* Without it: the number of pods listed with schedplug_test_node_pod. */
void schedplug_test_node_pod_count(schedplug_test_node* node, uint32_t count);

/* Declared data (ABI v1.2), as for pods. */
void schedplug_test_node_unschedulable(schedplug_test_node* node,
                                       int32_t unschedulable);
/* A status condition ("Ready", "True"); a type given again replaces it. */
void schedplug_test_node_condition(schedplug_test_node* node, const char* type,
                                   const char* status);
void schedplug_test_node_capacity(schedplug_test_node* node,
                                  const char* resource, int64_t value);
/* A pod already on the node, by name alone (as schedplug_test_pod_new and
 * the C++ and Rust kits take it), in namespace "default", priority 0, no
 * controller. The functions after it change the pod listed last: its
 * namespace, priority, owner kind, labels and requests, each by name, so
 * that no two strings can be swapped. The list is sorted by namespace then
 * name as the host sends it; a pod listed again replaces it. Without
 * schedplug_test_node_requested, the node's requested is the sum of the
 * listed pods' requests. */
void schedplug_test_node_pod(schedplug_test_node* node, const char* name);
void schedplug_test_node_pod_namespace(schedplug_test_node* node,
                                       const char* namespace_name);
void schedplug_test_node_pod_priority(schedplug_test_node* node,
                                      int32_t priority);
void schedplug_test_node_pod_owner_kind(schedplug_test_node* node,
                                        const char* owner_kind);
void schedplug_test_node_pod_label(schedplug_test_node* node, const char* key,
                                   const char* value);
void schedplug_test_node_pod_request(schedplug_test_node* node,
                                     const char* resource, int64_t value);
/* A container image on the node (status.images): its `names` (a tag and a
 * digest reference, typically) and its size. ABI v1.3 declared data. */
void schedplug_test_node_image(schedplug_test_node* node,
                               const char* const* names, int64_t size_bytes);
void schedplug_test_node_free(schedplug_test_node* node);

/* One node's row of a cycle. */
typedef struct schedplug_test_result {
  schedplug_code filter; /* SKIP when the plugin skipped Filter for the pod */
  char reason[SCHEDPLUG_REASON_MAX]; /* the filter's reason */
  int32_t scored;                    /* 0: filtered out or Score skipped */
  int64_t raw;                       /* score() as returned */
  int64_t score;                     /* normalized, in [0, 100] */
} schedplug_test_result;

/* One scheduling cycle of `pod` over `nodes[0..count)`, rows into
 * `results[0..count)`. Returns SCHEDPLUG_SUCCESS, or SCHEDPLUG_ERROR with
 * the host's message in `error` when the cycle failed (a hook's ERROR,
 * pod_begin, normalization). Hooks see only the declared data; when `pod`
 * or `nodes` carry data the plugin did not declare and that data changes
 * its answers, the rows stay the host's and this is SCHEDPLUG_ERROR with a
 * sentence in `error` naming the SCHEDPLUG_DATA_* bit to declare, the hook
 * and the node. */
schedplug_code schedplug_test_run(const schedplug_test_plugin* plugin,
                                  const schedplug_test_pod* pod,
                                  schedplug_test_node* const* nodes,
                                  uint64_t count,
                                  schedplug_test_result* results, char* error,
                                  size_t error_size);

/* As schedplug_test_run, after a change from `before[0..before_count)` (the
 * nodes as they were, matched by name; a node not among them was added).
 * Each node whose rejection of the pod turned into a pass must be a change
 * of an event the plugin declared (schedplug_test_requeue_problem), and so
 * must each added node that passes the pod when a node of `before`
 * rejected it; the first broken promise is the cycle's error. */
schedplug_code schedplug_test_run_after(
    const schedplug_test_plugin* plugin, const schedplug_test_pod* pod,
    schedplug_test_node* const* before, uint64_t before_count,
    schedplug_test_node* const* nodes, uint64_t count,
    schedplug_test_result* results, char* error, size_t error_size);

/* Declared events (SCHEDPLUG_EVENT_*). The events after which kube-scheduler
 * requeues a pod the plugin rejected: those it declared, every event
 * (SCHEDPLUG_EVENT_ALL) for 0. */
uint64_t schedplug_test_requeue_events(const schedplug_test_plugin* plugin);
/* The SCHEDPLUG_EVENT_* kinds of node `before` becoming `after` (two states
 * of one node); `before` NULL: SCHEDPLUG_EVENT_NODE_ADD. */
uint64_t schedplug_test_change_events(const schedplug_test_node* before,
                                      const schedplug_test_node* after);
/* 0 (and "" in `problem`) when the plugin's filter rejects `pod` on
 * `before`, passes it on `after`, and the change is an event the plugin
 * declared; `before` NULL: `after` is a node added (the pod must pass on
 * it, and SCHEDPLUG_EVENT_NODE_ADD be declared). Else 1, with the sentence
 * in `problem`: the broken promise (which events to add), a change no event
 * reports, or why there is nothing to check. */
int32_t schedplug_test_requeue_problem(const schedplug_test_plugin* plugin,
                                       const schedplug_test_pod* pod,
                                       const schedplug_test_node* before,
                                       const schedplug_test_node* after,
                                       char* problem, size_t problem_size);

/* Hooks of plugins that own a resource (ABI v1.6), each called once as the
 * host calls it after a cycle placed `pod` on `node`, with the host's
 * rules (schedplug/testing.hpp's Plugin::reserve and the others). Each
 * returns the hook's status code as the host reads it (SUCCESS without the
 * hook), its reason in `reason`. */
schedplug_code schedplug_test_reserve(const schedplug_test_plugin* plugin,
                                      const schedplug_test_pod* pod,
                                      const schedplug_test_node* node,
                                      char* reason, size_t reason_size);
void schedplug_test_unreserve(const schedplug_test_plugin* plugin,
                              const schedplug_test_pod* pod,
                              const schedplug_test_node* node);
/* SCHEDPLUG_WAIT with the wait in `timeout_ms` (may be NULL); a timeout
 * longer than SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS is ERROR saying so. */
schedplug_code schedplug_test_permit(const schedplug_test_plugin* plugin,
                                     const schedplug_test_pod* pod,
                                     const schedplug_test_node* node,
                                     uint64_t* timeout_ms, char* reason,
                                     size_t reason_size);
/* The labels and annotations one pre_bind() set, checked as the host
 * checks them (a refused entry makes pre_bind ERROR, naming it). */
typedef struct schedplug_test_patch schedplug_test_patch;
schedplug_test_patch* schedplug_test_patch_new(void);
/* The value pre_bind() set for the key, NULL when it set none. */
const char* schedplug_test_patch_label(const schedplug_test_patch* patch,
                                       const char* key);
const char* schedplug_test_patch_annotation(const schedplug_test_patch* patch,
                                            const char* key);
/* Labels and annotations together. */
uint64_t schedplug_test_patch_count(const schedplug_test_patch* patch);
void schedplug_test_patch_free(schedplug_test_patch* patch);
/* `patch` (may be NULL) receives what pre_bind() set, replacing what it
 * held. */
schedplug_code schedplug_test_pre_bind(const schedplug_test_plugin* plugin,
                                       const schedplug_test_pod* pod,
                                       const schedplug_test_node* node,
                                       schedplug_test_patch* patch,
                                       char* reason, size_t reason_size);
schedplug_code schedplug_test_pre_enqueue(const schedplug_test_plugin* plugin,
                                          const schedplug_test_pod* pod,
                                          char* reason, size_t reason_size);
/* The plugin's permit_allow / permit_reject calls so far, one a line:
 * "allow <uid> -> <answer>" or "reject <uid> (<reason>) -> <answer>", the
 * answer being the kit's as the host's: Success for a pod that waited in
 * permit, Skip for any other. Returns the number of calls. */
uint64_t schedplug_test_permit_decisions(const schedplug_test_plugin* plugin,
                                         char* out, size_t out_size);
/* plugin.h's promise for unreserve(): 0 (and "" in `problem`) when
 * filtering `pod` on `node` answers the same before and after unreserve()
 * ran twice for the never reserved pod, and after reserve() and unreserve()
 * twice; else 1 with the sentence in `problem`. */
int32_t schedplug_test_unreserve_problem(const schedplug_test_plugin* plugin,
                                         const schedplug_test_pod* pod,
                                         const schedplug_test_node* node,
                                         char* problem, size_t problem_size);

#ifdef __cplusplus
}
#endif

#endif /* SCHEDPLUG_TESTING_H */
