/* NodeNumber, in C: the kube-scheduler-wasm-extension example
 * (examples/nodenumber) ported literally. It favours nodes whose name ends
 * in the same digit as the pod's spec.nodeName: such a node scores 10, any
 * other 0, and a pod whose spec.nodeName does not end in a digit matches
 * every node. Arg `reverse: true` inverts the match. */
#include <schedplug/plugin.h>
#include <stdlib.h>

typedef struct node_number {
  int32_t reverse;
} node_number;

/* The pod's suffix number, computed once per pod (PreScore in the
 * original): pod_begin's state points at one of these, or is NULL. */
static uint8_t digits[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

/* The last character of `s` as a number, or -1 when it is not a digit. */
static int last_number(schedplug_str s) {
  if (s.len == 0) return -1;
  const char last = s.data[s.len - 1];
  return last >= '0' && last <= '9' ? last - '0' : -1;
}

static schedplug_code create(const char* args, uint64_t len,
                             const schedplug_host* host, void** instance,
                             schedplug_reason* error) {
  (void)args;
  (void)len;
  if (host == NULL || !SCHEDPLUG_HAS_FIELD(host, schedplug_host, settings) ||
      !SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings, data)) {
    schedplug_reason_set(error,
                         "NodeNumber reads the pod's spec.nodeName, "
                         "which this host cannot send (ABI v1.2)");
    return SCHEDPLUG_ERROR;
  }
  node_number* self = calloc(1, sizeof *self);
  if (self == NULL) return SCHEDPLUG_ERROR;
  static const char* const known[] = {"reverse"};
  schedplug_code code =
      host->args_allow_only(host->context, host->args, known, 1, error);
  if (code != SCHEDPLUG_ERROR) {
    code = host->arg_bool(host->context, host->args, "reverse", &self->reverse,
                          error);
  }
  if (code == SCHEDPLUG_ERROR) {
    free(self);
    return code;
  }
  host->settings->data |= SCHEDPLUG_DATA_POD_NODE_NAME;
  *instance = self;
  return SCHEDPLUG_SUCCESS;
}

static void destroy(void* instance) { free(instance); }

static schedplug_code pre_score(void* instance, const schedplug_pod* pod,
                                schedplug_pod_begin_result* out,
                                schedplug_reason* reason) {
  (void)instance;
  (void)reason;
  const int podnum = last_number(schedplug_pod_node_name(pod));
  out->state = podnum < 0 ? NULL : &digits[podnum];
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)reason;
  const node_number* self = instance;
  const uint8_t* podnum = pod->state;
  /* No suffix number on the pod matches every node. */
  int match = podnum == NULL || last_number(node->name) == *podnum;
  if (self->reverse) match = !match;
  *out = match ? 10 : 0;
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "NodeNumber",
    .version = "0.1.0",
    .create = create,
    .destroy = destroy,
    .score = score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_NONE,
    .events = SCHEDPLUG_EVENT_NODE_ADD,
    .pod_begin = pre_score,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
