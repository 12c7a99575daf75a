/* Reloadable: a Filter built in several versions for the hot-reload tests
 * (RELOADABLE_VERSION). Version N rejects nodes labelled reload/reject-vN,
 * saying "rejected by Reloadable vN", every version those labelled
 * reload/reject-always, and the node named by its "reject_node" arg. It
 * reads only the node's labels and name, and says so (the reuse hints), so
 * that the shim reuses its verdicts for replicas. Built with
 * RELOADABLE_SCORE (the shadow tests) it also scores a node 10 times
 * (9 - the last digit of its name): node-0 best, node-9 worst.
 *
 * Version 2 differs for pods labelled reload/picky=yes (the shadow tests'
 * known subset): it rejects every node for them, and scores the other way
 * round (node-9 best). RELOADABLE_HANG_PICKY makes filter() take 20 s
 * for picky pods. RELOADABLE_REFUSE_ARGS makes
 * create() refuse every args; RELOADABLE_ALL_EVENTS declares every event
 * instead of NodeAdd and NodeUpdateLabel (a change a running scheduler cannot
 * take). */
#include <unistd.h>

#include "common.h"

#ifndef RELOADABLE_VERSION
#define RELOADABLE_VERSION 1
#endif
#define RELOADABLE_STR2(x) #x
#define RELOADABLE_STR(x) RELOADABLE_STR2(x)
#define RELOADABLE_TAG "v" RELOADABLE_STR(RELOADABLE_VERSION)

typedef struct {
  char reject_node[128];
} reloadable;

/* 1 for a pod labelled reload/picky=yes. */
static int picky(const schedplug_pod* pod) {
  const schedplug_kv* kv = schedplug_kv_find(pod->labels, "reload/picky");
  return kv != NULL && schedplug_str_eq(kv->value, "yes");
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  const reloadable* self = (const reloadable*)instance;
#ifdef RELOADABLE_HANG_PICKY
  /* A build that hangs: 20 s in filter for picky pods (the shadow test of
   * a candidate past --hook-hard-limit). */
  if (picky(pod)) {
    for (int i = 0; i < 200; ++i) usleep(100000);
  }
#endif
#if RELOADABLE_VERSION == 2
  if (picky(pod)) {
    schedplug_reason_set(reason, "rejected by Reloadable v2 (picky pod)");
    return SCHEDPLUG_UNSCHEDULABLE;
  }
#else
  (void)pod, (void)picky;
#endif
  if (schedplug_kv_find(node->labels, "reload/reject-" RELOADABLE_TAG) !=
          NULL ||
      schedplug_kv_find(node->labels, "reload/reject-always") != NULL) {
    schedplug_reason_set(reason, "rejected by Reloadable " RELOADABLE_TAG);
    return SCHEDPLUG_UNSCHEDULABLE;
  }
  if (self->reject_node[0] != '\0' &&
      schedplug_str_eq(node->name, self->reject_node)) {
    schedplug_reason_set(reason,
                         "rejected by Reloadable " RELOADABLE_TAG " (args)");
    return SCHEDPLUG_UNSCHEDULABLE;
  }
  return SCHEDPLUG_SUCCESS;
}

#ifdef RELOADABLE_SCORE
static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* out,
                            schedplug_reason* reason) {
  (void)instance, (void)reason;
  const char last =
      node->name.len > 0 ? node->name.data[node->name.len - 1] : '0';
  const int digit = last >= '0' && last <= '9' ? last - '0' : 0;
  *out = (9 - digit) * 10;
#if RELOADABLE_VERSION == 2
  if (picky(pod)) *out = digit * 10;
#else
  (void)pod;
#endif
  return SCHEDPLUG_SUCCESS;
}
#endif

static schedplug_code create(const char* args, size_t len,
                             const schedplug_host* host, void** out,
                             schedplug_reason* error) {
  (void)len;
#ifdef RELOADABLE_REFUSE_ARGS
  (void)args, (void)out, (void)host;
  schedplug_reason_set(error, "this version refuses its args");
  return SCHEDPLUG_ERROR;
#else
  (void)error;
  reloadable* self = (reloadable*)calloc(1, sizeof *self);
  if (self == NULL) return SCHEDPLUG_ERROR;
  test_json_str(args, "reject_node", self->reject_node,
                sizeof self->reject_node);
  if (SCHEDPLUG_HAS_FIELD(host, schedplug_host, settings) &&
      host->settings != NULL &&
      SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings, hints)) {
    host->settings->hints |= SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                             SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;
  }
  *out = self;
  return SCHEDPLUG_SUCCESS;
#endif
}

static void destroy(void* instance) { free(instance); }

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "Reloadable",
    .version = RELOADABLE_STR(RELOADABLE_VERSION) ".0.0",
    .create = create,
    .destroy = destroy,
    .filter = filter,
#ifdef RELOADABLE_SCORE
    .score = score,
#endif
#ifdef RELOADABLE_ALL_EVENTS
    .events = SCHEDPLUG_EVENT_ALL,
#else
    .events = SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL,
#endif
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
