/* Shared bits of the corpus plugins: a stateless create() and the export
 * line, so each corpus file shows only what makes it good or broken. */
#ifndef SCHEDPLUG_CORPUS_PLUGIN_H
#define SCHEDPLUG_CORPUS_PLUGIN_H

#include "schedplug/plugin.h"

static inline schedplug_code corpus_create(const char* args_json,
                                           size_t args_len,
                                           const schedplug_host* host,
                                           void** instance_out,
                                           schedplug_reason* error) {
  (void)args_json;
  (void)args_len;
  (void)host;
  (void)error;
  *instance_out = NULL;
  return SCHEDPLUG_SUCCESS;
}

static inline schedplug_code corpus_pass(void* instance,
                                         const schedplug_pod* pod,
                                         const schedplug_node* node,
                                         schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  (void)node;
  (void)reason;
  return SCHEDPLUG_SUCCESS;
}

static inline schedplug_code corpus_score_zero(void* instance,
                                               const schedplug_pod* pod,
                                               const schedplug_node* node,
                                               int64_t* score,
                                               schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  (void)node;
  (void)reason;
  *score = 0;
  return SCHEDPLUG_SUCCESS;
}

/* Exports `descriptor` through the ABI's entry symbol. */
#define CORPUS_EXPORT(descriptor)                                      \
  SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) { \
    return &(descriptor);                                              \
  }

#endif
