/* AbiProbe: one plugin source, built twice -- against the frozen v1.0
 * header (sdk/tests/abi/v1.0) and against today's plugin.h -- so the tests
 * can show that both builds behave identically on this host, and that the
 * build against today's header still works for a host that only knows
 * v1.0 (views without the v1.1 element sizes).
 *
 * It uses every v1.0 feature: args (their length), the host log, applies,
 * filter on labels / taints / tolerations / resources, score,
 * normalize_score and refresh. */
#include <stdlib.h>
#include <string.h>

#include "schedplug/plugin.h"

#ifdef SCHEDPLUG_HAS_FIELD
/* v1.1 and later: index with the element sizes the host sends. */
#define POD_LABEL(pod, key) schedplug_pod_label(pod, key)
#define POD_ANNOTATION(pod, key) schedplug_pod_annotation(pod, key)
#define POD_REQUEST(pod, name) schedplug_pod_request(pod, name)
#define POD_TOLERATION(pod, i) schedplug_pod_toleration(pod, i)
#define NODE_LABEL(node, key) schedplug_node_label(node, key)
#define NODE_ALLOCATABLE(node, name) schedplug_node_allocatable(node, name)
#define NODE_REQUESTED(node, name) schedplug_node_requested(node, name)
#define NODE_TAINT(node, i) schedplug_node_taint(node, i)
#define SCORE_AT(pod, scores, i) schedplug_node_score_at(pod, scores, i)
#define PROBE_VERSION "1.1.0"
#else
/* v1.0: the only helpers there were. */
#define POD_LABEL(pod, key) schedplug_kv_find((pod)->labels, key)
#define POD_ANNOTATION(pod, key) schedplug_kv_find((pod)->annotations, key)
#define POD_REQUEST(pod, name) schedplug_resource_get((pod)->requests, name)
#define POD_TOLERATION(pod, i) (&(pod)->tolerations[i])
#define NODE_LABEL(node, key) schedplug_kv_find((node)->labels, key)
#define NODE_ALLOCATABLE(node, name) \
  schedplug_resource_get((node)->allocatable, name)
#define NODE_REQUESTED(node, name) \
  schedplug_resource_get((node)->requested, name)
#define NODE_TAINT(node, i) (&(node)->taints[i])
#define SCORE_AT(pod, scores, i) ((void)(pod), &(scores)[i])
#define PROBE_VERSION "1.0.0"
#endif

typedef struct probe {
  int64_t bonus;     /* the length of the args JSON */
  int64_t refreshes; /* refresh() calls so far */
} probe;

static schedplug_code probe_create(const char* args_json, uint64_t args_len,
                                   const schedplug_host* host,
                                   void** instance_out,
                                   schedplug_reason* error) {
  (void)args_json;
  if (args_len > 100) {
    schedplug_reason_set(error, "args longer than 100 bytes");
    return SCHEDPLUG_ERROR;
  }
  probe* self = calloc(1, sizeof *self);
  if (self == NULL) {
    schedplug_reason_set(error, "out of memory");
    return SCHEDPLUG_ERROR;
  }
  self->bonus = (int64_t)args_len;
  if (host != NULL && host->log != NULL) {
    host->log(host->context, SCHEDPLUG_LOG_DEBUG,
              schedplug_str_of("AbiProbe created"));
  }
  *instance_out = self;
  return SCHEDPLUG_SUCCESS;
}

static void probe_destroy(void* instance) { free(instance); }

static int32_t probe_applies(void* instance, const schedplug_pod* pod) {
  (void)instance;
  return POD_ANNOTATION(pod, "probe/skip") == NULL;
}

static int tolerated(const schedplug_pod* pod, const schedplug_taint* t) {
  for (uint64_t i = 0; i < pod->toleration_count; ++i) {
    const schedplug_toleration* tol = POD_TOLERATION(pod, i);
    if (schedplug_str_cmp(tol->key, t->key) != 0) continue;
    if (tol->effect.len != 0 && schedplug_str_cmp(tol->effect, t->effect) != 0)
      continue;
    if (schedplug_str_eq(tol->op, "Exists")) return 1;
    if (schedplug_str_cmp(tol->value, t->value) == 0) return 1;
  }
  return 0;
}

static schedplug_code probe_filter(void* instance, const schedplug_pod* pod,
                                   const schedplug_node* node,
                                   schedplug_reason* reason) {
  (void)instance;
  const schedplug_kv* want = POD_LABEL(pod, "zone");
  if (want != NULL) {
    const schedplug_kv* have = NODE_LABEL(node, "zone");
    if (have == NULL || schedplug_str_cmp(have->value, want->value) != 0) {
      schedplug_reason_set(reason, "node(s) in another zone");
      return SCHEDPLUG_UNSCHEDULABLE;
    }
  }
  for (uint64_t i = 0; i < node->taint_count; ++i) {
    const schedplug_taint* t = NODE_TAINT(node, i);
    if (schedplug_str_eq(t->effect, "NoSchedule") && !tolerated(pod, t)) {
      schedplug_reason_set(reason, "node(s) had an untolerated taint");
      return SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
  }
  if (POD_REQUEST(pod, "cpu") >
      NODE_ALLOCATABLE(node, "cpu") - NODE_REQUESTED(node, "cpu")) {
    schedplug_reason_set(reason, "node(s) lack cpu");
    return SCHEDPLUG_UNSCHEDULABLE;
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code probe_score(void* instance, const schedplug_pod* pod,
                                  const schedplug_node* node, int64_t* score,
                                  schedplug_reason* reason) {
  const probe* self = instance;
  if (POD_LABEL(pod, "probe/fail-score") != NULL) {
    schedplug_reason_set(reason, "asked to fail");
    return SCHEDPLUG_ERROR;
  }
  *score = NODE_ALLOCATABLE(node, "cpu") - NODE_REQUESTED(node, "cpu") -
           POD_REQUEST(pod, "cpu") + self->bonus + (int64_t)node->pod_count;
  return SCHEDPLUG_SUCCESS;
}

/* The highest raw score becomes 100, the others proportionally (floor). */
static schedplug_code probe_normalize(void* instance, const schedplug_pod* pod,
                                      schedplug_node_score* scores,
                                      uint64_t count,
                                      schedplug_reason* reason) {
  (void)instance;
  int64_t max = 1;
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t s = SCORE_AT(pod, scores, i)->score;
    if (s > max) max = s;
  }
  for (uint64_t i = 0; i < count; ++i) {
    schedplug_node_score* s = SCORE_AT(pod, scores, i);
    if (s->score < 0) {
      schedplug_reason_set(reason, "negative raw score");
      return SCHEDPLUG_ERROR;
    }
    s->score = s->score * 100 / max;
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code probe_refresh(void* instance, schedplug_reason* error) {
  probe* self = instance;
  self->refreshes++;
  if (self->refreshes % 2 == 0) {
    schedplug_reason_set(error, "every second refresh fails");
    return SCHEDPLUG_ERROR;
  }
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "AbiProbe",
    .version = PROBE_VERSION,
    .create = probe_create,
    .destroy = probe_destroy,
    .applies = probe_applies,
    .filter = probe_filter,
    .score = probe_score,
    .normalize_score = probe_normalize,
    .refresh = probe_refresh,
    .refresh_period_ms = 1500,
    .events = SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_TAINT,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kPlugin;
}
