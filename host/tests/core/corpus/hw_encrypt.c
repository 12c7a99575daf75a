/* GOOD: a filter-only plugin named "HwEncrypt" (the check fixture): nodes
 * need the label hw.example.com/encrypt=true. */
#include "corpus_plugin.h"

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  const schedplug_kv* kv =
      schedplug_kv_find(node->labels, "hw.example.com/encrypt");
  if (kv == NULL || !schedplug_str_eq(kv->value, "true")) {
    schedplug_reason_set(reason, "node(s) lack hardware encryption");
    return SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
  }
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "HwEncrypt",
    .version = "0.3.0",
    .create = corpus_create,
    .filter = filter,
    .events = SCHEDPLUG_EVENT_NODE_UPDATE_LABEL,
};
CORPUS_EXPORT(kPlugin)
