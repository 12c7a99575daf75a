/* PodDataProbe: shows the ABI v1.2 pod and node data it declared (every
 * pod bit, and the node's unschedulable, conditions and capacity). For a
 * pod labelled "probe", filter() rejects every node with a reason that
 * spells out what it saw, e.g.
 *   saw nodeName=n1 nominated=n2 class=high owner=ReplicaSet/rs(controller)
 *   containers=1 image=img:1 cpu=250/500 port=8080/TCP/9090
 *   unschedulable=0 Ready=True capacity.cpu=4000
 * so a test can read it from the answer (or kube-scheduler's event). A pod
 * labelled "probe-after-nomination" instead passes while its nominated node
 * is empty (so preemption can nominate one) and is rejected the same way
 * once it is set. */
#include <stdio.h>

#include "schedplug/plugin.h"

#define PROBE_DATA                                                     \
  (SCHEDPLUG_DATA_POD_NODE_NAME | SCHEDPLUG_DATA_POD_NOMINATED_NODE |  \
   SCHEDPLUG_DATA_POD_PRIORITY_CLASS | SCHEDPLUG_DATA_POD_OWNERS |     \
   SCHEDPLUG_DATA_POD_CONTAINERS | SCHEDPLUG_DATA_NODE_UNSCHEDULABLE | \
   SCHEDPLUG_DATA_NODE_CONDITIONS | SCHEDPLUG_DATA_NODE_CAPACITY)

static schedplug_code create(const char* args, uint64_t len,
                             const schedplug_host* host, void** out,
                             schedplug_reason* error) {
  (void)args, (void)len;
  *out = NULL;
  if (!SCHEDPLUG_HAS_FIELD(host, schedplug_host, settings) ||
      !SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings, data)) {
    schedplug_reason_set(error, "PodDataProbe needs a host with ABI v1.2");
    return SCHEDPLUG_ERROR;
  }
  host->settings->data |= PROBE_DATA;
  return SCHEDPLUG_SUCCESS;
}

/* `s`, or "-" when it is empty. */
static schedplug_str or_dash(schedplug_str s) {
  const schedplug_str dash = {"-", 1};
  return s.len == 0 ? dash : s;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  if (schedplug_pod_label(pod, "probe-after-nomination") != NULL) {
    if (schedplug_pod_nominated_node_name(pod).len == 0) {
      return SCHEDPLUG_SUCCESS;
    }
  } else if (schedplug_pod_label(pod, "probe") == NULL) {
    return SCHEDPLUG_SUCCESS;
  }
  const schedplug_str none = {"-", 1};
  schedplug_str owner_kind = none, owner_name = none;
  int controller = 0;
  if (schedplug_pod_owner_count(pod) > 0) {
    const schedplug_owner* o = schedplug_pod_owner(pod, 0);
    owner_kind = o->kind;
    owner_name = o->name;
    controller = o->controller;
  }
  schedplug_str image = none, protocol = none;
  int64_t cpu_request = 0, cpu_limit = 0;
  int32_t port = 0, host_port = 0;
  if (schedplug_pod_container_count(pod) > 0) {
    const schedplug_container* c = schedplug_pod_container(pod, 0);
    image = c->image;
    cpu_request = schedplug_resource_get_sized(
        c->requests, schedplug_pod_resource_size(pod), "cpu");
    cpu_limit = schedplug_resource_get_sized(
        c->limits, schedplug_pod_resource_size(pod), "cpu");
    if (c->port_count > 0) {
      const schedplug_container_port* p =
          schedplug_container_port_at(pod, c, 0);
      port = p->container_port;
      host_port = p->host_port;
      protocol = p->protocol;
    }
  }
  schedplug_str ready = none;
  for (uint64_t i = 0; i < schedplug_node_condition_count(node); ++i) {
    const schedplug_node_condition* c = schedplug_node_condition_at(node, i);
    if (schedplug_str_eq(c->type, "Ready")) ready = c->status;
  }
  const schedplug_str node_name = or_dash(schedplug_pod_node_name(pod));
  const schedplug_str nominated =
      or_dash(schedplug_pod_nominated_node_name(pod));
  const schedplug_str klass = or_dash(schedplug_pod_priority_class_name(pod));
  image = or_dash(image);
  protocol = or_dash(protocol);
  ready = or_dash(ready);
  char text[SCHEDPLUG_REASON_MAX];
  snprintf(text, sizeof text,
           "saw nodeName=%.*s nominated=%.*s class=%.*s owner=%.*s/%.*s%s "
           "containers=%llu image=%.*s cpu=%lld/%lld port=%d/%.*s/%d "
           "unschedulable=%d Ready=%.*s capacity.cpu=%lld",
           (int)node_name.len, node_name.data, (int)nominated.len,
           nominated.data, (int)klass.len, klass.data, (int)owner_kind.len,
           owner_kind.data, (int)owner_name.len, owner_name.data,
           controller ? "(controller)" : "",
           (unsigned long long)schedplug_pod_container_count(pod),
           (int)image.len, image.data, (long long)cpu_request,
           (long long)cpu_limit, port, (int)protocol.len, protocol.data,
           host_port, schedplug_node_unschedulable(node), (int)ready.len,
           ready.data, (long long)schedplug_node_capacity(node, "cpu"));
  schedplug_reason_set(reason, text);
  return SCHEDPLUG_UNSCHEDULABLE;
}

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "PodDataProbe",
    .version = "0.0.1",
    .create = create,
    .filter = filter,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
