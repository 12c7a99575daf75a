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
 *     `SCHEDPLUG_` (macros, enum values).
 *   - Strings are `schedplug_str` views: pointer + length, NOT
 *     NUL-terminated unless stated. `data` may be NULL when `len` is 0.
 *   - "Borrowed" means: owned by the host, read-only for the plugin, valid
 *     only until the hook that received it returns. Copy what you keep.
 *   - Whoever allocates frees. The host never frees plugin memory, and the
 *     plugin never frees host memory.
 *   - Structs only grow at the end within ABI version 1. Structs that cross
 *     the boundary start with `struct_size`, so either side can tell which
 *     fields the other one knows.
 *   - No hook may throw a C++ exception or longjmp across this boundary.
 *     The C++ layer (plugin.hpp) catches every exception for you.
 *
 * Threading contract:
 *
 *   - `create` and `destroy` are never called concurrently with anything
 *     else on the same instance.
 *   - `applies`, `filter`, `score` and `normalize_score` may be called
 *     concurrently from several host threads on the SAME instance (for
 *     different nodes, and for different pods). They must only read state
 *     that is safe to read concurrently.
 *   - `refresh` runs on a background thread owned by the host, one call at a
 *     time per instance, concurrently with filter/score. State that refresh
 *     publishes must be published safely (e.g. an atomic shared_ptr swap or
 *     a mutex held briefly by readers).
 */
#ifndef SCHEDPLUG_PLUGIN_H
#define SCHEDPLUG_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
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
  size_t len;
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
  size_t count;
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
  size_t count;
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
  size_t toleration_count;
} schedplug_pod;

/* One node of the cluster, as the scheduler's snapshot sees it. */
typedef struct schedplug_node {
  uint32_t struct_size; /* sizeof(schedplug_node) as the host knows it */
  schedplug_str name;
  schedplug_kv_list labels;
  schedplug_kv_list annotations;
  const schedplug_taint* taints;
  size_t taint_count;
  schedplug_resource_list allocatable;
  /* Sum of the requests of the pods already on (or nominated to, in a
   * preemption dry run) this node. */
  schedplug_resource_list requested;
  uint32_t pod_count;
} schedplug_node;

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/* The result of a hook. The values equal kube-scheduler's status codes. */
typedef enum schedplug_code {
  /* The node fits / the score is valid / the call worked. */
  SCHEDPLUG_SUCCESS = 0,
  /* A real internal error. A Filter Error ABORTS the pod's whole
   * scheduling cycle in kube-scheduler; use it only when the plugin cannot
   * decide, never to reject a node. */
  SCHEDPLUG_ERROR = 1,
  /* The node does not fit now; preemption may help. */
  SCHEDPLUG_UNSCHEDULABLE = 2,
  /* The node does not fit and preemption cannot change that. */
  SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE = 3,
  /* This plugin has nothing to say about this pod. */
  SCHEDPLUG_SKIP = 5
} schedplug_code;

/* Longest reason, including the terminating NUL. Longer reasons are cut. */
#define SCHEDPLUG_REASON_MAX 256u

/* A host-owned buffer for the reason that goes with a status, or for
 * create()'s error message. The plugin writes a NUL-terminated string of at
 * most `capacity` bytes into `text` (schedplug_reason_set() does that
 * safely); the host copies it after the hook returns. Leave it untouched
 * for "no reason".
 *
 * A Filter reason is shown by kube-scheduler as
 *   "0/5 nodes are available: 3 <reason>."
 * so write a short phrase such as "node(s) lack hardware encryption". */
typedef struct schedplug_reason {
  char* text;
  size_t capacity;
} schedplug_reason;

/* Copies `msg` (NUL-terminated) into `out`, cutting it to fit. */
static inline void schedplug_reason_set(schedplug_reason* out,
                                        const char* msg) {
  if (out == NULL || out->text == NULL || out->capacity == 0) return;
  size_t n = strlen(msg);
  if (n >= out->capacity) n = out->capacity - 1;
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
typedef enum schedplug_normalize_policy {
  /* Scores are already in [0, 100]; a value outside is an Error that names
   * the plugin. */
  SCHEDPLUG_NORMALIZE_NONE = 0,
  /* Min-max onto [0, 100]: the highest raw score becomes 100. */
  SCHEDPLUG_NORMALIZE_LINEAR = 1,
  /* Reversed min-max: the LOWEST raw score becomes 100 (latency, cost).
   * For LINEAR and REVERSE, when every node has the same raw score, every
   * node gets 100 (they are equally good). Results are rounded to the
   * nearest integer. */
  SCHEDPLUG_NORMALIZE_REVERSE = 2
} schedplug_normalize_policy;

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

typedef enum schedplug_log_level {
  SCHEDPLUG_LOG_ERROR = 0,
  SCHEDPLUG_LOG_WARNING = 1,
  SCHEDPLUG_LOG_INFO = 2,
  SCHEDPLUG_LOG_DEBUG = 3
} schedplug_log_level;

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
} schedplug_host;

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
  schedplug_code (*create)(const char* args_json, size_t args_len,
                           const schedplug_host* host, void** instance_out,
                           schedplug_reason* error);
  /* Frees what create() allocated. May be NULL. */
  void (*destroy)(void* instance);

  /* Optional per-pod gate, called once per pod before filter/score.
   * Return 0 when the plugin has nothing to say about this pod: its filter
   * and score are then skipped for every node (kube-scheduler's Skip).
   * NULL means the plugin applies to every pod. */
  int (*applies)(void* instance, const schedplug_pod* pod);

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
                                    size_t count, schedplug_reason* reason);
  /* Used when normalize_score is NULL. */
  schedplug_normalize_policy normalize_policy;

  /* Background work (slow I/O with its own timeouts), called every
   * refresh_period_ms on a host thread, once right after create(). A
   * failure (ERROR with a reason) is logged and retried next period. */
  schedplug_code (*refresh)(void* instance, schedplug_reason* error);
  uint32_t refresh_period_ms;

  /* SCHEDPLUG_EVENT_* bits; 0 means every node and pod event. */
  uint64_t events;
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

/* Binary search for `key` (exact, case-sensitive) in a sorted list.
 * Returns the entry or NULL. */
static inline const schedplug_kv* schedplug_kv_find(schedplug_kv_list list,
                                                    const char* key) {
  schedplug_str k = schedplug_str_of(key);
  size_t lo = 0, hi = list.count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = schedplug_str_cmp(list.items[mid].key, k);
    if (c == 0) return &list.items[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* The value of resource `name` in `list`, 0 when absent. */
static inline int64_t schedplug_resource_get(schedplug_resource_list list,
                                             const char* name) {
  schedplug_str k = schedplug_str_of(name);
  size_t lo = 0, hi = list.count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = schedplug_str_cmp(list.items[mid].name, k);
    if (c == 0) return list.items[mid].value;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SCHEDPLUG_PLUGIN_H */
