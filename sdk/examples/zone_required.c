/* ZoneRequired: only nodes with a topology.kubernetes.io/zone label. */
#include <schedplug/plugin.h>

/* Takes no args: the host's typed-args service (ABI v1.1) rejects any key,
 * with a message naming it. */
static schedplug_code create(const char* args, uint64_t len,
                             const schedplug_host* host, void** instance,
                             schedplug_reason* error) {
  (void)args;
  (void)len;
  *instance = NULL; /* no state */
  if (host != NULL &&
      SCHEDPLUG_HAS_FIELD(host, schedplug_host, args_allow_only)) {
    return host->args_allow_only(host->context, host->args, NULL, 0, error);
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  if (schedplug_node_label(node, "topology.kubernetes.io/zone")) {
    return SCHEDPLUG_SUCCESS;
  }
  schedplug_reason_set(reason, "node(s) had no zone label");
  return SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "ZoneRequired",
    .version = "0.1.0",
    .create = create,
    .filter = filter,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
