/* DataEcho: a test plugin that spells out the ABI v1.2 declared data it
 * sees, for the test kit's tests. It declares the SCHEDPLUG_DATA_* bits of
 * its `data` arg (default: all). For a pod labelled "show", filter() rejects
 * every node with a reason that lists one part of what it saw:
 *   show=pod         node=n7 nominated=n2 class=high owners=ReplicaSet/rs/1
 *   show=containers  app:img:1 req[cpu=250] lim[cpu=500] ports[80/0/TCP/-]
 *   show=node        unschedulable=1 conditions[Ready=True] capacity[...]
 *                    pod_count=2 requested[cpu=350]
 *   show=pods        default/a 0 ReplicaSet labels[app=web] req[cpu=100]
 *   show=v1.3        volumes=1 images=1 nodeAffinity=1/0 spread=1
 *                    podAffinity=0/0/1/0 (the counts of the ABI v1.3 data)
 *   show=volumes     volumes[data:persistentVolumeClaim:pvc-1:rw]
 *                    images[img:1|img@sha256:ab=1000]
 *   show=terms       node[0:zone In a,b|50:f:metadata.name In n1]
 *                    spread[1 zone DoNotSchedule {app=web}]
 *                    pod[2/0:kubernetes.io/hostname {app=web}]
 *                    (node terms: weight, then requirements, `f:` a field;
 *                    pod terms: SCHEDPLUG_POD_*AFFINITY_* / weight)
 * An empty string is "-". Pods without the label pass. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "schedplug/plugin.h"

typedef struct {
  char text[SCHEDPLUG_REASON_MAX];
  size_t len;
} out_t;

static void put(out_t* out, const char* format, ...) {
  if (out->len >= sizeof out->text - 1) return;
  va_list ap;
  va_start(ap, format);
  const int n =
      vsnprintf(out->text + out->len, sizeof out->text - out->len, format, ap);
  va_end(ap);
  if (n > 0) out->len += (size_t)n;
  if (out->len > sizeof out->text - 1) out->len = sizeof out->text - 1;
}

static void put_str(out_t* out, schedplug_str s) {
  if (s.len == 0) {
    put(out, "-");
  } else {
    put(out, "%.*s", (int)s.len, s.data);
  }
}

/* key=value,... of a kv list whose entries are `size` apart. */
static void put_kvs(out_t* out, schedplug_kv_list list, uint64_t size) {
  for (uint64_t i = 0; i < list.count; ++i) {
    const schedplug_kv* kv =
        (const schedplug_kv*)(const void*)((const char*)list.items + i * size);
    if (i > 0) put(out, ",");
    put_str(out, kv->key);
    put(out, "=");
    put_str(out, kv->value);
  }
}

static void put_resources(out_t* out, const char* name,
                          schedplug_resource_list list, uint64_t size) {
  put(out, "%s[", name);
  for (uint64_t i = 0; i < list.count; ++i) {
    const schedplug_resource* r =
        (const schedplug_resource*)(const void*)((const char*)list.items +
                                                 i * size);
    put(out, "%s%.*s=%lld", i == 0 ? "" : ",", (int)r->name.len, r->name.data,
        (long long)r->value);
  }
  put(out, "]");
}

static void show_pod(out_t* out, const schedplug_pod* pod) {
  put(out, "node=");
  put_str(out, schedplug_pod_node_name(pod));
  put(out, " nominated=");
  put_str(out, schedplug_pod_nominated_node_name(pod));
  put(out, " class=");
  put_str(out, schedplug_pod_priority_class_name(pod));
  put(out, " owners=");
  for (uint64_t i = 0; i < schedplug_pod_owner_count(pod); ++i) {
    const schedplug_owner* o = schedplug_pod_owner(pod, i);
    if (i > 0) put(out, ",");
    put_str(out, o->kind);
    put(out, "/");
    put_str(out, o->name);
    put(out, "/%d", (int)o->controller);
  }
}

static void show_containers(out_t* out, const schedplug_pod* pod) {
  put(out, "containers=%llu",
      (unsigned long long)schedplug_pod_container_count(pod));
  for (uint64_t i = 0; i < schedplug_pod_container_count(pod); ++i) {
    const schedplug_container* c = schedplug_pod_container(pod, i);
    put(out, " ");
    put_str(out, c->name);
    put(out, ":");
    put_str(out, c->image);
    put(out, " ");
    put_resources(out, "req", c->requests, schedplug_pod_resource_size(pod));
    put(out, " ");
    put_resources(out, "lim", c->limits, schedplug_pod_resource_size(pod));
    put(out, " ports[");
    for (uint64_t j = 0; j < c->port_count; ++j) {
      const schedplug_container_port* p =
          schedplug_container_port_at(pod, c, j);
      put(out, "%s%d/%d/", j == 0 ? "" : ",", (int)p->container_port,
          (int)p->host_port);
      put_str(out, p->protocol);
      put(out, "/");
      put_str(out, p->host_ip);
    }
    put(out, "]");
  }
}

static void show_node(out_t* out, const schedplug_node* node) {
  put(out, "unschedulable=%d conditions[",
      (int)schedplug_node_unschedulable(node));
  for (uint64_t i = 0; i < schedplug_node_condition_count(node); ++i) {
    const schedplug_node_condition* c = schedplug_node_condition_at(node, i);
    if (i > 0) put(out, ",");
    put_str(out, c->type);
    put(out, "=");
    put_str(out, c->status);
  }
  put(out, "] ");
  put_resources(out, "capacity", node->capacity,
                schedplug_node_resource_size(node));
  put(out, " pod_count=%u ", (unsigned)node->pod_count);
  put_resources(out, "requested", node->requested,
                schedplug_node_resource_size(node));
}

static void show_pods(out_t* out, const schedplug_node* node) {
  put(out, "pods=%llu",
      (unsigned long long)schedplug_node_pod_list_count(node));
  for (uint64_t i = 0; i < schedplug_node_pod_list_count(node); ++i) {
    const schedplug_node_pod* p = schedplug_node_pod_at(node, i);
    put(out, " ");
    put_str(out, p->namespace_name);
    put(out, "/");
    put_str(out, p->name);
    put(out, " %d ", (int)p->priority);
    put_str(out, p->owner_kind);
    put(out, " labels[");
    put_kvs(out, p->labels, schedplug_node_kv_size(node));
    put(out, "] ");
    put_resources(out, "req", p->requests, schedplug_node_resource_size(node));
    put(out, ";");
  }
}

static void show_v13(out_t* out, const schedplug_pod* pod,
                     const schedplug_node* node) {
  uint64_t n[6];
  schedplug_pod_node_affinity(pod, 0, &n[0]);
  schedplug_pod_node_affinity(pod, 1, &n[1]);
  for (int32_t k = 0; k < 4; ++k) schedplug_pod_affinity(pod, k, &n[2 + k]);
  put(out,
      "volumes=%llu images=%llu nodeAffinity=%llu/%llu spread=%llu "
      "podAffinity=%llu/%llu/%llu/%llu",
      (unsigned long long)schedplug_pod_volume_count(pod),
      (unsigned long long)schedplug_node_image_count(node),
      (unsigned long long)n[0], (unsigned long long)n[1],
      (unsigned long long)schedplug_pod_topology_spread_count(pod),
      (unsigned long long)n[2], (unsigned long long)n[3],
      (unsigned long long)n[4], (unsigned long long)n[5]);
}

static void put_strs(out_t* out, const schedplug_str* items, uint64_t count,
                     const char* sep) {
  for (uint64_t i = 0; i < count; ++i) {
    if (i > 0) put(out, "%s", sep);
    put_str(out, items[i]);
  }
}

static void show_volumes(out_t* out, const schedplug_pod* pod,
                         const schedplug_node* node) {
  put(out, "volumes[");
  for (uint64_t i = 0; i < schedplug_pod_volume_count(pod); ++i) {
    const schedplug_volume* v = schedplug_pod_volume(pod, i);
    if (i > 0) put(out, ",");
    put_str(out, v->name);
    put(out, ":");
    put_str(out, v->source);
    put(out, ":");
    put_str(out, v->claim_name);
    put(out, v->read_only ? ":ro" : ":rw");
  }
  put(out, "] images[");
  for (uint64_t i = 0; i < schedplug_node_image_count(node); ++i) {
    const schedplug_node_image* image = schedplug_node_image_at(node, i);
    if (i > 0) put(out, ",");
    put_strs(out, image->names, image->name_count, "|");
    put(out, "=%lld", (long long)image->size_bytes);
  }
  put(out, "]");
}

static void put_requirements(out_t* out, const schedplug_pod* pod,
                             const schedplug_selector_requirement* items,
                             uint64_t count, const char* prefix) {
  for (uint64_t i = 0; i < count; ++i) {
    const schedplug_selector_requirement* r =
        schedplug_requirement_at(pod, items, i);
    put(out, ":%s", prefix);
    put_str(out, r->key);
    put(out, " ");
    put_str(out, r->op);
    put(out, " ");
    put_strs(out, r->values, r->value_count, ",");
  }
}

static void put_selector(out_t* out, const schedplug_pod* pod,
                         const schedplug_label_selector* selector) {
  if (!selector->present) return;
  put(out, " {");
  put_kvs(out, selector->match_labels, schedplug_pod_kv_size(pod));
  put_requirements(out, pod, selector->match_expressions,
                   selector->match_expression_count, "");
  put(out, "}");
}

static void show_terms(out_t* out, const schedplug_pod* pod) {
  put(out, "node[");
  int first = 1;
  for (int32_t preferred = 0; preferred <= 1; ++preferred) {
    uint64_t count = 0;
    const schedplug_node_selector_term* terms =
        schedplug_pod_node_affinity(pod, preferred, &count);
    for (uint64_t i = 0; i < count; ++i) {
      const schedplug_node_selector_term* t =
          schedplug_node_selector_term_at(pod, terms, i);
      put(out, "%s%d", first ? "" : "|", (int)t->weight);
      first = 0;
      put_requirements(out, pod, t->match_expressions,
                       t->match_expression_count, "");
      put_requirements(out, pod, t->match_fields, t->match_field_count, "f:");
    }
  }
  put(out, "] spread[");
  for (uint64_t i = 0; i < schedplug_pod_topology_spread_count(pod); ++i) {
    const schedplug_topology_spread_constraint* c =
        schedplug_pod_topology_spread(pod, i);
    put(out, "%s%d ", i == 0 ? "" : "|", (int)c->max_skew);
    put_str(out, c->topology_key);
    put(out, " ");
    put_str(out, c->when_unsatisfiable);
    put_selector(out, pod, &c->label_selector);
  }
  put(out, "] pod[");
  first = 1;
  for (int32_t which = 0; which < 4; ++which) {
    uint64_t count = 0;
    const schedplug_pod_affinity_term* terms =
        schedplug_pod_affinity(pod, which, &count);
    for (uint64_t i = 0; i < count; ++i) {
      const schedplug_pod_affinity_term* t =
          schedplug_pod_affinity_term_at(pod, terms, i);
      put(out, "%s%d/%d:", first ? "" : "|", (int)which, (int)t->weight);
      first = 0;
      put_str(out, t->topology_key);
      put_selector(out, pod, &t->label_selector);
    }
  }
  put(out, "]");
}

static schedplug_code create(const char* args, uint64_t len,
                             const schedplug_host* host, void** instance,
                             schedplug_reason* error) {
  (void)args, (void)len;
  *instance = NULL;
  if (!SCHEDPLUG_HAS_FIELD(host, schedplug_host, settings) ||
      !SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings, data)) {
    schedplug_reason_set(error, "DataEcho needs a host with ABI v1.2");
    return SCHEDPLUG_ERROR;
  }
  static const char* const known[] = {"data"};
  int64_t data = (int64_t)SCHEDPLUG_DATA_ALL;
  schedplug_code code =
      host->args_allow_only(host->context, host->args, known, 1, error);
  if (code != SCHEDPLUG_ERROR) {
    code = host->arg_int(host->context, host->args, "data", 0,
                         (int64_t)SCHEDPLUG_DATA_ALL, &data, error);
  }
  if (code == SCHEDPLUG_ERROR) return code;
  host->settings->data |= (uint64_t)data;
  return SCHEDPLUG_SUCCESS;
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  const schedplug_kv* show = schedplug_pod_label(pod, "show");
  if (show == NULL) return SCHEDPLUG_SUCCESS;
  out_t out = {{0}, 0};
  if (schedplug_str_eq(show->value, "pod")) {
    show_pod(&out, pod);
  } else if (schedplug_str_eq(show->value, "containers")) {
    show_containers(&out, pod);
  } else if (schedplug_str_eq(show->value, "node")) {
    show_node(&out, node);
  } else if (schedplug_str_eq(show->value, "pods")) {
    show_pods(&out, node);
  } else if (schedplug_str_eq(show->value, "v1.3")) {
    show_v13(&out, pod, node);
  } else if (schedplug_str_eq(show->value, "volumes")) {
    show_volumes(&out, pod, node);
  } else if (schedplug_str_eq(show->value, "terms")) {
    show_terms(&out, pod);
  } else {
    put(&out, "unknown show label");
  }
  schedplug_reason_set(reason, out.text);
  return SCHEDPLUG_UNSCHEDULABLE;
}

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "DataEcho",
    .version = "0.0.1",
    .create = create,
    .filter = filter,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
