/* FreeCpu: scores a node by its free CPU in millicores after placing the
 * pod (raw values in the thousands), normalized by the host with the
 * LINEAR policy. Also a trivial filter so profiles can run three filters:
 * it rejects nodes labelled test/cordon=true. */
#include "common.h"

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance, (void)pod;
  const schedplug_kv* c = schedplug_kv_find(node->labels, "test/cordon");
  if (c != NULL && schedplug_str_eq(c->value, "true")) {
    schedplug_reason_set(reason, "node(s) were cordoned");
    return SCHEDPLUG_UNSCHEDULABLE;
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance, (void)reason;
  *out = schedplug_resource_get(node->allocatable, "cpu") -
         schedplug_resource_get(node->requested, "cpu") -
         schedplug_resource_get(pod->requests, "cpu");
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
    .name = "FreeCpu",
    .version = "0.0.1",
    .create = create,
    .filter = filter,
    .score = score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_LINEAR,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
