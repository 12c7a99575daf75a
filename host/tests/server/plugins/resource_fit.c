/* ResourceFit: the pod's requests must fit into allocatable - requested,
 * the node must have room for one more pod, and NoSchedule taints must be
 * tolerated. */
#include "common.h"

static int tolerates(const schedplug_pod* pod, const schedplug_taint* taint) {
  for (size_t i = 0; i < pod->toleration_count; ++i) {
    const schedplug_toleration* t = &pod->tolerations[i];
    const int exists = schedplug_str_eq(t->op, "Exists");
    if (t->key.len == 0 && exists) return 1;
    if (schedplug_str_cmp(t->key, taint->key) != 0) continue;
    if (t->effect.len != 0 && schedplug_str_cmp(t->effect, taint->effect) != 0)
      continue;
    if (exists || schedplug_str_cmp(t->value, taint->value) == 0) return 1;
  }
  return 0;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  for (size_t i = 0; i < node->taint_count; ++i) {
    const schedplug_taint* taint = &node->taints[i];
    if (schedplug_str_eq(taint->effect, "NoSchedule") &&
        !tolerates(pod, taint)) {
      schedplug_reason_set(reason, "node(s) had untolerated taint");
      return SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
  }
  const int64_t max_pods = schedplug_resource_get(node->allocatable, "pods");
  if (max_pods > 0 && (int64_t)node->pod_count + 1 > max_pods) {
    schedplug_reason_set(reason, "Too many pods");
    return SCHEDPLUG_UNSCHEDULABLE;
  }
  for (size_t i = 0; i < pod->requests.count; ++i) {
    const schedplug_resource* r = &pod->requests.items[i];
    int64_t alloc = 0, used = 0;
    for (size_t j = 0; j < node->allocatable.count; ++j)
      if (schedplug_str_cmp(node->allocatable.items[j].name, r->name) == 0)
        alloc = node->allocatable.items[j].value;
    for (size_t j = 0; j < node->requested.count; ++j)
      if (schedplug_str_cmp(node->requested.items[j].name, r->name) == 0)
        used = node->requested.items[j].value;
    if (alloc - used < r->value) {
      char text[SCHEDPLUG_REASON_MAX];
      snprintf(text, sizeof text, "Insufficient %.*s", (int)r->name.len,
               r->name.data);
      schedplug_reason_set(reason, text);
      return SCHEDPLUG_UNSCHEDULABLE;
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
    .name = "ResourceFit",
    .version = "0.0.1",
    .create = create,
    .filter = filter,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
