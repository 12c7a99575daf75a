/* HookA / HookB (PROBE_NAME): every ABI v1.6 hook, driven by the pod's
 * labels, each call appended to the file of arg "log_file" as
 *   "<plugin> <hook> <pod uid> <node name> <node label zone or ->"
 * so a test sees which hooks ran, in which order, on which node view.
 * Labels (each names the plugin it applies to, e.g. fail-HookA):
 *   fail-<plugin>: reserve | permit | pre_bind | pre_enqueue  -> that hook
 *     returns UNSCHEDULABLE (pre_enqueue: UNSCHEDULABLE_AND_UNRESOLVABLE)
 *     with the reason "<plugin> refuses <hook>";
 *   wait-<plugin>: N -> permit() answers WAIT for N ms (0: the most);
 *   allow-<plugin> / reject-<plugin>: a uid -> permit() first calls
 *     permit_allow / permit_reject for it and logs
 *     "<plugin> allow|reject <uid> <code>";
 *   patch-<plugin>: good | conflict | bad-key | bad-label-value |
 *     long-annotation | too-many -> what pre_bind() sets (good: annotation
 *     example.com/<plugin> = <node>, annotation example.com/shared =
 *     "agreed" and label example.com/assigned = <node>; conflict: label
 *     example.com/assigned = <plugin>); it returns ERROR when the host
 *     refused an entry, unless the label is "ignore-refusal";
 *   sleep-<plugin>: N -> every hook sleeps N ms first.
 * PROBE_V15_SIZE: the descriptor is v1.5's size (the hooks are set beyond
 * it, so a host that read them would be wrong). PROBE_UNRESERVE_ONLY: only
 * unreserve(), which the host refuses at load. PROBE_NO_HOOKS: none of
 * them (filter only). */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include "../plugins/common.h"

#ifndef PROBE_NAME
#define PROBE_NAME "HookA"
#endif

/* The variants without some hooks build the same source. */
#define PROBE_HOOK static __attribute__((unused))

typedef struct {
  const schedplug_host* host;
  char log_file[512];
} probe;

static void log_line(const probe* self, const char* line) {
  const int fd = open(self->log_file, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd < 0) return;
  const size_t len = strlen(line);
  if (write(fd, line, len) != (ssize_t)len) {
    /* The test sees the missing line. */
  }
  close(fd);
}

/* The pod's label `<what>-<plugin>`, or NULL. */
static const schedplug_kv* label_for(const schedplug_pod* pod,
                                     const char* what) {
  char key[64];
  snprintf(key, sizeof key, "%s-%s", what, PROBE_NAME);
  return schedplug_pod_label(pod, key);
}

static int label_is(const schedplug_pod* pod, const char* what,
                    const char* value) {
  const schedplug_kv* kv = label_for(pod, what);
  return kv != NULL && schedplug_str_eq(kv->value, value);
}

static long label_number(const schedplug_pod* pod, const char* what) {
  const schedplug_kv* kv = label_for(pod, what);
  if (kv == NULL) return -1;
  char text[32];
  const size_t n = kv->value.len < sizeof text - 1 ? kv->value.len : 0;
  memcpy(text, kv->value.data, n);
  text[n] = '\0';
  return strtol(text, NULL, 10);
}

static void call_logged(const probe* self, const char* hook,
                        const schedplug_pod* pod, const schedplug_node* node) {
  const long sleep_ms = label_number(pod, "sleep");
  if (sleep_ms > 0) {
    struct timespec t = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
  }
  char line[512];
  const schedplug_kv* zone =
      node != NULL ? schedplug_node_label(node, "zone") : NULL;
  snprintf(line, sizeof line, "%s %s %.*s %.*s %.*s\n", PROBE_NAME, hook,
           (int)pod->uid.len, pod->uid.data,
           node != NULL ? (int)node->name.len : 1,
           node != NULL ? node->name.data : "-",
           zone != NULL ? (int)zone->value.len : 1,
           zone != NULL ? zone->value.data : "-");
  log_line(self, line);
}

static schedplug_code refuse(const char* hook, const schedplug_pod* pod,
                             schedplug_code code, schedplug_reason* reason) {
  if (!label_is(pod, "fail", hook)) return SCHEDPLUG_SUCCESS;
  char text[128];
  snprintf(text, sizeof text, "%s refuses %s", PROBE_NAME, hook);
  schedplug_reason_set(reason, text);
  return code;
}

static schedplug_code create(const char* args, size_t len,
                             const schedplug_host* host, void** out,
                             schedplug_reason* error) {
  (void)len;
  probe* self = (probe*)calloc(1, sizeof *self);
  if (self == NULL) return SCHEDPLUG_ERROR;
  self->host = host;
  test_json_str(args, "log_file", self->log_file, sizeof self->log_file);
  if (self->log_file[0] == '\0') {
    free(self);
    schedplug_reason_set(error, PROBE_NAME " needs the arg log_file");
    return SCHEDPLUG_ERROR;
  }
  *out = self;
  return SCHEDPLUG_SUCCESS;
}

static void destroy(void* instance) { free(instance); }

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance, (void)pod, (void)node, (void)reason;
  return SCHEDPLUG_SUCCESS;
}

PROBE_HOOK schedplug_code reserve(void* instance, const schedplug_pod* pod,
                                  const schedplug_node* node,
                                  schedplug_reason* reason) {
  call_logged((const probe*)instance, "reserve", pod, node);
  return refuse("reserve", pod, SCHEDPLUG_UNSCHEDULABLE, reason);
}

PROBE_HOOK void unreserve(void* instance, const schedplug_pod* pod,
                          const schedplug_node* node) {
  call_logged((const probe*)instance, "unreserve", pod, node);
}

static void decide(const probe* self, const schedplug_pod* pod,
                   const char* what) {
  const schedplug_kv* uid = label_for(pod, what);
  if (uid == NULL) return;
  schedplug_code code;
  if (what[0] == 'a') {
    code = self->host->permit_allow(self->host->context, uid->value);
  } else {
    code = self->host->permit_reject(self->host->context, uid->value,
                                     schedplug_str_of("no room left"));
  }
  char line[256];
  snprintf(line, sizeof line, "%s %s %.*s %d\n", PROBE_NAME, what,
           (int)uid->value.len, uid->value.data, (int)code);
  log_line(self, line);
}

PROBE_HOOK schedplug_code permit(void* instance, const schedplug_pod* pod,
                                 const schedplug_node* node,
                                 schedplug_permit_result* out,
                                 schedplug_reason* reason) {
  const probe* self = (const probe*)instance;
  call_logged(self, "permit", pod, node);
  decide(self, pod, "allow");
  decide(self, pod, "reject");
  const long wait_ms = label_number(pod, "wait");
  if (wait_ms >= 0) {
    out->timeout_ms = (uint64_t)wait_ms;
    return SCHEDPLUG_WAIT;
  }
  return refuse("permit", pod, SCHEDPLUG_UNSCHEDULABLE, reason);
}

PROBE_HOOK schedplug_code pre_bind(void* instance, const schedplug_pod* pod,
                                   const schedplug_node* node,
                                   schedplug_pod_patch* patch,
                                   schedplug_reason* reason) {
  call_logged((const probe*)instance, "pre_bind", pod, node);
  schedplug_code code = SCHEDPLUG_SUCCESS;
  char key[128];
  if (label_is(pod, "patch", "good") ||
      label_is(pod, "patch", "ignore-refusal")) {
    snprintf(key, sizeof key, "example.com/%s", PROBE_NAME);
    char value[256];
    snprintf(value, sizeof value, "%.*s", (int)node->name.len, node->name.data);
    code |= patch->set_annotation(patch->context, schedplug_str_of(key),
                                  schedplug_str_of(value));
    code |= patch->set_annotation(patch->context,
                                  schedplug_str_of("example.com/shared"),
                                  schedplug_str_of("agreed"));
    code |= patch->set_label(patch->context,
                             schedplug_str_of("example.com/assigned"),
                             schedplug_str_of(value));
  }
  if (label_is(pod, "patch", "conflict")) {
    code |= patch->set_label(patch->context,
                             schedplug_str_of("example.com/assigned"),
                             schedplug_str_of(PROBE_NAME));
  }
  if (label_is(pod, "patch", "bad-key") ||
      label_is(pod, "patch", "ignore-refusal")) {
    code |= patch->set_annotation(patch->context,
                                  schedplug_str_of("Bad_Prefix.com/x"),
                                  schedplug_str_of("v"));
  }
  if (label_is(pod, "patch", "bad-label-value")) {
    code |= patch->set_label(patch->context, schedplug_str_of("example.com/l"),
                             schedplug_str_of("0,3,5"));
  }
  if (label_is(pod, "patch", "long-annotation")) {
    static char big[SCHEDPLUG_POD_PATCH_VALUE_MAX + 2];
    memset(big, 'x', SCHEDPLUG_POD_PATCH_VALUE_MAX + 1);
    code |= patch->set_annotation(patch->context, schedplug_str_of("big"),
                                  schedplug_str_of(big));
  }
  if (label_is(pod, "patch", "too-many")) {
    for (unsigned i = 0; i <= SCHEDPLUG_POD_PATCH_MAX; ++i) {
      snprintf(key, sizeof key, "example.com/k%u", i);
      code |= patch->set_label(patch->context, schedplug_str_of(key),
                               schedplug_str_of("v"));
    }
  }
  if (code != SCHEDPLUG_SUCCESS && !label_is(pod, "patch", "ignore-refusal")) {
    schedplug_reason_set(reason, PROBE_NAME " could not write its patch");
    return SCHEDPLUG_ERROR;
  }
  return refuse("pre_bind", pod, SCHEDPLUG_ERROR, reason);
}

PROBE_HOOK schedplug_code pre_enqueue(void* instance, const schedplug_pod* pod,
                                      schedplug_reason* reason) {
  call_logged((const probe*)instance, "pre_enqueue", pod, NULL);
  return refuse("pre_enqueue", pod, SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
                reason);
}

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
#ifdef PROBE_V15_SIZE
    .struct_size = offsetof(schedplug_plugin, reserve),
#else
    .struct_size = sizeof(schedplug_plugin),
#endif
    .name = PROBE_NAME,
    .version = "0.0.1",
    .create = create,
    .destroy = destroy,
    .filter = filter,
#if !defined(PROBE_UNRESERVE_ONLY) && !defined(PROBE_NO_HOOKS)
    .reserve = reserve,
    .permit = permit,
    .pre_bind = pre_bind,
    .pre_enqueue = pre_enqueue,
#endif
#ifndef PROBE_NO_HOOKS
    .unreserve = unreserve,
#endif
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
