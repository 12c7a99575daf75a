/* DedicatedNodes 2.0.0, a build that rejects every node: what an admin
 * might roll out by mistake. The end-to-end tests restart schedplug-host
 * with it in place of the sample DedicatedNodes while replicas are being
 * scheduled, to show that no verdict the old build gave is used after the
 * restart. It takes the sample's args and makes the sample's promises
 * (hints and declared pod key), so the scheduler sees the same plugin.
 * Built outside plugins.d: no host loads it unless a test says so. */
#include <schedplug/plugin.h>

static schedplug_str annotation_key;

static schedplug_code create(const char* args_json, uint64_t args_len,
                             const schedplug_host* host, void** instance_out,
                             schedplug_reason* error) {
  (void)args_json, (void)args_len;
  *instance_out = NULL;
  static const char* const kKnown[] = {"nodeLabel", "podAnnotation"};
  if (host->args_allow_only(host->context, host->args, kKnown, 2, error) !=
      SCHEDPLUG_SUCCESS) {
    return SCHEDPLUG_ERROR;
  }
  annotation_key = schedplug_str_of("schedplug.io/dedicated-ok");
  if (host->arg_string(host->context, host->args, "podAnnotation",
                       &annotation_key, error) == SCHEDPLUG_ERROR) {
    return SCHEDPLUG_ERROR;
  }
  host->settings->hints |= SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                           SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY |
                           SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;
  host->settings->pod_annotation_keys = &annotation_key;
  host->settings->pod_annotation_key_count = 1;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance, (void)pod, (void)node;
  schedplug_reason_set(reason, "DedicatedNodes 2.0.0 rejects every node");
  return SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static const schedplug_plugin kDescriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "DedicatedNodes",
    .version = "2.0.0",
    .create = create,
    .filter = filter,
    .events = SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kDescriptor;
}
