/* DedicatedNodes: nodes reserved for pods that opt in. Plain C11, to show
 * that the schedplug ABI needs no C++.
 *
 * Nodes labelled `schedplug.io/dedicated: "true"` accept only pods annotated
 * `schedplug.io/dedicated-ok: "true"`; every other node accepts every pod.
 * Both keys are args. Keys and values match exactly (case-sensitive). */
#include <schedplug/plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "string_args.h"

enum { ARG_NODE_LABEL, ARG_POD_ANNOTATION, ARG_COUNT };

typedef struct dedicated_nodes {
  char* node_label;
  char* pod_annotation;
  /* Built once; shown as "0/5 nodes are available: 3 <reason>." */
  char reason[SCHEDPLUG_REASON_MAX];
} dedicated_nodes;

static char* copy_string(const char* s) {
  size_t n = strlen(s) + 1;
  char* out = malloc(n);
  if (out != NULL) memcpy(out, s, n);
  return out;
}

static void dn_destroy(void* instance) {
  dedicated_nodes* self = instance;
  if (self == NULL) return;
  free(self->node_label);
  free(self->pod_annotation);
  free(self);
}

static schedplug_code dn_create(const char* args_json, size_t args_len,
                                const schedplug_host* host, void** instance_out,
                                schedplug_reason* error) {
  (void)host;
  *instance_out = NULL;
  string_arg args[ARG_COUNT] = {
      [ARG_NODE_LABEL] = {"nodeLabel", NULL},
      [ARG_POD_ANNOTATION] = {"podAnnotation", NULL},
  };
  char err[SCHEDPLUG_REASON_MAX];
  if (string_args_parse(args_json, args_len, args, ARG_COUNT, err,
                        sizeof err) != 0) {
    schedplug_reason_set(error, err);
    return SCHEDPLUG_ERROR;
  }
  dedicated_nodes* self = calloc(1, sizeof *self);
  if (self != NULL) {
    const char* label = args[ARG_NODE_LABEL].value;
    const char* annotation = args[ARG_POD_ANNOTATION].value;
    self->node_label = copy_string(label ? label : "schedplug.io/dedicated");
    self->pod_annotation =
        copy_string(annotation ? annotation : "schedplug.io/dedicated-ok");
  }
  string_args_free(args, ARG_COUNT);
  if (self == NULL || self->node_label == NULL ||
      self->pod_annotation == NULL) {
    dn_destroy(self);
    schedplug_reason_set(error, "out of memory creating DedicatedNodes");
    return SCHEDPLUG_ERROR;
  }
  snprintf(self->reason, sizeof self->reason,
           "node(s) were dedicated (%s=true) and the pod lacks annotation "
           "%s=true",
           self->node_label, self->pod_annotation);
  *instance_out = self;
  return SCHEDPLUG_SUCCESS;
}

static int has_true(schedplug_kv_list list, const char* key) {
  const schedplug_kv* kv = schedplug_kv_find(list, key);
  return kv != NULL && schedplug_str_eq(kv->value, "true");
}

/* Read-only on `self`: safe to run concurrently (plugin.h's contract). */
static schedplug_code dn_filter(void* instance, const schedplug_pod* pod,
                                const schedplug_node* node,
                                schedplug_reason* reason) {
  const dedicated_nodes* self = instance;
  if (!has_true(node->labels, self->node_label)) return SCHEDPLUG_SUCCESS;
  if (has_true(pod->annotations, self->pod_annotation)) {
    return SCHEDPLUG_SUCCESS;
  }
  /* Preempting pods cannot make a dedicated node accept this pod. */
  schedplug_reason_set(reason, self->reason);
  return SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static const schedplug_plugin kDescriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "DedicatedNodes",
    .version = "1.0.0",
    .create = dn_create,
    .destroy = dn_destroy,
    /* No `applies`: every pod matters, since pods WITHOUT the annotation are
     * the ones dedicated nodes reject. */
    .filter = dn_filter,
    /* A rejected pod may fit once a node is added or its labels change. */
    .events = SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kDescriptor;
}
