/* GOOD: a scorer with its own normalize_score (raw score = pod count * 10,
 * normalized by dividing by 10). With args {"broken":true} its normalize
 * leaves the raw values, so large ones stay out of [0, 100]. */
#include <string.h>

#include "corpus_plugin.h"

static int broken_marker;

static schedplug_code create(const char* args_json, size_t args_len,
                             const schedplug_host* host, void** instance_out,
                             schedplug_reason* error) {
  (void)args_len;
  (void)host;
  (void)error;
  /* The instance pointer carries the only setting: non-NULL = broken. */
  *instance_out =
      strstr(args_json, "\"broken\":true") != NULL ? &broken_marker : NULL;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  (void)reason;
  *out = (int64_t)node->pod_count * 10;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code normalize(void* instance, const schedplug_pod* pod,
                                schedplug_node_score* scores, size_t count,
                                schedplug_reason* reason) {
  (void)pod;
  (void)reason;
  if (instance != NULL) return SCHEDPLUG_SUCCESS;
  for (size_t i = 0; i < count; ++i) scores[i].score /= 10;
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "OwnNormalize",
    .version = "1.0.0",
    .create = create,
    .score = score,
    .normalize_score = normalize,
};
CORPUS_EXPORT(kPlugin)
