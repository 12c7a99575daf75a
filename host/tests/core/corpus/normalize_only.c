/* BROKEN: implements NormalizeScore without Score. */
#include "corpus_plugin.h"

static schedplug_code normalize(void* instance, const schedplug_pod* pod,
                                schedplug_node_score* scores, size_t count,
                                schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  (void)scores;
  (void)count;
  (void)reason;
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "NormalizeOnly",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = corpus_pass,
    .normalize_score = normalize,
};
CORPUS_EXPORT(kPlugin)
