/* GOOD: a filter that rejects nodes labelled corpus/reject, keeps a small
 * malloc'd state (freed by destroy) and logs through the host. */
#include <stdlib.h>

#include "corpus_plugin.h"

typedef struct state {
  const schedplug_host* host;
} state;

static schedplug_code create(const char* args_json, size_t args_len,
                             const schedplug_host* host, void** instance_out,
                             schedplug_reason* error) {
  (void)args_json;
  (void)args_len;
  state* s = (state*)malloc(sizeof(state));
  if (s == NULL) {
    schedplug_reason_set(error, "out of memory");
    return SCHEDPLUG_ERROR;
  }
  s->host = host;
  host->log(host->context, SCHEDPLUG_LOG_INFO,
            schedplug_str_of("GoodFilter created"));
  *instance_out = s;
  return SCHEDPLUG_SUCCESS;
}

static void destroy(void* instance) { free(instance); }

static int applies(void* instance, const schedplug_pod* pod) {
  (void)instance;
  return schedplug_kv_find(pod->labels, "corpus/ignore-me") == NULL;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  if (schedplug_kv_find(node->labels, "corpus/reject") != NULL) {
    schedplug_reason_set(reason, "node(s) carry corpus/reject");
    return SCHEDPLUG_UNSCHEDULABLE;
  }
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "GoodFilter",
    .version = "1.0.0",
    .create = create,
    .destroy = destroy,
    .applies = applies,
    .filter = filter,
    .events = SCHEDPLUG_EVENT_NODE_UPDATE_LABEL | SCHEDPLUG_EVENT_NODE_ADD,
};
CORPUS_EXPORT(kPlugin)
