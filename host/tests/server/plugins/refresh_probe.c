/* RefreshProbe: a refresh hook that fails ({"mode":"fail"}) or hangs once
 * for {"hang_ms": N} ({"mode":"hang"}), and logs each refresh that works
 * at DEBUG level (which the host shows from -v 4). Its filter reports what
 * refresh did so far as an Unschedulable reason, which lets tests see that
 * requests are served while a refresh fails or hangs. */
#include <stdatomic.h>
#include <time.h>

#include "common.h"

typedef struct {
  const schedplug_host* host;
  int hang;
  long hang_ms;
  atomic_int calls;
  atomic_int failures;
  atomic_int in_progress;
} probe;

static schedplug_code refresh(void* instance, schedplug_reason* error) {
  probe* self = (probe*)instance;
  const int call = atomic_fetch_add(&self->calls, 1);
  if (self->hang) {
    if (call == 0) {
      atomic_store(&self->in_progress, 1);
      struct timespec ts = {self->hang_ms / 1000,
                            (self->hang_ms % 1000) * 1000000L};
      nanosleep(&ts, NULL);
      atomic_store(&self->in_progress, 0);
    }
    char text[64];
    const int n = snprintf(text, sizeof text, "refresh %d done", call + 1);
    const schedplug_str msg = {text, (uint64_t)n};
    self->host->log(self->host->context, SCHEDPLUG_LOG_DEBUG, msg);
    return SCHEDPLUG_SUCCESS;
  }
  atomic_fetch_add(&self->failures, 1);
  schedplug_reason_set(error, "metrics endpoint unreachable");
  return SCHEDPLUG_ERROR;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)pod, (void)node;
  probe* self = (probe*)instance;
  char text[SCHEDPLUG_REASON_MAX];
  snprintf(text, sizeof text, "refresh calls=%d failures=%d hanging=%d",
           atomic_load(&self->calls), atomic_load(&self->failures),
           atomic_load(&self->in_progress));
  schedplug_reason_set(reason, text);
  return SCHEDPLUG_UNSCHEDULABLE;
}

static schedplug_code create(const char* args, size_t len,
                             const schedplug_host* host, void** out,
                             schedplug_reason* error) {
  (void)len, (void)error;
  probe* self = (probe*)calloc(1, sizeof *self);
  if (self == NULL) return SCHEDPLUG_ERROR;
  self->host = host;
  self->hang = test_json_has(args, "mode", "hang");
  self->hang_ms = test_json_int(args, "hang_ms", 1000);
  *out = self;
  return SCHEDPLUG_SUCCESS;
}

static void destroy(void* instance) { free(instance); }

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "RefreshProbe",
    .version = "0.0.1",
    .create = create,
    .destroy = destroy,
    .filter = filter,
    .refresh = refresh,
    .refresh_period_ms = 50,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
