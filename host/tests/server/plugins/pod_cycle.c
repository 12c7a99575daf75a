/* PodCycle: per-pod state (pod_begin / pod_end) seen through the server.
 *
 * pod_begin numbers each state it creates (1, 2, ... per instance) and
 * appends "begin <pod> <n>" to the file of arg "log_file"; pod_end appends
 * "end <pod> <n>", so a test can check that every state ends exactly once
 * and when. Label "gate" on the pod: "no-filter" / "no-score" shut that
 * gate, "none" both, "fail" fails pod_begin. filter() rejects nodes
 * labelled "reject" with "node(s) reject <pod> (state <n>)" and fails when
 * pod->state is missing; score() returns n (policy NONE), so a test sees
 * which state a call got. */
#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common.h"

#define STATE_MAGIC 0x50435943u

typedef struct {
  atomic_long begun;
  char log_file[512];
} cycle_plugin;

typedef struct {
  uint32_t magic;
  long n;
  char name[64];
} pod_state;

static void log_line(const cycle_plugin* self, const char* what,
                     const pod_state* s) {
  char line[128];
  const int len =
      snprintf(line, sizeof line, "%s %s %ld\n", what, s->name, s->n);
  const int fd = open(self->log_file, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd < 0) return;
  /* One write per line: O_APPEND keeps concurrent lines whole. */
  if (write(fd, line, (size_t)len) != len) {
    /* The test sees the missing line. */
  }
  close(fd);
}

static schedplug_code create(const char* args, size_t len,
                             const schedplug_host* host, void** out,
                             schedplug_reason* error) {
  (void)len, (void)host;
  cycle_plugin* self = (cycle_plugin*)calloc(1, sizeof *self);
  if (self == NULL) return SCHEDPLUG_ERROR;
  test_json_str(args, "log_file", self->log_file, sizeof self->log_file);
  if (self->log_file[0] == '\0') {
    free(self);
    schedplug_reason_set(error, "PodCycle needs the arg log_file");
    return SCHEDPLUG_ERROR;
  }
  *out = self;
  return SCHEDPLUG_SUCCESS;
}

static void destroy(void* instance) { free(instance); }

static schedplug_code pod_begin(void* instance, const schedplug_pod* pod,
                                schedplug_pod_begin_result* out,
                                schedplug_reason* reason) {
  cycle_plugin* self = (cycle_plugin*)instance;
  const schedplug_kv* gate = schedplug_pod_label(pod, "gate");
  if (gate != NULL && schedplug_str_eq(gate->value, "fail")) {
    schedplug_reason_set(reason, "label gate=fail");
    return SCHEDPLUG_ERROR;
  }
  if (gate != NULL && schedplug_str_eq(gate->value, "no-filter")) {
    out->skip = SCHEDPLUG_SKIP_FILTER;
  } else if (gate != NULL && schedplug_str_eq(gate->value, "no-score")) {
    out->skip = SCHEDPLUG_SKIP_SCORE;
  } else if (gate != NULL && schedplug_str_eq(gate->value, "none")) {
    out->skip = SCHEDPLUG_SKIP_FILTER | SCHEDPLUG_SKIP_SCORE;
  }
  pod_state* s = (pod_state*)calloc(1, sizeof *s);
  if (s == NULL) return SCHEDPLUG_ERROR;
  s->magic = STATE_MAGIC;
  s->n = atomic_fetch_add(&self->begun, 1) + 1;
  snprintf(s->name, sizeof s->name, "%.*s", (int)pod->name.len, pod->name.data);
  log_line(self, "begin", s);
  out->state = s;
  return SCHEDPLUG_SUCCESS;
}

static void pod_end(void* instance, void* state) {
  pod_state* s = (pod_state*)state;
  if (s == NULL || s->magic != STATE_MAGIC) {
    /* Released twice, or never ours: leave a line the test refuses. */
    pod_state bad = {0, -1, "INVALID"};
    log_line((const cycle_plugin*)instance, "end", &bad);
    return;
  }
  log_line((const cycle_plugin*)instance, "end", s);
  s->magic = 0;
  free(s);
}

static const pod_state* state_of(const schedplug_pod* pod) {
  if (!SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, state)) return NULL;
  const pod_state* s = (const pod_state*)pod->state;
  return s != NULL && s->magic == STATE_MAGIC ? s : NULL;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  const pod_state* s = state_of(pod);
  if (s == NULL) {
    schedplug_reason_set(reason, "no pod state");
    return SCHEDPLUG_ERROR;
  }
  if (schedplug_node_label(node, "reject") != NULL) {
    char text[128];
    snprintf(text, sizeof text, "node(s) reject %s (state %ld)", s->name, s->n);
    schedplug_reason_set(reason, text);
    return SCHEDPLUG_UNSCHEDULABLE;
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance, (void)node;
  const pod_state* s = state_of(pod);
  if (s == NULL) {
    schedplug_reason_set(reason, "no pod state");
    return SCHEDPLUG_ERROR;
  }
  *out = s->n;
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "PodCycle",
    .version = "0.0.1",
    .create = create,
    .destroy = destroy,
    .filter = filter,
    .score = score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_NONE,
    .pod_begin = pod_begin,
    .pod_end = pod_end,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
