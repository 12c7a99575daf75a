/* SleepyFilter: sleeps {"sleep_ms": N} in every filter() call, to run
 * deadlines out; SIGTERM drain tests use it for a call that is in flight.
 * With {"release_file": "/path"} it returns as soon as that file exists, so
 * a test can hold it "hung" as long as it needs and then let it go. */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

typedef struct {
  long sleep_ms;
  char release_file[256];
} sleepy;

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)pod, (void)node, (void)reason;
  const sleepy* self = (const sleepy*)instance;
  if (self->release_file[0] == '\0') {
    sleep_ms(self->sleep_ms);
    return SCHEDPLUG_SUCCESS;
  }
  for (long slept = 0; slept < self->sleep_ms; slept += 10) {
    if (access(self->release_file, F_OK) == 0) break;
    sleep_ms(10);
  }
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code create(const char* args, size_t len,
                             const schedplug_host* host, void** out,
                             schedplug_reason* error) {
  (void)len, (void)host, (void)error;
  sleepy* self = (sleepy*)malloc(sizeof *self);
  if (self == NULL) return SCHEDPLUG_ERROR;
  self->sleep_ms = test_json_int(args, "sleep_ms", 10);
  test_json_str(args, "release_file", self->release_file,
                sizeof self->release_file);
  *out = self;
  return SCHEDPLUG_SUCCESS;
}

static void destroy(void* instance) { free(instance); }

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "SleepyFilter",
    .version = "0.0.1",
    .create = create,
    .destroy = destroy,
    .filter = filter,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
