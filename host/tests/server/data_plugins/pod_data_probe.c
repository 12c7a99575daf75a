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
 * once it is set.
 * For a pod labelled "probe=v1.3" the reason spells out the ABI v1.3 data
 * instead (a reason holds at most SCHEDPLUG_REASON_MAX bytes), e.g.
 *   v1.3 volumes=2 data:persistentVolumeClaim:pvc-1:ro
 *   scratch:ephemeral:probe-scratch:rw images=2 img:1/1000
 * and for "probe=v1.3-affinity" the node affinity, topology spread and pod
 * (anti-)affinity terms, e.g.
 *   v1.3 nodeAffinity=1/1 zone:In:a,b pref=30:gpu:Exists spread=1
 *   1/zone/DoNotSchedule/min=2/Honor/-/{app=web} affinity=0/1/1/0
 *   pref=10/zone/{} anti=hostname/{app=web}/ns=2/keys=hash */
#include <stdio.h>

#include "schedplug/plugin.h"

#define PROBE_DATA                                                         \
  (SCHEDPLUG_DATA_POD_NODE_NAME | SCHEDPLUG_DATA_POD_NOMINATED_NODE |      \
   SCHEDPLUG_DATA_POD_PRIORITY_CLASS | SCHEDPLUG_DATA_POD_OWNERS |         \
   SCHEDPLUG_DATA_POD_CONTAINERS | SCHEDPLUG_DATA_NODE_UNSCHEDULABLE |     \
   SCHEDPLUG_DATA_NODE_CONDITIONS | SCHEDPLUG_DATA_NODE_CAPACITY |         \
   SCHEDPLUG_DATA_POD_VOLUMES | SCHEDPLUG_DATA_NODE_IMAGES |               \
   SCHEDPLUG_DATA_POD_NODE_AFFINITY | SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD | \
   SCHEDPLUG_DATA_POD_AFFINITY)

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

/* Appends printf-style text to `text` (of `size` bytes) at `*at`. */
#define APPEND(...)                                                         \
  do {                                                                      \
    if (*at < size) {                                                       \
      int n_ = snprintf(text + *at, size - *at, __VA_ARGS__);               \
      if (n_ > 0) *at += (size_t)n_ < size - *at ? (size_t)n_ : size - *at; \
    }                                                                       \
  } while (0)
#define STR(s) (int)(s).len, (s).data

/* The v1.3 data: the first two volumes, the first image. */
static void saw_v13(const schedplug_pod* pod, const schedplug_node* node,
                    char* text, size_t size, size_t* at) {
  APPEND("v1.3 volumes=%llu",
         (unsigned long long)schedplug_pod_volume_count(pod));
  for (uint64_t i = 0; i < schedplug_pod_volume_count(pod) && i < 2; ++i) {
    const schedplug_volume* v = schedplug_pod_volume(pod, i);
    APPEND(" %.*s:%.*s:%.*s:%s", STR(v->name), STR(v->source),
           STR(or_dash(v->claim_name)), v->read_only ? "ro" : "rw");
  }
  APPEND(" images=%llu", (unsigned long long)schedplug_node_image_count(node));
  if (schedplug_node_image_count(node) > 0) {
    const schedplug_node_image* img = schedplug_node_image_at(node, 0);
    const schedplug_str none = {NULL, 0};
    APPEND(" %.*s/%lld", STR(or_dash(img->name_count ? img->names[0] : none)),
           (long long)img->size_bytes);
  }
}

/* key:op:v1,v2 */
static void requirement(const schedplug_selector_requirement* r, char* text,
                        size_t size, size_t* at) {
  APPEND("%.*s:%.*s", STR(r->key), STR(r->op));
  for (uint64_t i = 0; i < r->value_count; ++i) {
    APPEND("%s%.*s", i == 0 ? ":" : ",", STR(r->values[i]));
  }
}

/* {k=v,key:op:values} or nil */
static void selector(const schedplug_pod* pod,
                     const schedplug_label_selector* s, char* text, size_t size,
                     size_t* at) {
  if (!s->present) {
    APPEND("nil");
    return;
  }
  APPEND("{");
  for (uint64_t i = 0; i < s->match_labels.count; ++i) {
    const schedplug_kv* kv = (const schedplug_kv*)schedplug_element_at(
        s->match_labels.items, schedplug_pod_kv_size(pod), i);
    APPEND("%s%.*s=%.*s", i == 0 ? "" : ",", STR(kv->key), STR(kv->value));
  }
  for (uint64_t i = 0; i < s->match_expression_count; ++i) {
    if (i > 0 || s->match_labels.count > 0) APPEND(",");
    requirement(schedplug_requirement_at(pod, s->match_expressions, i), text,
                size, at);
  }
  APPEND("}");
}

/* The v1.3 terms: the first of each list. */
static void saw_v13_affinity(const schedplug_pod* pod, char* text, size_t size,
                             size_t* at) {
  uint64_t req = 0, pref = 0;
  const schedplug_node_selector_term* r =
      schedplug_pod_node_affinity(pod, 0, &req);
  const schedplug_node_selector_term* p =
      schedplug_pod_node_affinity(pod, 1, &pref);
  APPEND("v1.3 nodeAffinity=%llu/%llu", (unsigned long long)req,
         (unsigned long long)pref);
  if (req > 0 &&
      schedplug_node_selector_term_at(pod, r, 0)->match_expression_count > 0) {
    APPEND(" ");
    requirement(
        schedplug_requirement_at(
            pod, schedplug_node_selector_term_at(pod, r, 0)->match_expressions,
            0),
        text, size, at);
  }
  if (pref > 0) {
    const schedplug_node_selector_term* t =
        schedplug_node_selector_term_at(pod, p, 0);
    APPEND(" pref=%d", t->weight);
    if (t->match_expression_count > 0) {
      APPEND(":");
      requirement(schedplug_requirement_at(pod, t->match_expressions, 0), text,
                  size, at);
    }
  }
  APPEND(" spread=%llu",
         (unsigned long long)schedplug_pod_topology_spread_count(pod));
  if (schedplug_pod_topology_spread_count(pod) > 0) {
    const schedplug_topology_spread_constraint* c =
        schedplug_pod_topology_spread(pod, 0);
    APPEND(" %d/%.*s/%.*s/min=%d/%.*s/%.*s/", c->max_skew, STR(c->topology_key),
           STR(c->when_unsatisfiable), c->min_domains,
           STR(or_dash(c->node_affinity_policy)),
           STR(or_dash(c->node_taints_policy)));
    selector(pod, &c->label_selector, text, size, at);
  }
  uint64_t n[4];
  const schedplug_pod_affinity_term* terms[4];
  for (int32_t k = 0; k < 4; ++k)
    terms[k] = schedplug_pod_affinity(pod, k, &n[k]);
  APPEND(" affinity=%llu/%llu/%llu/%llu", (unsigned long long)n[0],
         (unsigned long long)n[1], (unsigned long long)n[2],
         (unsigned long long)n[3]);
  if (n[1] > 0) {
    const schedplug_pod_affinity_term* t =
        schedplug_pod_affinity_term_at(pod, terms[1], 0);
    APPEND(" pref=%d/%.*s/", t->weight, STR(t->topology_key));
    selector(pod, &t->label_selector, text, size, at);
  }
  if (n[2] > 0) {
    const schedplug_pod_affinity_term* t =
        schedplug_pod_affinity_term_at(pod, terms[2], 0);
    APPEND(" anti=%.*s/", STR(t->topology_key));
    selector(pod, &t->label_selector, text, size, at);
    APPEND("/ns=%llu", (unsigned long long)t->namespace_count);
    if (t->match_label_key_count > 0) {
      APPEND("/keys=%.*s", STR(t->match_label_keys[0]));
    }
  }
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  const schedplug_kv* label = schedplug_pod_label(pod, "probe");
  if (schedplug_pod_label(pod, "probe-after-nomination") != NULL) {
    if (schedplug_pod_nominated_node_name(pod).len == 0) {
      return SCHEDPLUG_SUCCESS;
    }
  } else if (label == NULL) {
    return SCHEDPLUG_SUCCESS;
  } else if (schedplug_str_eq(label->value, "v1.3") ||
             schedplug_str_eq(label->value, "v1.3-affinity")) {
    char text[SCHEDPLUG_REASON_MAX];
    size_t at = 0;
    if (label->value.len == 4) {
      saw_v13(pod, node, text, sizeof text, &at);
    } else {
      saw_v13_affinity(pod, text, sizeof text, &at);
    }
    schedplug_reason_set(reason, text);
    return SCHEDPLUG_UNSCHEDULABLE;
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
