/* SpreadScore: prefers nodes with fewer pods, with its own
 * normalize_score (100 for the emptiest node, 0 for the fullest). */
#include "common.h"

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance, (void)pod, (void)reason;
  *out = node->pod_count;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code normalize(void* instance, const schedplug_pod* pod,
                                schedplug_node_score* scores, size_t count,
                                schedplug_reason* reason) {
  (void)instance, (void)pod, (void)reason;
  int64_t max = 0;
  for (size_t i = 0; i < count; ++i)
    if (scores[i].score > max) max = scores[i].score;
  for (size_t i = 0; i < count; ++i)
    scores[i].score = max == 0 ? 100 : 100 - scores[i].score * 100 / max;
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
    .name = "SpreadScore",
    .version = "0.0.1",
    .create = create,
    .score = score,
    .normalize_score = normalize,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
