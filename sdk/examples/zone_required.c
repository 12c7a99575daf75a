/* ZoneRequired: only nodes with a topology.kubernetes.io/zone label. */
#include <schedplug/plugin.h>

static const char* skip_space(const char* p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) p++;
  return p;
}

/* True for "{}" (with any spacing) or no text at all. */
static int is_empty_object(const char* p, const char* end) {
  p = skip_space(p, end);
  if (p == end) return 1;
  if (*p++ != '{') return 0;
  p = skip_space(p, end);
  if (p == end || *p++ != '}') return 0;
  return skip_space(p, end) == end;
}

static schedplug_code create(const char* args, size_t len,
                             const schedplug_host* host, void** instance,
                             schedplug_reason* error) {
  (void)host;
  *instance = NULL; /* no state */
  if (!is_empty_object(args, args + len)) {
    schedplug_reason_set(error, "ZoneRequired takes no args");
    return SCHEDPLUG_ERROR;
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  if (schedplug_kv_find(node->labels, "topology.kubernetes.io/zone")) {
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
