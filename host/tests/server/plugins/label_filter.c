/* LabelFilter: the node must carry every label of the pod's node selector.
 * Applies only to pods with a node selector (tests the applies() hook).
 * A pod labelled test/filter-error=<node> makes filter() return ERROR on
 * that node (tests CODE_ERROR verdicts). */
#include "common.h"

static int applies(void* instance, const schedplug_pod* pod) {
  (void)instance;
  return pod->node_selector.count > 0;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  const schedplug_kv* err = schedplug_kv_find(pod->labels, "test/filter-error");
  if (err != NULL && schedplug_str_cmp(err->value, node->name) == 0) {
    schedplug_reason_set(reason, "simulated internal error");
    return SCHEDPLUG_ERROR;
  }
  for (size_t i = 0; i < pod->node_selector.count; ++i) {
    const schedplug_kv* want = &pod->node_selector.items[i];
    /* Binary search by the selector's key (a view, not NUL-terminated). */
    size_t lo = 0, hi = node->labels.count;
    const schedplug_kv* found = NULL;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      int c = schedplug_str_cmp(node->labels.items[mid].key, want->key);
      if (c == 0) {
        found = &node->labels.items[mid];
        break;
      }
      if (c < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (found == NULL || schedplug_str_cmp(found->value, want->value) != 0) {
      schedplug_reason_set(reason, "node(s) didn't match the node selector");
      return SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
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
    .name = "LabelFilter",
    .version = "0.0.1",
    .create = create,
    .applies = applies,
    .filter = filter,
    .events = SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
