/* EchoReason: rejects every node for a pod annotated schedplug.io/echo,
 * with a reason that echoes the annotation's value, as a plugin that
 * quotes a tenant's input might. It cuts the reason at the buffer's last
 * byte itself, as the SDK's helper did before it cut on a character
 * boundary, so a long multi-byte value ends the reason in the middle of a
 * character. The end-to-end tests check that such a reason still reaches
 * `kubectl describe` and that the verdict holds (the pod is never placed
 * on a node the plugin rejects). Built outside plugins.d: no host loads it
 * unless a test says so. */
#include <string.h>

#include <schedplug/plugin.h>

static schedplug_str echo_key;

static schedplug_code create(const char* args_json, uint64_t args_len,
                             const schedplug_host* host, void** instance_out,
                             schedplug_reason* error) {
  (void)args_json, (void)args_len, (void)error;
  *instance_out = NULL;
  echo_key = schedplug_str_of("schedplug.io/echo");
  host->settings->hints |= SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                           SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY |
                           SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;
  host->settings->pod_annotation_keys = &echo_key;
  host->settings->pod_annotation_key_count = 1;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  static const char kPrefix[] = "refused: ";
  const schedplug_kv* echo = schedplug_pod_annotation(pod, "schedplug.io/echo");
  size_t room, n;
  (void)instance, (void)node;
  if (echo == NULL) return SCHEDPLUG_SUCCESS;
  /* Byte counts only: the cut may fall inside a character. */
  room = (size_t)reason->capacity - 1;
  n = sizeof kPrefix - 1;
  memcpy(reason->text, kPrefix, n);
  if (echo->value.len < room - n) room = n + echo->value.len;
  memcpy(reason->text + n, echo->value.data, room - n);
  reason->text[room] = '\0';
  return SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static const schedplug_plugin kDescriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "EchoReason",
    .version = "1.0.0",
    .create = create,
    .filter = filter,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kDescriptor;
}
