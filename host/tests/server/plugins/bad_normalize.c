/* BadNormalize: its own normalize_score leaves 1000 on the first node, so
 * the host must answer with an error naming it (never a silent clamp). */
#include "common.h"

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance, (void)pod, (void)node, (void)reason;
  *out = 7;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code normalize(void* instance, const schedplug_pod* pod,
                                schedplug_node_score* scores, size_t count,
                                schedplug_reason* reason) {
  (void)instance, (void)pod, (void)reason;
  for (size_t i = 0; i < count; ++i) scores[i].score = i == 0 ? 1000 : 50;
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
    .name = "BadNormalize",
    .version = "0.0.1",
    .create = create,
    .score = score,
    .normalize_score = normalize,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
