/* HintedFilter (built with HINTED_FILTER) or HintedScorer: declares the
 * SCHEDPLUG_HINT_* bits of its "hints" arg, for the checks of what hints
 * buy (host/check/create_check.cpp). Neither has a refresh hook, so every
 * hint the ABI defines is valid on them. */
#include <stdlib.h>

#include "schedplug/plugin.h"

typedef struct hinted {
  int unused;
} hinted;

static void h_destroy(void* instance) { free(instance); }

static schedplug_code h_create(const char* args_json, uint64_t args_len,
                               const schedplug_host* host, void** instance_out,
                               schedplug_reason* error) {
  (void)args_json;
  (void)args_len;
  int64_t hints = 0;
  static const char* const kKnown[] = {"hints"};
  if (host->args_allow_only(host->context, host->args, kKnown, 1, error) ==
          SCHEDPLUG_ERROR ||
      host->arg_int(host->context, host->args, "hints", 0, INT64_MAX, &hints,
                    error) == SCHEDPLUG_ERROR) {
    return SCHEDPLUG_ERROR;
  }
  hinted* self = calloc(1, sizeof *self);
  if (self == NULL) return SCHEDPLUG_ERROR;
  host->settings->hints = (uint64_t)hints;
  *instance_out = self;
  return SCHEDPLUG_SUCCESS;
}

#ifdef HINTED_FILTER
static schedplug_code h_filter(void* instance, const schedplug_pod* pod,
                               const schedplug_node* node,
                               schedplug_reason* reason) {
  (void)instance, (void)pod, (void)node, (void)reason;
  return SCHEDPLUG_SUCCESS;
}
#else
static schedplug_code h_score(void* instance, const schedplug_pod* pod,
                              const schedplug_node* node, int64_t* score,
                              schedplug_reason* reason) {
  (void)instance, (void)pod, (void)node, (void)reason;
  *score = 0;
  return SCHEDPLUG_SUCCESS;
}
#endif

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
#ifdef HINTED_FILTER
    .name = "HintedFilter",
    .filter = h_filter,
#else
    .name = "HintedScorer",
    .score = h_score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_LINEAR,
#endif
    .version = "1.0.0",
    .create = h_create,
    .destroy = h_destroy,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kPlugin;
}
