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

typedef struct dedicated_nodes {
  char* node_label;
  char* pod_annotation;
  /* The one pod annotation key it reads, declared in its settings (ABI
   * v1.4): views pod_annotation. */
  schedplug_str annotation_key;
  /* Built once; shown as "0/5 nodes are available: 3 <reason>." */
  char reason[SCHEDPLUG_REASON_MAX];
} dedicated_nodes;

static char* copy_str(schedplug_str s) {
  char* out = malloc(s.len + 1);
  if (out != NULL) {
    if (s.len > 0) memcpy(out, s.data, s.len);
    out[s.len] = '\0';
  }
  return out;
}

static void dn_destroy(void* instance) {
  dedicated_nodes* self = instance;
  if (self == NULL) return;
  free(self->node_label);
  free(self->pod_annotation);
  free(self);
}

/* Reads the args with the host's typed getters (schedplug_host, ABI v1.1):
 * no JSON parsing here. Unknown keys, and values that are not non-empty
 * strings, are errors that name the arg. */
static schedplug_code dn_create(const char* args_json, uint64_t args_len,
                                const schedplug_host* host, void** instance_out,
                                schedplug_reason* error) {
  (void)args_json;
  (void)args_len;
  *instance_out = NULL;
  if (host == NULL || !SCHEDPLUG_HAS_FIELD(host, schedplug_host, arg_string)) {
    schedplug_reason_set(error,
                         "DedicatedNodes needs a schedplug-host with ABI v1.1 "
                         "typed args; upgrade the host");
    return SCHEDPLUG_ERROR;
  }
  static const char* const kKnown[] = {"nodeLabel", "podAnnotation"};
  if (host->args_allow_only(host->context, host->args, kKnown, 2, error) !=
      SCHEDPLUG_SUCCESS) {
    return SCHEDPLUG_ERROR;
  }
  schedplug_str label = schedplug_str_of("schedplug.io/dedicated");
  schedplug_str annotation = schedplug_str_of("schedplug.io/dedicated-ok");
  /* SKIP (absent) keeps the default; ERROR has written the message. */
  if (host->arg_string(host->context, host->args, "nodeLabel", &label, error) ==
          SCHEDPLUG_ERROR ||
      host->arg_string(host->context, host->args, "podAnnotation", &annotation,
                       error) == SCHEDPLUG_ERROR) {
    return SCHEDPLUG_ERROR;
  }
  dedicated_nodes* self = calloc(1, sizeof *self);
  if (self != NULL) {
    self->node_label = copy_str(label);
    self->pod_annotation = copy_str(annotation);
  }
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
  /* dn_filter reads only labels and annotations, never the node's pods, so
   * preemption may reuse its PreFilter verdicts (ABI v1.3; older hosts
   * have no hints). It reads neither the pod's name nor its uid, and
   * nothing here changes over time (no refresh hook), so the next replica
   * of a pod may reuse them too; and of the pod's labels and annotations it
   * reads only the annotation `pod_annotation`, which it declares, so pods
   * that differ only in other labels and annotations may reuse them as
   * well (ABI v1.4; a v1.3 host refuses these bits and has no key fields).
   * The host copies the key view after create() returns; it points into
   * `self` anyway. Built with DEDICATED_NODES_WITHOUT_HINTS (the perf
   * suite's Filter+Score workload without hints) it promises nothing. */
#ifndef DEDICATED_NODES_WITHOUT_HINTS
  if (SCHEDPLUG_HAS_FIELD(host, schedplug_host, settings) &&
      host->settings != NULL &&
      SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings, hints)) {
    host->settings->hints |= SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                             SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;
    if (SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings,
                            pod_annotation_key_count)) {
      self->annotation_key = schedplug_str_of(self->pod_annotation);
      host->settings->hints |= SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;
      host->settings->pod_annotation_keys = &self->annotation_key;
      host->settings->pod_annotation_key_count = 1;
    }
  }
#endif
  *instance_out = self;
  return SCHEDPLUG_SUCCESS;
}

static int is_true(const schedplug_kv* kv) {
  return kv != NULL && schedplug_str_eq(kv->value, "true");
}

/* Read-only on `self`: safe to run concurrently (plugin.h's contract). */
static schedplug_code dn_filter(void* instance, const schedplug_pod* pod,
                                const schedplug_node* node,
                                schedplug_reason* reason) {
  const dedicated_nodes* self = instance;
  if (!is_true(schedplug_node_label(node, self->node_label))) {
    return SCHEDPLUG_SUCCESS;
  }
  if (is_true(schedplug_pod_annotation(pod, self->pod_annotation))) {
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
