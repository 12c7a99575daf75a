/* PodState: the per-pod hook (pod_begin / pod_end, ABI v1.1).
 *
 * pod_begin reads the pod's label "gate" ("no-filter", "no-score", "none")
 * into skip bits and fails with ERROR on label "fail"; otherwise it
 * allocates a state holding the pod's name and its "weight" label. filter
 * and score read pod->state (and fail when it is missing). refresh()
 * reports the counters ("begun=B ended=E") as its error text, so the tests
 * can see that every state was released. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedplug/plugin.h"

#define STATE_MAGIC 0x50534154u

typedef struct pod_state {
  uint32_t magic;
  char name[64];
  int64_t weight;
} pod_state;

static atomic_long g_begun;
static atomic_long g_ended;

static schedplug_code ps_create(const char* args_json, uint64_t args_len,
                                const schedplug_host* host, void** instance_out,
                                schedplug_reason* error) {
  (void)args_json;
  (void)args_len;
  (void)host;
  (void)error;
  *instance_out = NULL;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code ps_pod_begin(void* instance, const schedplug_pod* pod,
                                   schedplug_pod_begin_result* out,
                                   schedplug_reason* reason) {
  (void)instance;
  const schedplug_kv* gate = schedplug_pod_label(pod, "gate");
  if (gate != NULL && schedplug_str_eq(gate->value, "fail")) {
    schedplug_reason_set(reason, "label gate=fail");
    return SCHEDPLUG_ERROR;
  }
  if (gate != NULL && schedplug_str_eq(gate->value, "no-filter")) {
    out->skip = SCHEDPLUG_SKIP_FILTER;
  } else if (gate != NULL && schedplug_str_eq(gate->value, "no-score")) {
    out->skip = SCHEDPLUG_SKIP_SCORE;
  } else if (gate != NULL && schedplug_str_eq(gate->value, "none")) {
    out->skip = SCHEDPLUG_SKIP_FILTER | SCHEDPLUG_SKIP_SCORE;
  }
  pod_state* state = calloc(1, sizeof *state);
  if (state == NULL) return SCHEDPLUG_ERROR;
  state->magic = STATE_MAGIC;
  snprintf(state->name, sizeof state->name, "%.*s", (int)pod->name.len,
           pod->name.data);
  const schedplug_kv* weight = schedplug_pod_label(pod, "weight");
  state->weight = 1;
  if (weight != NULL) {
    state->weight = 0;
    for (uint64_t i = 0; i < weight->value.len; ++i) {
      state->weight = state->weight * 10 + (weight->value.data[i] - '0');
    }
  }
  out->state = state;
  atomic_fetch_add(&g_begun, 1);
  return SCHEDPLUG_SUCCESS;
}

static void ps_pod_end(void* instance, void* state) {
  (void)instance;
  pod_state* s = state;
  if (s != NULL) s->magic = 0;
  free(s);
  atomic_fetch_add(&g_ended, 1);
}

static const pod_state* state_of(const schedplug_pod* pod) {
  if (!SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, state)) return NULL;
  const pod_state* s = pod->state;
  return s != NULL && s->magic == STATE_MAGIC ? s : NULL;
}

static schedplug_code ps_filter(void* instance, const schedplug_pod* pod,
                                const schedplug_node* node,
                                schedplug_reason* reason) {
  (void)instance;
  const pod_state* s = state_of(pod);
  if (s == NULL) {
    schedplug_reason_set(reason, "no pod state");
    return SCHEDPLUG_ERROR;
  }
  if (schedplug_node_label(node, "reject") != NULL) {
    char text[128];
    snprintf(text, sizeof text, "node(s) reject %s", s->name);
    schedplug_reason_set(reason, text);
    return SCHEDPLUG_UNSCHEDULABLE;
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code ps_score(void* instance, const schedplug_pod* pod,
                               const schedplug_node* node, int64_t* score,
                               schedplug_reason* reason) {
  (void)instance;
  const pod_state* s = state_of(pod);
  if (s == NULL) {
    schedplug_reason_set(reason, "no pod state");
    return SCHEDPLUG_ERROR;
  }
  *score = s->weight * (int64_t)node->pod_count;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code ps_refresh(void* instance, schedplug_reason* error) {
  (void)instance;
  char text[64];
  snprintf(text, sizeof text, "begun=%ld ended=%ld", atomic_load(&g_begun),
           atomic_load(&g_ended));
  schedplug_reason_set(error, text);
  return SCHEDPLUG_ERROR;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "PodState",
    .version = "1.1.0",
    .create = ps_create,
    .filter = ps_filter,
    .score = ps_score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_LINEAR,
    .refresh = ps_refresh,
    .refresh_period_ms = 60000,
    .pod_begin = ps_pod_begin,
    .pod_end = ps_pod_end,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kPlugin;
}
