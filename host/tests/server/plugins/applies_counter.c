/* AppliesCounter: counts its applies() calls (per instance). filter()
 * rejects every node with the reason "applies calls=N"; score() returns N
 * (policy NONE), so a test can see how often applies() was asked. */
#include <stdatomic.h>

#include "common.h"

typedef struct {
  atomic_long applies;
} counter;

static int applies(void* instance, const schedplug_pod* pod) {
  (void)pod;
  atomic_fetch_add(&((counter*)instance)->applies, 1);
  return 1;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)pod, (void)node;
  char text[64];
  snprintf(text, sizeof text, "applies calls=%ld",
           atomic_load(&((counter*)instance)->applies));
  schedplug_reason_set(reason, text);
  return SCHEDPLUG_UNSCHEDULABLE;
}

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)pod, (void)node, (void)reason;
  *out = atomic_load(&((counter*)instance)->applies);
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code create(const char* args, size_t len,
                             const schedplug_host* host, void** out,
                             schedplug_reason* error) {
  (void)args, (void)len, (void)host, (void)error;
  counter* c = (counter*)calloc(1, sizeof *c);
  if (c == NULL) return SCHEDPLUG_ERROR;
  *out = c;
  return SCHEDPLUG_SUCCESS;
}

static void destroy(void* instance) { free(instance); }

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "AppliesCounter",
    .version = "0.0.1",
    .create = create,
    .destroy = destroy,
    .applies = applies,
    .filter = filter,
    .score = score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_NONE,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
