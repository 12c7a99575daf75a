/* GOOD: a scorer returning the node's pod count as a raw score, with the
 * REVERSE policy (fewest pods -> 100), and a refresh hook. */
#include "corpus_plugin.h"

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  (void)reason;
  *out = (int64_t)node->pod_count;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code refresh(void* instance, schedplug_reason* error) {
  (void)instance;
  (void)error;
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "GoodScorer",
    .version = "2.1.0",
    .create = corpus_create,
    .score = score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_REVERSE,
    .refresh = refresh,
    .refresh_period_ms = 5000,
    .events = SCHEDPLUG_EVENT_POD_DELETE | SCHEDPLUG_EVENT_NODE_ADD,
};
CORPUS_EXPORT(kPlugin)
