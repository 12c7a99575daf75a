// schedplug C++ layer, part "views": Pod, Node, KeyValues, Resources --
// read-only wrappers of the borrowed C views of plugin.h, indexed with the
// element sizes the host sends. Included by <schedplug/plugin.hpp>.
// Over 400 lines because it wraps every struct of plugin.h a plugin reads, one
// accessor per field, in the order the ABI versions added them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

#include "schedplug/plugin.h"

namespace schedplug {

// ---------------------------------------------------------------------------
// Views over the borrowed C structs. All of them are cheap to copy and valid
// only during the hook call that received them.
// ---------------------------------------------------------------------------

namespace detail {

inline std::string_view sv(schedplug_str s) {
  return s.len == 0 ? std::string_view{} : std::string_view{s.data, s.len};
}

inline schedplug_str str(std::string_view s) { return {s.data(), s.size()}; }

// Binary search over a list sorted by `key_of` in byte order (plugin.h),
// whose entries are `stride` bytes apart.
template <class Item, class KeyOf>
const Item* find_sorted(const Item* items, uint64_t count, uint64_t stride,
                        std::string_view key, KeyOf key_of) {
  const schedplug_str k = str(key);
  uint64_t lo = 0, hi = count;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    const Item& item =
        *static_cast<const Item*>(schedplug_element_at(items, stride, mid));
    const int c = schedplug_str_cmp(key_of(item), k);
    if (c == 0) return &item;
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return nullptr;
}

}  // namespace detail

// Labels, annotations or a node selector: a sorted, read-only map.
class KeyValues {
 public:
  KeyValues() = default;
  // `stride`: the element size the view gives (plugin.h's *_kv_size()).
  explicit KeyValues(schedplug_kv_list list,
                     uint64_t stride = sizeof(schedplug_kv))
      : list_(list), stride_(stride) {}

  // The value of `key` (exact, case-sensitive match), or nullopt.
  std::optional<std::string_view> get(std::string_view key) const {
    const schedplug_kv* kv =
        detail::find_sorted(list_.items, list_.count, stride_, key,
                            [](const schedplug_kv& e) { return e.key; });
    if (kv == nullptr) return std::nullopt;
    return detail::sv(kv->value);
  }
  bool contains(std::string_view key) const { return get(key).has_value(); }
  size_t size() const { return list_.count; }
  bool empty() const { return list_.count == 0; }

  struct Entry {
    std::string_view key;
    std::string_view value;
  };
  class iterator {
   public:
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const char* p, uint64_t stride) : p_(p), stride_(stride) {}
    Entry operator*() const {
      const auto* kv = reinterpret_cast<const schedplug_kv*>(p_);
      return {detail::sv(kv->key), detail::sv(kv->value)};
    }
    iterator& operator++() {
      p_ += stride_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      p_ += stride_;
      return old;
    }
    bool operator==(const iterator& o) const { return p_ == o.p_; }

   private:
    const char* p_ = nullptr;
    uint64_t stride_ = sizeof(schedplug_kv);
  };
  iterator begin() const {
    return iterator(reinterpret_cast<const char*>(list_.items), stride_);
  }
  iterator end() const {
    return iterator(
        reinterpret_cast<const char*>(list_.items) + list_.count * stride_,
        stride_);
  }

 private:
  schedplug_kv_list list_{};
  uint64_t stride_ = sizeof(schedplug_kv);
};

// Resource quantities in canonical units (cpu in millicores, memory in
// bytes, pods as a count). An absent resource is 0.
class Resources {
 public:
  Resources() = default;
  explicit Resources(schedplug_resource_list list,
                     uint64_t stride = sizeof(schedplug_resource))
      : list_(list), stride_(stride) {}

  int64_t get(std::string_view name) const {
    const schedplug_resource* r =
        detail::find_sorted(list_.items, list_.count, stride_, name,
                            [](const schedplug_resource& e) { return e.name; });
    return r == nullptr ? 0 : r->value;
  }
  size_t size() const { return list_.count; }
  struct Entry {
    std::string_view name;
    int64_t value;
  };
  // Entry `i`, in name order.
  Entry at(size_t i) const {
    const auto* r = static_cast<const schedplug_resource*>(
        schedplug_element_at(list_.items, stride_, i));
    return {detail::sv(r->name), r->value};
  }

 private:
  schedplug_resource_list list_{};
  uint64_t stride_ = sizeof(schedplug_resource);
};

struct Taint {
  std::string_view key;
  std::string_view value;
  std::string_view effect;  // "NoSchedule", "PreferNoSchedule", "NoExecute"
};

struct Toleration {
  std::string_view key;
  std::string_view op;  // "Equal" (also when empty) or "Exists"
  std::string_view value;
  std::string_view effect;  // empty matches every effect
  std::optional<int64_t> toleration_seconds;
};

// ABI v1.2 data (sent only when a plugin declares it: kData, or
// Settings::data in Configure).

// An owner reference of the pod (SCHEDPLUG_DATA_POD_OWNERS).
struct Owner {
  std::string_view kind;  // "ReplicaSet", "StatefulSet", "Job", ...
  std::string_view name;
  bool controller = false;
};

struct ContainerPort {
  int32_t container_port = 0;
  int32_t host_port = 0;      // 0: none
  std::string_view protocol;  // "TCP", "UDP", "SCTP"
  std::string_view host_ip;
};

// One app container of the pod (SCHEDPLUG_DATA_POD_CONTAINERS).
class Container {
 public:
  Container(const schedplug_pod& pod, const schedplug_container& c)
      : pod_(&pod), c_(&c) {}
  std::string_view name() const { return detail::sv(c_->name); }
  std::string_view image() const { return detail::sv(c_->image); }
  Resources requests() const {
    return Resources(c_->requests, schedplug_pod_resource_size(pod_));
  }
  Resources limits() const {
    return Resources(c_->limits, schedplug_pod_resource_size(pod_));
  }
  size_t port_count() const { return c_->port_count; }
  ContainerPort port(size_t i) const {
    const schedplug_container_port& p =
        *schedplug_container_port_at(pod_, c_, i);
    return {p.container_port, p.host_port, detail::sv(p.protocol),
            detail::sv(p.host_ip)};
  }

 private:
  const schedplug_pod* pod_;
  const schedplug_container* c_;
};

// A node condition (SCHEDPLUG_DATA_NODE_CONDITIONS).
struct NodeCondition {
  std::string_view type;    // "Ready", "MemoryPressure", ...
  std::string_view status;  // "True", "False", "Unknown"
};

// One pod already on a node (SCHEDPLUG_DATA_NODE_PODS).
class NodePod {
 public:
  NodePod(const schedplug_node& node, const schedplug_node_pod& p)
      : node_(&node), p_(&p) {}
  std::string_view namespace_name() const {
    return detail::sv(p_->namespace_name);
  }
  std::string_view name() const { return detail::sv(p_->name); }
  KeyValues labels() const {
    return KeyValues(p_->labels, schedplug_node_kv_size(node_));
  }
  std::optional<std::string_view> label(std::string_view key) const {
    return labels().get(key);
  }
  int32_t priority() const { return p_->priority; }
  Resources requests() const {
    return Resources(p_->requests, schedplug_node_resource_size(node_));
  }
  // Its controller's kind ("ReplicaSet", ...); empty when it has none.
  std::string_view owner_kind() const { return detail::sv(p_->owner_kind); }

 private:
  const schedplug_node* node_;
  const schedplug_node_pod* p_;
};

// ABI v1.3 data.

// A volume of the pod (SCHEDPLUG_DATA_POD_VOLUMES).
struct Volume {
  std::string_view name;
  // Its source's key in the pod spec: "persistentVolumeClaim",
  // "ephemeral", "configMap", "secret", "emptyDir", "hostPath", ...
  std::string_view source;
  // The PersistentVolumeClaim it uses ("<pod>-<volume>" for a generic
  // ephemeral volume); empty for other sources.
  std::string_view claim_name;
  bool read_only = false;
};

// An image the node holds (SCHEDPLUG_DATA_NODE_IMAGES).
class NodeImage {
 public:
  explicit NodeImage(const schedplug_node_image& image) : i_(&image) {}
  size_t name_count() const { return i_->name_count; }
  std::string_view name(size_t i) const { return detail::sv(i_->names[i]); }
  // True when one of its names is `name`.
  bool has_name(std::string_view name) const {
    for (size_t i = 0; i < name_count(); ++i) {
      if (this->name(i) == name) return true;
    }
    return false;
  }
  int64_t size_bytes() const { return i_->size_bytes; }

 private:
  const schedplug_node_image* i_;
};

// A borrowed array of strings (selector values, namespaces, label keys).
class Strings {
 public:
  Strings() = default;
  Strings(const schedplug_str* items, uint64_t count)
      : items_(items), count_(count) {}
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::string_view operator[](size_t i) const { return detail::sv(items_[i]); }
  bool contains(std::string_view s) const {
    for (size_t i = 0; i < count_; ++i) {
      if ((*this)[i] == s) return true;
    }
    return false;
  }

 private:
  const schedplug_str* items_ = nullptr;
  uint64_t count_ = 0;
};

// One selector requirement: `op` "In", "NotIn", "Exists", "DoesNotExist",
// "Gt" or "Lt".
struct SelectorRequirement {
  SelectorRequirement(const schedplug_pod&,
                      const schedplug_selector_requirement& r)
      : key(detail::sv(r.key)),
        op(detail::sv(r.op)),
        values(r.values, r.value_count) {}
  std::string_view key;
  std::string_view op;
  Strings values;
};

// A list of the pod's `Raw` elements (their element size from the pod
// view), read as `View`s: size() and operator[].
template <class View, class Raw>
class PodList {
 public:
  PodList() = default;
  PodList(const schedplug_pod* pod, const Raw* items, uint64_t count,
          uint64_t stride)
      : pod_(pod), items_(items), count_(count), stride_(stride) {}
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  View operator[](size_t i) const {
    return View(*pod_, *static_cast<const Raw*>(
                           schedplug_element_at(items_, stride_, i)));
  }

 private:
  const schedplug_pod* pod_ = nullptr;
  const Raw* items_ = nullptr;
  uint64_t count_ = 0;
  uint64_t stride_ = sizeof(Raw);
};

using Requirements =
    PodList<SelectorRequirement, schedplug_selector_requirement>;

namespace detail {
inline Requirements requirements(const schedplug_pod& pod,
                                 const schedplug_selector_requirement* items,
                                 uint64_t count) {
  return Requirements(
      &pod, items, count,
      schedplug_element_size(pod.requirement_size,
                             sizeof(schedplug_selector_requirement)));
}
}  // namespace detail

// A label selector; present() is false when the field is unset (nil).
class LabelSelector {
 public:
  LabelSelector(const schedplug_pod& pod, const schedplug_label_selector& s)
      : pod_(&pod), s_(&s) {}
  bool present() const { return s_->present != 0; }
  KeyValues match_labels() const {
    return KeyValues(s_->match_labels, schedplug_pod_kv_size(pod_));
  }
  Requirements match_expressions() const {
    return detail::requirements(*pod_, s_->match_expressions,
                                s_->match_expression_count);
  }

 private:
  const schedplug_pod* pod_;
  const schedplug_label_selector* s_;
};

// A node selector term of the pod's node affinity.
class NodeSelectorTerm {
 public:
  NodeSelectorTerm(const schedplug_pod& pod,
                   const schedplug_node_selector_term& t)
      : pod_(&pod), t_(&t) {}
  int32_t weight() const { return t_->weight; }  // 0 for a required term
  Requirements match_expressions() const {
    return detail::requirements(*pod_, t_->match_expressions,
                                t_->match_expression_count);
  }
  Requirements match_fields() const {
    return detail::requirements(*pod_, t_->match_fields, t_->match_field_count);
  }

 private:
  const schedplug_pod* pod_;
  const schedplug_node_selector_term* t_;
};

// A topology spread constraint of the pod.
class TopologySpreadConstraint {
 public:
  TopologySpreadConstraint(const schedplug_pod& pod,
                           const schedplug_topology_spread_constraint& c)
      : pod_(&pod), c_(&c) {}
  int32_t max_skew() const { return c_->max_skew; }
  int32_t min_domains() const { return c_->min_domains; }  // 0: unset
  std::string_view topology_key() const { return detail::sv(c_->topology_key); }
  // "DoNotSchedule" or "ScheduleAnyway".
  std::string_view when_unsatisfiable() const {
    return detail::sv(c_->when_unsatisfiable);
  }
  LabelSelector label_selector() const {
    return LabelSelector(*pod_, c_->label_selector);
  }
  // "Honor", "Ignore"; empty: unset.
  std::string_view node_affinity_policy() const {
    return detail::sv(c_->node_affinity_policy);
  }
  std::string_view node_taints_policy() const {
    return detail::sv(c_->node_taints_policy);
  }
  Strings match_label_keys() const {
    return Strings(c_->match_label_keys, c_->match_label_key_count);
  }

 private:
  const schedplug_pod* pod_;
  const schedplug_topology_spread_constraint* c_;
};

// A pod affinity or anti-affinity term.
class PodAffinityTerm {
 public:
  PodAffinityTerm(const schedplug_pod& pod,
                  const schedplug_pod_affinity_term& t)
      : pod_(&pod), t_(&t) {}
  int32_t weight() const { return t_->weight; }  // 0 for a required term
  std::string_view topology_key() const { return detail::sv(t_->topology_key); }
  LabelSelector label_selector() const {
    return LabelSelector(*pod_, t_->label_selector);
  }
  Strings namespaces() const {
    return Strings(t_->namespaces, t_->namespace_count);
  }
  LabelSelector namespace_selector() const {
    return LabelSelector(*pod_, t_->namespace_selector);
  }
  Strings match_label_keys() const {
    return Strings(t_->match_label_keys, t_->match_label_key_count);
  }
  Strings mismatch_label_keys() const {
    return Strings(t_->mismatch_label_keys, t_->mismatch_label_key_count);
  }

 private:
  const schedplug_pod* pod_;
  const schedplug_pod_affinity_term* t_;
};

using NodeSelectorTerms =
    PodList<NodeSelectorTerm, schedplug_node_selector_term>;
using TopologySpreadConstraints =
    PodList<TopologySpreadConstraint, schedplug_topology_spread_constraint>;
using PodAffinityTerms = PodList<PodAffinityTerm, schedplug_pod_affinity_term>;

// The pod being scheduled.
class Pod {
 public:
  explicit Pod(const schedplug_pod& pod) : p_(&pod) {}

  std::string_view namespace_name() const {
    return detail::sv(p_->namespace_name);
  }
  std::string_view name() const { return detail::sv(p_->name); }
  std::string_view uid() const { return detail::sv(p_->uid); }
  int32_t priority() const { return p_->priority; }

  std::optional<std::string_view> label(std::string_view key) const {
    return labels().get(key);
  }
  std::optional<std::string_view> annotation(std::string_view key) const {
    return annotations().get(key);
  }
  KeyValues labels() const {
    return KeyValues(p_->labels, schedplug_pod_kv_size(p_));
  }
  KeyValues annotations() const {
    return KeyValues(p_->annotations, schedplug_pod_kv_size(p_));
  }
  KeyValues node_selector() const {
    return KeyValues(p_->node_selector, schedplug_pod_kv_size(p_));
  }

  // The pod's effective request of `resource` (0 when it requests none).
  int64_t request(std::string_view resource) const {
    return requests().get(resource);
  }
  Resources requests() const {
    return Resources(p_->requests, schedplug_pod_resource_size(p_));
  }

  size_t toleration_count() const { return p_->toleration_count; }
  Toleration toleration(size_t i) const {
    const schedplug_toleration& t = *schedplug_pod_toleration(p_, i);
    Toleration out{detail::sv(t.key), detail::sv(t.op), detail::sv(t.value),
                   detail::sv(t.effect), std::nullopt};
    if (t.has_toleration_seconds != 0)
      out.toleration_seconds = t.toleration_seconds;
    return out;
  }

  // ABI v1.2 data: empty unless a plugin declared it (kData).
  // spec.nodeName (SCHEDPLUG_DATA_POD_NODE_NAME).
  std::string_view node_name() const {
    return detail::sv(schedplug_pod_node_name(p_));
  }
  // status.nominatedNodeName (SCHEDPLUG_DATA_POD_NOMINATED_NODE).
  std::string_view nominated_node_name() const {
    return detail::sv(schedplug_pod_nominated_node_name(p_));
  }
  // spec.priorityClassName (SCHEDPLUG_DATA_POD_PRIORITY_CLASS).
  std::string_view priority_class_name() const {
    return detail::sv(schedplug_pod_priority_class_name(p_));
  }
  size_t owner_count() const { return schedplug_pod_owner_count(p_); }
  Owner owner(size_t i) const {
    const schedplug_owner& o = *schedplug_pod_owner(p_, i);
    return {detail::sv(o.kind), detail::sv(o.name), o.controller != 0};
  }
  size_t container_count() const { return schedplug_pod_container_count(p_); }
  Container container(size_t i) const {
    return Container(*p_, *schedplug_pod_container(p_, i));
  }

  // ABI v1.3 data: empty unless a plugin declared it (kData).
  // spec.volumes (SCHEDPLUG_DATA_POD_VOLUMES), in spec order.
  size_t volume_count() const { return schedplug_pod_volume_count(p_); }
  Volume volume(size_t i) const {
    const schedplug_volume& v = *schedplug_pod_volume(p_, i);
    return {detail::sv(v.name), detail::sv(v.source), detail::sv(v.claim_name),
            v.read_only != 0};
  }
  // spec.affinity.nodeAffinity (SCHEDPLUG_DATA_POD_NODE_AFFINITY): the
  // required terms (a node must match one) and the weighted preferred ones.
  NodeSelectorTerms node_affinity_required() const { return node_terms(0); }
  NodeSelectorTerms node_affinity_preferred() const { return node_terms(1); }
  // spec.topologySpreadConstraints (SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD).
  TopologySpreadConstraints topology_spread() const {
    const uint64_t count = schedplug_pod_topology_spread_count(p_);
    if (count == 0) return {};  // also: an older host's view ends earlier
    return TopologySpreadConstraints(
        p_, p_->topology_spread, count,
        schedplug_element_size(p_->topology_spread_size,
                               sizeof(schedplug_topology_spread_constraint)));
  }
  // spec.affinity.podAffinity / podAntiAffinity
  // (SCHEDPLUG_DATA_POD_AFFINITY).
  PodAffinityTerms pod_affinity_required() const {
    return pod_terms(SCHEDPLUG_POD_AFFINITY_REQUIRED);
  }
  PodAffinityTerms pod_affinity_preferred() const {
    return pod_terms(SCHEDPLUG_POD_AFFINITY_PREFERRED);
  }
  PodAffinityTerms pod_anti_affinity_required() const {
    return pod_terms(SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED);
  }
  PodAffinityTerms pod_anti_affinity_preferred() const {
    return pod_terms(SCHEDPLUG_POD_ANTI_AFFINITY_PREFERRED);
  }

  const schedplug_pod& raw() const { return *p_; }

 private:
  NodeSelectorTerms node_terms(int32_t preferred) const {
    uint64_t count = 0;
    const schedplug_node_selector_term* terms =
        schedplug_pod_node_affinity(p_, preferred, &count);
    if (count == 0) return {};
    return NodeSelectorTerms(
        p_, terms, count,
        schedplug_element_size(p_->node_selector_term_size,
                               sizeof(schedplug_node_selector_term)));
  }
  PodAffinityTerms pod_terms(int32_t which) const {
    uint64_t count = 0;
    const schedplug_pod_affinity_term* terms =
        schedplug_pod_affinity(p_, which, &count);
    if (count == 0) return {};
    return PodAffinityTerms(
        p_, terms, count,
        schedplug_element_size(p_->pod_affinity_term_size,
                               sizeof(schedplug_pod_affinity_term)));
  }

  const schedplug_pod* p_;
};

// One node of the scheduler's snapshot.
class Node {
 public:
  explicit Node(const schedplug_node& node) : n_(&node) {}

  std::string_view name() const { return detail::sv(n_->name); }

  std::optional<std::string_view> label(std::string_view key) const {
    return labels().get(key);
  }
  std::optional<std::string_view> annotation(std::string_view key) const {
    return annotations().get(key);
  }
  KeyValues labels() const {
    return KeyValues(n_->labels, schedplug_node_kv_size(n_));
  }
  KeyValues annotations() const {
    return KeyValues(n_->annotations, schedplug_node_kv_size(n_));
  }

  size_t taint_count() const { return n_->taint_count; }
  Taint taint(size_t i) const {
    const schedplug_taint& t = *schedplug_node_taint(n_, i);
    return {detail::sv(t.key), detail::sv(t.value), detail::sv(t.effect)};
  }

  int64_t allocatable(std::string_view resource) const {
    return allocatable().get(resource);
  }
  // Sum of the requests of the pods already on the node.
  int64_t requested(std::string_view resource) const {
    return requested().get(resource);
  }
  // allocatable - requested (may be negative on an overcommitted node).
  int64_t free(std::string_view resource) const {
    return allocatable(resource) - requested(resource);
  }
  Resources allocatable() const {
    return Resources(n_->allocatable, schedplug_node_resource_size(n_));
  }
  Resources requested() const {
    return Resources(n_->requested, schedplug_node_resource_size(n_));
  }
  uint32_t pod_count() const { return n_->pod_count; }

  // ABI v1.2 data: empty unless a plugin declared it (kData).
  // spec.unschedulable (SCHEDPLUG_DATA_NODE_UNSCHEDULABLE).
  bool unschedulable() const { return schedplug_node_unschedulable(n_) != 0; }
  size_t condition_count() const { return schedplug_node_condition_count(n_); }
  NodeCondition condition(size_t i) const {
    const schedplug_node_condition& c = *schedplug_node_condition_at(n_, i);
    return {detail::sv(c.type), detail::sv(c.status)};
  }
  // The status of condition `type` ("True", ...), or nullopt.
  std::optional<std::string_view> condition_status(
      std::string_view type) const {
    for (size_t i = 0; i < condition_count(); ++i) {
      if (condition(i).type == type) return condition(i).status;
    }
    return std::nullopt;
  }
  // status.capacity (SCHEDPLUG_DATA_NODE_CAPACITY).
  int64_t capacity(std::string_view resource) const {
    return capacity().get(resource);
  }
  Resources capacity() const {
    if (!SCHEDPLUG_HAS_FIELD(n_, schedplug_node, node_pod_size)) return {};
    return Resources(n_->capacity, schedplug_node_resource_size(n_));
  }
  // The pods on the node (SCHEDPLUG_DATA_NODE_PODS), sorted by namespace
  // then name.
  size_t pod_list_count() const { return schedplug_node_pod_list_count(n_); }
  NodePod pod_list(size_t i) const {
    return NodePod(*n_, *schedplug_node_pod_at(n_, i));
  }

  // ABI v1.3 data: empty unless a plugin declared it (kData).
  // status.images (SCHEDPLUG_DATA_NODE_IMAGES).
  size_t image_count() const { return schedplug_node_image_count(n_); }
  NodeImage image(size_t i) const {
    return NodeImage(*schedplug_node_image_at(n_, i));
  }

  const schedplug_node& raw() const { return *n_; }

 private:
  const schedplug_node* n_;
};

inline std::string_view node_name(const schedplug_node_score& s) {
  return detail::sv(s.node_name);
}

}  // namespace schedplug
