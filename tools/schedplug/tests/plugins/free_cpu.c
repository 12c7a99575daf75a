/* FreeCpu: a test plugin for `schedplug simulate` that reads the node's
 * load. Filter: the pod's cpu request must fit in the node's free cpu
 * (allocatable - requested), like NodeResourcesFit. Score: the free cpu
 * left after placing the pod, in millicores, normalized linearly (most free
 * cpu -> 100). Pods labelled sim/ignore are not its business (applies). */
#include "schedplug/plugin.h"

static schedplug_code create(const char* args_json, size_t args_len,
                             const schedplug_host* host, void** instance_out,
                             schedplug_reason* error) {
  (void)args_json;
  (void)args_len;
  (void)host;
  (void)error;
  *instance_out = NULL;
  return SCHEDPLUG_SUCCESS;
}

static int applies(void* instance, const schedplug_pod* pod) {
  (void)instance;
  return schedplug_pod_label(pod, "sim/ignore") == NULL;
}

static int64_t free_after(const schedplug_pod* pod,
                          const schedplug_node* node) {
  return schedplug_node_allocatable(node, "cpu") -
         schedplug_node_requested(node, "cpu") -
         schedplug_pod_request(pod, "cpu");
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  if (free_after(pod, node) < 0) {
    schedplug_reason_set(reason, "Insufficient free cpu");
    return SCHEDPLUG_UNSCHEDULABLE;
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance;
  (void)reason;
  *out = free_after(pod, node);
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "FreeCpu",
    .version = "1.0.0",
    .create = create,
    .applies = applies,
    .filter = filter,
    .score = score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_LINEAR,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kPlugin;
}
