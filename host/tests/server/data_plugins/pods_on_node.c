/* PodsOnNode: scores a node by the number of pods already on it that share
 * the pod's "app" label (every listed pod when the pod has none), from the
 * node's compact pod list (ABI v1.2, SCHEDPLUG_DATA_NODE_PODS, declared in
 * create()). LINEAR: the node with the most such pods gets 100. */
#include <string.h>

#include "schedplug/plugin.h"

static schedplug_code create(const char* args, uint64_t len,
                             const schedplug_host* host, void** out,
                             schedplug_reason* error) {
  (void)args, (void)len;
  *out = NULL;
  if (!SCHEDPLUG_HAS_FIELD(host, schedplug_host, settings) ||
      !SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings, data)) {
    schedplug_reason_set(error, "PodsOnNode needs a host with ABI v1.2");
    return SCHEDPLUG_ERROR;
  }
  host->settings->data |= SCHEDPLUG_DATA_NODE_PODS;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance, (void)reason;
  const schedplug_kv* app = schedplug_pod_label(pod, "app");
  int64_t n = 0;
  for (uint64_t i = 0; i < schedplug_node_pod_list_count(node); ++i) {
    const schedplug_node_pod* p = schedplug_node_pod_at(node, i);
    if (app == NULL) {
      ++n;
      continue;
    }
    const schedplug_kv* other =
        schedplug_kv_find_sized(p->labels, schedplug_node_kv_size(node), "app");
    if (other != NULL && other->value.len == app->value.len &&
        memcmp(other->value.data, app->value.data, app->value.len) == 0) {
      ++n;
    }
  }
  *out = n;
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "PodsOnNode",
    .version = "0.0.1",
    .create = create,
    .score = score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_LINEAR,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
