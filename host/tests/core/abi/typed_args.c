/* TypedArgs: reads every kind of arg through the host's typed getters
 * (schedplug_host, ABI v1.1) and sets its instance settings from them.
 * Its filter rejects every node with a reason that lists what it read, so
 * the tests can see it; its refresh() tries to read an arg after create(),
 * which must fail. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedplug/plugin.h"

/* Pod label or annotation keys (ABI v1.4), copied from the args: the args'
 * strings are gone once create() returns, and the host copies the keys
 * only after that. */
typedef struct key_list {
  schedplug_str* keys;
  uint64_t count;
} key_list;

typedef struct typed_args {
  char summary[SCHEDPLUG_REASON_MAX];
  const schedplug_host* host;
  key_list label_keys;
  key_list annotation_keys;
} typed_args;

static void free_keys(key_list* list) {
  for (uint64_t i = 0; i < list->count; ++i) free((char*)list->keys[i].data);
  free(list->keys);
}

static void ta_destroy(void* instance) {
  typed_args* self = instance;
  if (self == NULL) return;
  free_keys(&self->label_keys);
  free_keys(&self->annotation_keys);
  free(self);
}

/* `extra` more entries than `count` are allocated (left empty). */
static int copy_keys(key_list* out, const schedplug_str* keys, uint64_t count,
                     uint64_t extra) {
  out->keys = calloc(count + extra + 1, sizeof *out->keys);
  if (out->keys == NULL) return 0;
  for (uint64_t i = 0; i < count; ++i) {
    char* data = malloc(keys[i].len + 1);
    if (data == NULL) return 0;
    memcpy(data, keys[i].data, keys[i].len);
    out->keys[i].data = data;
    out->keys[i].len = keys[i].len;
    out->count = i + 1;
  }
  return 1;
}

#define TRY(call)                    \
  do {                               \
    if ((call) == SCHEDPLUG_ERROR) { \
      ta_destroy(self);              \
      return SCHEDPLUG_ERROR;        \
    }                                \
  } while (0)

static schedplug_code ta_create(const char* args_json, uint64_t args_len,
                                const schedplug_host* host, void** instance_out,
                                schedplug_reason* error) {
  (void)args_json;
  (void)args_len;
  typed_args* self = calloc(1, sizeof *self);
  if (self == NULL) return SCHEDPLUG_ERROR;
  self->host = host;
  void* c = host->context;
  static const char* const kKnown[] = {
      "name",      "enabled",        "count",         "ratio",        "period",
      "zones",     "limits",         "events",        "policy",       "hints",
      "labelKeys", "annotationKeys", "nullLabelKeys", "emptyLabelKey"};
  TRY(host->args_allow_only(c, host->args, kKnown, 14, error));
  schedplug_str name = schedplug_str_of("default");
  int32_t enabled = 0;
  int64_t count = -1;
  double ratio = -1;
  int64_t period_ns = 0;
  const schedplug_str* zones = NULL;
  uint64_t zone_count = 0;
  const schedplug_args* limits = NULL;
  int64_t cpu = -1;
  int64_t events = -1;
  int64_t policy = -1;
  int64_t hints = -1;
  const schedplug_str* label_keys = NULL;
  uint64_t label_key_count = 0;
  const schedplug_str* annotation_keys = NULL;
  uint64_t annotation_key_count = 0;
  int64_t null_label_keys = 0;
  int32_t empty_label_key = 0;
  TRY(host->arg_string(c, host->args, "name", &name, error));
  TRY(host->arg_bool(c, host->args, "enabled", &enabled, error));
  TRY(host->arg_int(c, host->args, "count", 0, 10, &count, error));
  TRY(host->arg_float(c, host->args, "ratio", 0.0, 1.0, &ratio, error));
  TRY(host->arg_duration(c, host->args, "period", &period_ns, error));
  TRY(host->arg_string_list(c, host->args, "zones", &zones, &zone_count,
                            error));
  TRY(host->arg_int(c, host->args, "events", 0, INT64_MAX, &events, error));
  TRY(host->arg_int(c, host->args, "policy", 0, 100, &policy, error));
  TRY(host->arg_int(c, host->args, "hints", 0, INT64_MAX, &hints, error));
  TRY(host->arg_string_list(c, host->args, "labelKeys", &label_keys,
                            &label_key_count, error));
  TRY(host->arg_string_list(c, host->args, "annotationKeys", &annotation_keys,
                            &annotation_key_count, error));
  TRY(host->arg_int(c, host->args, "nullLabelKeys", 0, 100, &null_label_keys,
                    error));
  TRY(host->arg_bool(c, host->args, "emptyLabelKey", &empty_label_key, error));
  schedplug_code found =
      host->arg_object(c, host->args, "limits", &limits, error);
  TRY(found);
  if (found == SCHEDPLUG_SUCCESS) {
    static const char* const kLimits[] = {"cpu"};
    TRY(host->args_allow_only(c, limits, kLimits, 1, error));
    TRY(host->arg_int(c, limits, "cpu", 0, 64, &cpu, error));
  }
  char zone_text[64] = "";
  for (uint64_t i = 0; i < zone_count; ++i) {
    size_t used = strlen(zone_text);
    snprintf(zone_text + used, sizeof zone_text - used, "%s%.*s",
             i == 0 ? "" : ",", (int)zones[i].len, zones[i].data);
  }
  snprintf(self->summary, sizeof self->summary,
           "name=%.*s enabled=%d count=%" PRId64
           " ratio=%.2f period_ns=%" PRId64 " zones=%s limits.cpu=%" PRId64,
           (int)name.len, name.data, (int)enabled, count, ratio, period_ns,
           zone_text, cpu);
  /* Settings from args: the period, events, policy and hints. */
  if (period_ns > 0) {
    host->settings->refresh_period_ms = (uint32_t)(period_ns / 1000000);
  }
  if (events >= 0) host->settings->events = (uint64_t)events;
  if (policy >= 0) host->settings->normalize_policy = (uint32_t)policy;
  if (hints >= 0) host->settings->hints = (uint64_t)hints;
  /* The pod keys (ABI v1.4), broken on request: a NULL array with a count
   * ("nullLabelKeys"), an empty label key after the given ones
   * ("emptyLabelKey"). */
  if (!copy_keys(&self->label_keys, label_keys, label_key_count, 1) ||
      !copy_keys(&self->annotation_keys, annotation_keys, annotation_key_count,
                 0)) {
    ta_destroy(self);
    return SCHEDPLUG_ERROR;
  }
  /* copy_keys left an empty entry after the copies. */
  host->settings->pod_label_keys = self->label_keys.keys;
  host->settings->pod_label_key_count =
      self->label_keys.count + (empty_label_key ? 1 : 0);
  if (null_label_keys > 0) {
    host->settings->pod_label_keys = NULL;
    host->settings->pod_label_key_count = (uint64_t)null_label_keys;
  }
  host->settings->pod_annotation_keys = self->annotation_keys.keys;
  host->settings->pod_annotation_key_count = self->annotation_keys.count;
  *instance_out = self;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code ta_filter(void* instance, const schedplug_pod* pod,
                                const schedplug_node* node,
                                schedplug_reason* reason) {
  (void)pod;
  (void)node;
  const typed_args* self = instance;
  schedplug_reason_set(reason, self->summary);
  return SCHEDPLUG_UNSCHEDULABLE;
}

static schedplug_code ta_score(void* instance, const schedplug_pod* pod,
                               const schedplug_node* node, int64_t* score,
                               schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  (void)reason;
  *score = (int64_t)node->pod_count;
  return SCHEDPLUG_SUCCESS;
}

/* Reading args after create() is an error the host explains. */
static schedplug_code ta_refresh(void* instance, schedplug_reason* error) {
  const typed_args* self = instance;
  schedplug_str s;
  return self->host->arg_string(self->host->context, self->host->args, "name",
                                &s, error);
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "TypedArgs",
    .version = "1.1.0",
    .create = ta_create,
    .destroy = ta_destroy,
    .filter = ta_filter,
    .score = ta_score,
    .refresh = ta_refresh,
    .refresh_period_ms = 60000,
    .events = SCHEDPLUG_EVENT_NODE_ADD,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kPlugin;
}
