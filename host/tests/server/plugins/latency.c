/* Latency: a raw "latency in ms" per node (its test/latency label, or a
 * hash of its name), lower is better: the REVERSE policy. Skips pods
 * labelled test/no-latency (applies() hook for Score). A node labelled
 * test/score-error=true makes score() fail. */
#include "common.h"

static int applies(void* instance, const schedplug_pod* pod) {
  (void)instance;
  return schedplug_kv_find(pod->labels, "test/no-latency") == NULL;
}

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance, (void)pod;
  if (schedplug_kv_find(node->labels, "test/score-error") != NULL) {
    schedplug_reason_set(reason, "latency probe unavailable");
    return SCHEDPLUG_ERROR;
  }
  const schedplug_kv* l = schedplug_kv_find(node->labels, "test/latency");
  if (l != NULL) {
    char text[32];
    size_t n = l->value.len < sizeof text - 1 ? l->value.len : sizeof text - 1;
    memcpy(text, l->value.data, n);
    text[n] = '\0';
    *out = strtoll(text, NULL, 10);
  } else {
    *out = (int64_t)(test_hash(node->name) % 5000u);
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code create(const char* args, size_t len,
                             const schedplug_host* host, void** out,
                             schedplug_reason* error) {
  (void)args, (void)len, (void)host, (void)error;
  *out = NULL;
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "Latency",
    .version = "0.0.1",
    .create = create,
    .applies = applies,
    .score = score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_REVERSE,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
