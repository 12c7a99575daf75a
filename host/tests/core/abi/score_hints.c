/* ScoreHints: the hints of ABI v1.5 on a plugin without a refresh hook.
 *
 * create() sets the hints its arg "hints" gives. The filter passes every
 * node; score() gives the node's pod count. Built a second time with
 * SCORE_HINTS_NO_SCORE (ScoreHintsNoScore), without the score hook, for
 * the host's refusal of a score promise without a score. */
#include "schedplug/plugin.h"

static schedplug_code sh_create(const char* args_json, uint64_t args_len,
                                const schedplug_host* host, void** instance_out,
                                schedplug_reason* error) {
  (void)args_json;
  (void)args_len;
  static const char* const kKnown[] = {"hints"};
  void* c = host->context;
  if (host->args_allow_only(c, host->args, kKnown, 1, error) !=
      SCHEDPLUG_SUCCESS) {
    return SCHEDPLUG_ERROR;
  }
  int64_t hints = 0;
  if (host->arg_int(c, host->args, "hints", 0, INT64_MAX, &hints, error) ==
      SCHEDPLUG_ERROR) {
    return SCHEDPLUG_ERROR;
  }
  host->settings->hints = (uint64_t)hints;
  *instance_out = NULL;
  return SCHEDPLUG_SUCCESS;
}

static void sh_destroy(void* instance) { (void)instance; }

static schedplug_code sh_filter(void* instance, const schedplug_pod* pod,
                                const schedplug_node* node,
                                schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  (void)node;
  (void)reason;
  return SCHEDPLUG_SUCCESS;
}

#ifndef SCORE_HINTS_NO_SCORE
static schedplug_code sh_score(void* instance, const schedplug_pod* pod,
                               const schedplug_node* node, int64_t* score,
                               schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  (void)reason;
  *score = (int64_t)node->pod_count;
  return SCHEDPLUG_SUCCESS;
}
#endif

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
#ifdef SCORE_HINTS_NO_SCORE
    .name = "ScoreHintsNoScore",
#else
    .name = "ScoreHints",
    .score = sh_score,
#endif
    .version = "1.5.0",
    .create = sh_create,
    .destroy = sh_destroy,
    .filter = sh_filter,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kPlugin;
}
