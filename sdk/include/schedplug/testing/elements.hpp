// The test kit's small parts of pods and nodes: taints, tolerations, owner
// references, containers and their ports, the pods a node lists, the v1.3
// scheduling terms, and how a view shows only the data a plugin declared
// (SCHEDPLUG_DATA_*). Part of the test kit; include schedplug/testing.hpp.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"
#include "schedplug/runtime.hpp"

namespace schedplug::testing {

using runtime::ScoreResult;
using runtime::Verdict;

struct Taint {
  std::string key;
  std::string value;
  std::string effect = "NoSchedule";
};

struct Toleration {
  std::string key;
  std::string op = "Equal";  // or "Exists"
  std::string value;
  std::string effect;  // empty: every effect
  std::optional<int64_t> seconds;
};

// ---- ABI v1.2 declared data (SCHEDPLUG_DATA_*) --------------------------

// One owner reference of a pod (metadata.ownerReferences).
struct Owner {
  std::string kind;  // "ReplicaSet", "StatefulSet", "Job", ...
  std::string name;
  bool controller = true;  // the pod's controller (at most one per pod)
};

// One port of a container: Container("app").port({8080}) or
// .port({53, 5353, "UDP", "127.0.0.1"}).
struct ContainerPort {
  ContainerPort(int32_t container, int32_t host = 0,
                std::string protocol_name = "TCP", std::string ip = {})
      : container_port(container),
        host_port(host),
        protocol(std::move(protocol_name)),
        host_ip(std::move(ip)) {}
  int32_t container_port;
  int32_t host_port;  // 0: no host port
  std::string protocol;
  std::string host_ip;  // empty: every address
};

// One app container of a pod (spec.containers), built in a line:
// Container("app", "nginx:1.27").request("cpu", 250).limit("cpu", 500)
// .port({8080}). Requests and limits in canonical units, like Pod::request.
class Container {
 public:
  explicit Container(std::string name, std::string image = {})
      : name_(std::move(name)), image_(std::move(image)) {}
  Container& image(std::string v) {
    image_ = std::move(v);
    return *this;
  }
  Container& request(std::string resource, int64_t value) {
    requests_[std::move(resource)] = value;
    return *this;
  }
  Container& limit(std::string resource, int64_t value) {
    limits_[std::move(resource)] = value;
    return *this;
  }
  Container& port(ContainerPort p) {
    ports_.push_back(std::move(p));
    return *this;
  }
  const std::string& name() const { return name_; }

 private:
  friend class Pod;
  std::string name_, image_;
  std::map<std::string, int64_t> requests_, limits_;
  std::vector<ContainerPort> ports_;
};

// One pod already on a node, for Node::pod (the node's compact pod list):
// NodePod("web-1").label("app", "web").request("cpu", 250)
// .owner_kind("ReplicaSet").
class NodePod {
 public:
  // The name first, as Pod, the C kit's schedplug_test_node_pod and the
  // Rust kit's NodePod::new take it; the namespace by name
  // (namespace_name(ns)), or second here.
  explicit NodePod(std::string name, std::string namespace_name = "default")
      : name_(std::move(name)), namespace_(std::move(namespace_name)) {}
  NodePod& namespace_name(std::string namespace_name) {
    namespace_ = std::move(namespace_name);
    return *this;
  }
  NodePod& label(std::string k, std::string v) {
    labels_[std::move(k)] = std::move(v);
    return *this;
  }
  NodePod& priority(int32_t p) {
    priority_ = p;
    return *this;
  }
  // The pod's effective requests (as Pod::request).
  NodePod& request(std::string resource, int64_t value) {
    requests_[std::move(resource)] = value;
    return *this;
  }
  // Its controller's kind; empty (the default): no controller.
  NodePod& owner_kind(std::string kind) {
    owner_kind_ = std::move(kind);
    return *this;
  }
  const std::string& name() const { return name_; }
  const std::string& namespace_name() const { return namespace_; }

 private:
  friend class Node;
  std::string name_, namespace_;
  std::map<std::string, std::string> labels_;
  int32_t priority_ = 0;
  std::map<std::string, int64_t> requests_;
  std::string owner_kind_;
};

namespace detail {

inline schedplug_str str(const std::string& s) { return {s.data(), s.size()}; }

// Sorted by key in byte order, keys unique (plugin.h): std::map gives both.
inline void fill(const std::map<std::string, std::string>& in,
                 std::vector<schedplug_kv>& out, schedplug_kv_list& list) {
  out.clear();
  for (const auto& [k, v] : in) out.push_back({str(k), str(v)});
  list = {out.data(), out.size()};
}
inline void fill(const std::map<std::string, int64_t>& in,
                 std::vector<schedplug_resource>& out,
                 schedplug_resource_list& list) {
  out.clear();
  for (const auto& [k, v] : in) out.push_back({str(k), v});
  list = {out.data(), out.size()};
}

// The view as a host shows it to a profile whose plugins declared `data`
// (SCHEDPLUG_DATA_*): the fields of the other bits are empty.
inline schedplug_pod sent(const schedplug_pod& in, uint64_t data) {
  schedplug_pod v = in;
  if ((data & SCHEDPLUG_DATA_POD_NODE_NAME) == 0) v.node_name = {};
  if ((data & SCHEDPLUG_DATA_POD_NOMINATED_NODE) == 0) {
    v.nominated_node_name = {};
  }
  if ((data & SCHEDPLUG_DATA_POD_PRIORITY_CLASS) == 0) {
    v.priority_class_name = {};
  }
  if ((data & SCHEDPLUG_DATA_POD_OWNERS) == 0) {
    v.owners = nullptr;
    v.owner_count = 0;
  }
  if ((data & SCHEDPLUG_DATA_POD_CONTAINERS) == 0) {
    v.containers = nullptr;
    v.container_count = 0;
  }
  // v1.3
  if ((data & SCHEDPLUG_DATA_POD_VOLUMES) == 0) {
    v.volumes = nullptr;
    v.volume_count = 0;
  }
  if ((data & SCHEDPLUG_DATA_POD_NODE_AFFINITY) == 0) {
    v.node_affinity_required = v.node_affinity_preferred = nullptr;
    v.node_affinity_required_count = v.node_affinity_preferred_count = 0;
  }
  if ((data & SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD) == 0) {
    v.topology_spread = nullptr;
    v.topology_spread_count = 0;
  }
  if ((data & SCHEDPLUG_DATA_POD_AFFINITY) == 0) {
    v.pod_affinity_required = v.pod_affinity_preferred = nullptr;
    v.pod_anti_affinity_required = v.pod_anti_affinity_preferred = nullptr;
    v.pod_affinity_required_count = v.pod_affinity_preferred_count = 0;
    v.pod_anti_affinity_required_count = 0;
    v.pod_anti_affinity_preferred_count = 0;
  }
  return v;
}
inline schedplug_node sent(const schedplug_node& in, uint64_t data) {
  schedplug_node v = in;
  if ((data & SCHEDPLUG_DATA_NODE_UNSCHEDULABLE) == 0) v.unschedulable = 0;
  if ((data & SCHEDPLUG_DATA_NODE_CONDITIONS) == 0) {
    v.conditions = nullptr;
    v.condition_count = 0;
  }
  if ((data & SCHEDPLUG_DATA_NODE_CAPACITY) == 0) v.capacity = {};
  if ((data & SCHEDPLUG_DATA_NODE_PODS) == 0) {
    v.pod_list = nullptr;
    v.pod_list_count = 0;
  }
  // v1.3
  if ((data & SCHEDPLUG_DATA_NODE_IMAGES) == 0) {
    v.images = nullptr;
    v.image_count = 0;
  }
  return v;
}

// The SCHEDPLUG_DATA_* bits whose fields are filled in a view: the data a
// test gave, declared or not.
inline uint64_t carried(const schedplug_pod& v) {
  uint64_t bits = 0;
  if (v.node_name.len != 0) bits |= SCHEDPLUG_DATA_POD_NODE_NAME;
  if (v.nominated_node_name.len != 0) bits |= SCHEDPLUG_DATA_POD_NOMINATED_NODE;
  if (v.priority_class_name.len != 0) bits |= SCHEDPLUG_DATA_POD_PRIORITY_CLASS;
  if (v.owner_count != 0) bits |= SCHEDPLUG_DATA_POD_OWNERS;
  if (v.container_count != 0) bits |= SCHEDPLUG_DATA_POD_CONTAINERS;
  if (v.volume_count != 0) bits |= SCHEDPLUG_DATA_POD_VOLUMES;
  if (v.node_affinity_required_count != 0 ||
      v.node_affinity_preferred_count != 0) {
    bits |= SCHEDPLUG_DATA_POD_NODE_AFFINITY;
  }
  if (v.topology_spread_count != 0) bits |= SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD;
  if (v.pod_affinity_required_count != 0 ||
      v.pod_affinity_preferred_count != 0 ||
      v.pod_anti_affinity_required_count != 0 ||
      v.pod_anti_affinity_preferred_count != 0) {
    bits |= SCHEDPLUG_DATA_POD_AFFINITY;
  }
  return bits;
}
inline uint64_t carried(const schedplug_node& v) {
  uint64_t bits = 0;
  if (v.unschedulable != 0) bits |= SCHEDPLUG_DATA_NODE_UNSCHEDULABLE;
  if (v.condition_count != 0) bits |= SCHEDPLUG_DATA_NODE_CONDITIONS;
  if (v.capacity.count != 0) bits |= SCHEDPLUG_DATA_NODE_CAPACITY;
  if (v.pod_list_count != 0) bits |= SCHEDPLUG_DATA_NODE_PODS;
  if (v.image_count != 0) bits |= SCHEDPLUG_DATA_NODE_IMAGES;
  return bits;
}

// The constant's name of one SCHEDPLUG_DATA_* bit.
inline const char* data_bit_name(uint64_t bit) {
  switch (bit) {
    case SCHEDPLUG_DATA_POD_NODE_NAME:
      return "SCHEDPLUG_DATA_POD_NODE_NAME";
    case SCHEDPLUG_DATA_POD_NOMINATED_NODE:
      return "SCHEDPLUG_DATA_POD_NOMINATED_NODE";
    case SCHEDPLUG_DATA_POD_PRIORITY_CLASS:
      return "SCHEDPLUG_DATA_POD_PRIORITY_CLASS";
    case SCHEDPLUG_DATA_POD_OWNERS:
      return "SCHEDPLUG_DATA_POD_OWNERS";
    case SCHEDPLUG_DATA_POD_CONTAINERS:
      return "SCHEDPLUG_DATA_POD_CONTAINERS";
    case SCHEDPLUG_DATA_NODE_UNSCHEDULABLE:
      return "SCHEDPLUG_DATA_NODE_UNSCHEDULABLE";
    case SCHEDPLUG_DATA_NODE_CONDITIONS:
      return "SCHEDPLUG_DATA_NODE_CONDITIONS";
    case SCHEDPLUG_DATA_NODE_CAPACITY:
      return "SCHEDPLUG_DATA_NODE_CAPACITY";
    case SCHEDPLUG_DATA_NODE_PODS:
      return "SCHEDPLUG_DATA_NODE_PODS";
    case SCHEDPLUG_DATA_POD_VOLUMES:
      return "SCHEDPLUG_DATA_POD_VOLUMES";
    case SCHEDPLUG_DATA_NODE_IMAGES:
      return "SCHEDPLUG_DATA_NODE_IMAGES";
    case SCHEDPLUG_DATA_POD_NODE_AFFINITY:
      return "SCHEDPLUG_DATA_POD_NODE_AFFINITY";
    case SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD:
      return "SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD";
    case SCHEDPLUG_DATA_POD_AFFINITY:
      return "SCHEDPLUG_DATA_POD_AFFINITY";
    default:
      return "SCHEDPLUG_DATA_?";
  }
}
// "A", "A and B", "A, B and C" of the bits in `bits`, lowest first.
inline std::string data_bit_names(uint64_t bits) {
  std::vector<std::string> names;
  for (uint64_t bit = 1; bit != 0 && bit <= bits; bit <<= 1) {
    if ((bits & bit) != 0) names.emplace_back(data_bit_name(bit));
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace detail

// ---- ABI v1.3 terms, for Pod's builders (plugin.h has the meanings) -----
struct Requirement {
  std::string key;
  std::string op = "In";  // "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
  std::vector<std::string> values;
};
struct Selector {
  std::map<std::string, std::string> match_labels;
  std::vector<Requirement> match_expressions;
};
struct NodeTerm {
  std::vector<Requirement> match_expressions;
  std::vector<Requirement> match_fields;
};
struct SpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  std::string when_unsatisfiable = "DoNotSchedule";
  std::optional<Selector> label_selector;                // nullopt: unset
  int32_t min_domains = 0;                               // 0: unset
  std::string node_affinity_policy, node_taints_policy;  // empty: unset
  std::vector<std::string> match_label_keys;
};
struct AffinityTerm {
  std::string topology_key;
  std::optional<Selector> label_selector;  // nullopt: unset
  std::vector<std::string> namespaces;
  std::optional<Selector> namespace_selector;
  std::vector<std::string> match_label_keys, mismatch_label_keys;
};

namespace detail {
// Views of v1.3 terms; a deque keeps its elements in place as it grows.
struct TermViews {
  std::deque<std::vector<schedplug_str>> strs;
  std::deque<std::vector<schedplug_selector_requirement>> reqs;
  std::deque<std::vector<schedplug_kv>> kvs;
  void clear() {
    strs.clear();
    reqs.clear();
    kvs.clear();
  }
  const schedplug_str* strings(const std::vector<std::string>& in) {
    if (in.empty()) return nullptr;
    auto& out = strs.emplace_back();
    for (const auto& v : in) out.push_back(str(v));
    return out.data();
  }
  const schedplug_selector_requirement* requirements(
      const std::vector<Requirement>& in) {
    if (in.empty()) return nullptr;
    auto& out = reqs.emplace_back();
    for (const auto& r : in) {
      out.push_back(
          {str(r.key), str(r.op), strings(r.values), r.values.size()});
    }
    return out.data();
  }
  schedplug_label_selector selector(const std::optional<Selector>& in) {
    schedplug_label_selector out{};
    if (!in) return out;
    out.present = 1;
    fill(in->match_labels, kvs.emplace_back(), out.match_labels);
    out.match_expressions = requirements(in->match_expressions);
    out.match_expression_count = in->match_expressions.size();
    return out;
  }
};
}  // namespace detail

}  // namespace schedplug::testing
