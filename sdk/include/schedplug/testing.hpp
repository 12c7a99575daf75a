// schedplug test kit: test a built plugin .so the way schedplug-host runs it.
//
//   #include <schedplug/testing.hpp>
//   namespace st = schedplug::testing;
//
//   auto plugin = st::Plugin::load("build/spare_cpu.so",
//   R"({"headroomMillicores": 500})"); st::Pod pod =
//   st::Pod("web").request("cpu", 250); std::vector<st::Node> nodes = {
//       st::Node("roomy").allocatable("cpu", 4000).requested("cpu", 1000),
//       st::Node("full").allocatable("cpu", 1000).requested("cpu", 700)};
//   st::Cycle cycle = plugin->run(pod, nodes);   // filter, score, normalize
//   std::string diff = st::compare(cycle, {
//       {"roomy", SCHEDPLUG_SUCCESS, "", 100},
//       {"full", SCHEDPLUG_UNSCHEDULABLE, "node(s) would keep less than 500m
//       CPU spare"}});
//   // diff is empty when the table matches; else it says which cells differ.
//
// Loading (dlopen RTLD_NOW | RTLD_LOCAL), the descriptor checks, create()
// with the host's typed-args services, the status codes and reasons, the
// per-pod begin/end and the normalization are the host's own rules
// (schedplug/runtime.hpp, which schedplug-host compiles too), so a plugin
// passes here exactly when the host would accept its answers. What the kit
// does not do: the host's file checks (owner, mode, digest), deadlines,
// refresh threads and parallel calls.
//
// Declared events (SCHEDPLUG_EVENT_*): plugin->requeue_problem(pod, before,
// after) says whether the events the plugin declared requeue a pod it
// rejected on `before` and passes on `after`; plugin->run_after(pod,
// before_nodes, nodes) checks that on every node of a cycle
// (schedplug/testing_events.hpp).
//
// C-callable functions for tests written in C: schedplug/testing.h.
// Header-only, C++20; needs nlohmann/json (like the C++ layer) and -ldl.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"
#include "schedplug/runtime.hpp"

namespace schedplug::testing {

using runtime::ScoreResult;
using runtime::Verdict;

// Load or create failed; what() is the message schedplug-host would give.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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

// A pod, built in a line: Pod("web").label("app", "web").request("cpu", 250).
// Resources are in canonical units (plugin.h): cpu in millicores, memory
// and ephemeral-storage in bytes, others as counts. view() is valid until
// the Pod changes or is destroyed, and safe to read from several threads.
class Pod {
 public:
  explicit Pod(std::string name = "pod",
               std::string namespace_name = "default") {
    d_.name = std::move(name);
    d_.namespace_name = std::move(namespace_name);
    rebuild();
  }
  Pod(const Pod& other) : d_(other.d_) { rebuild(); }
  Pod& operator=(const Pod& other) {
    d_ = other.d_;
    rebuild();
    return *this;
  }

  Pod& uid(std::string v) {
    return change([&] { d_.uid = std::move(v); });
  }
  Pod& label(std::string k, std::string v) {
    return change([&] { d_.labels[std::move(k)] = std::move(v); });
  }
  Pod& annotation(std::string k, std::string v) {
    return change([&] { d_.annotations[std::move(k)] = std::move(v); });
  }
  Pod& node_selector(std::string k, std::string v) {
    return change([&] { d_.selector[std::move(k)] = std::move(v); });
  }
  Pod& request(std::string resource, int64_t value) {
    return change([&] { d_.requests[std::move(resource)] = value; });
  }
  Pod& toleration(Toleration t) {
    return change([&] { d_.tolerations.push_back(std::move(t)); });
  }
  Pod& priority(int32_t p) {
    return change([&] { d_.priority = p; });
  }
  // Data a plugin declares (SCHEDPLUG_DATA_*, ABI v1.2). A Plugin shows
  // the plugin only the data it declared (the rest empty), as schedplug-host
  // does when no other plugin of the profile declared more.
  Pod& node_name(std::string v) {
    return change([&] { d_.node_name = std::move(v); });
  }
  Pod& nominated_node_name(std::string v) {
    return change([&] { d_.nominated_node_name = std::move(v); });
  }
  Pod& priority_class_name(std::string v) {
    return change([&] { d_.priority_class_name = std::move(v); });
  }
  // Owner references, in the order given.
  Pod& owner(std::string kind, std::string name, bool controller = true) {
    return change([&] {
      d_.owners.push_back({std::move(kind), std::move(name), controller});
    });
  }
  // App containers in spec order; a container with the name of one already
  // added replaces it (names are unique in a pod).
  Pod& container(Container c) {
    return change([&] {
      for (Container& have : d_.containers) {
        if (have.name_ == c.name_) {
          have = std::move(c);
          return;
        }
      }
      d_.containers.push_back(std::move(c));
    });
  }

  // ---- ABI v1.3 data (SCHEDPLUG_DATA_POD_VOLUMES, ...), as for v1.2 ----
  // A volume: `source` is its source's key in the pod spec
  // ("persistentVolumeClaim", "ephemeral", "configMap", ...), `claim_name`
  // its PVC ("<pod>-<volume>" for an ephemeral volume), else empty.
  Pod& volume(std::string name, std::string source, std::string claim_name = {},
              bool read_only = false) {
    return change([&] {
      d_.v13.volumes.push_back({std::move(name), std::move(source),
                                std::move(claim_name), read_only});
    });
  }

  Pod& node_affinity_required(NodeTerm t) {
    return change([&] {
      d_.v13.node_affinity[0].push_back({0, std::move(t)});
    });
  }
  Pod& node_affinity_preferred(int32_t weight, NodeTerm t) {
    return change([&] {
      d_.v13.node_affinity[1].push_back({weight, std::move(t)});
    });
  }
  Pod& topology_spread(SpreadConstraint c) {
    return change([&] { d_.v13.spread.push_back(std::move(c)); });
  }
  Pod& pod_affinity_required(AffinityTerm t) {
    return affinity(SCHEDPLUG_POD_AFFINITY_REQUIRED, 0, std::move(t));
  }
  Pod& pod_affinity_preferred(int32_t weight, AffinityTerm t) {
    return affinity(SCHEDPLUG_POD_AFFINITY_PREFERRED, weight, std::move(t));
  }
  Pod& pod_anti_affinity_required(AffinityTerm t) {
    return affinity(SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED, 0, std::move(t));
  }
  Pod& pod_anti_affinity_preferred(int32_t weight, AffinityTerm t) {
    return affinity(SCHEDPLUG_POD_ANTI_AFFINITY_PREFERRED, weight,
                    std::move(t));
  }

  const std::string& name() const { return d_.name; }
  const schedplug_pod& view() const { return view_; }

 private:
  struct Data {
    std::string name, namespace_name, uid = "uid-1";
    std::map<std::string, std::string> labels, annotations, selector;
    std::map<std::string, int64_t> requests;
    std::vector<Toleration> tolerations;
    int32_t priority = 0;
    std::string node_name, nominated_node_name, priority_class_name;
    std::vector<Owner> owners;
    std::vector<Container> containers;
    // ABI v1.3 data.
    struct V13 {
      struct Volume {
        std::string name, source, claim_name;
        bool read_only = false;
      };
      std::vector<Volume> volumes;
      std::vector<std::pair<int32_t, NodeTerm>> node_affinity[2];
      std::vector<SpreadConstraint> spread;
      std::vector<std::pair<int32_t, AffinityTerm>> pod_affinity[4];
    } v13;
  };
  template <class F>
  Pod& change(F&& f) {
    f();
    rebuild();
    return *this;
  }
  void rebuild() {
    view_ = schedplug_pod{};
    view_.struct_size = sizeof(schedplug_pod);
    runtime::set_element_sizes(view_);
    view_.namespace_name = detail::str(d_.namespace_name);
    view_.name = detail::str(d_.name);
    view_.uid = detail::str(d_.uid);
    view_.priority = d_.priority;
    view_.node_name = detail::str(d_.node_name);
    view_.nominated_node_name = detail::str(d_.nominated_node_name);
    view_.priority_class_name = detail::str(d_.priority_class_name);
    detail::fill(d_.labels, kv_[0], view_.labels);
    detail::fill(d_.annotations, kv_[1], view_.annotations);
    detail::fill(d_.selector, kv_[2], view_.node_selector);
    detail::fill(d_.requests, resources_, view_.requests);
    tolerations_.clear();
    for (const auto& t : d_.tolerations) {
      tolerations_.push_back({detail::str(t.key), detail::str(t.op),
                              detail::str(t.value), detail::str(t.effect),
                              t.seconds.has_value() ? 1 : 0,
                              t.seconds.value_or(0)});
    }
    view_.tolerations = tolerations_.data();
    view_.toleration_count = tolerations_.size();
    // v1.2 lists as the host builds them: NULL when empty, containers'
    // requests and limits sorted by name.
    owners_.clear();
    for (const Owner& o : d_.owners) {
      owners_.push_back(
          {detail::str(o.kind), detail::str(o.name), o.controller ? 1 : 0});
    }
    view_.owners = owners_.empty() ? nullptr : owners_.data();
    view_.owner_count = owners_.size();
    containers_.clear();
    container_resources_.assign(2 * d_.containers.size(), {});
    container_ports_.assign(d_.containers.size(), {});
    for (size_t i = 0; i < d_.containers.size(); ++i) {
      const Container& c = d_.containers[i];
      schedplug_container v{};
      v.name = detail::str(c.name_);
      v.image = detail::str(c.image_);
      detail::fill(c.requests_, container_resources_[2 * i], v.requests);
      detail::fill(c.limits_, container_resources_[2 * i + 1], v.limits);
      auto& ports = container_ports_[i];
      for (const ContainerPort& p : c.ports_) {
        ports.push_back({p.container_port, p.host_port, detail::str(p.protocol),
                         detail::str(p.host_ip)});
      }
      v.ports = ports.empty() ? nullptr : ports.data();
      v.port_count = ports.size();
      containers_.push_back(v);
    }
    view_.containers = containers_.empty() ? nullptr : containers_.data();
    view_.container_count = containers_.size();
    rebuild_v13();
  }
  void rebuild_v13() {
    volumes_.clear();
    for (const auto& v : d_.v13.volumes) {
      volumes_.push_back({detail::str(v.name), detail::str(v.source),
                          detail::str(v.claim_name), v.read_only ? 1 : 0});
    }
    view_.volumes = volumes_.empty() ? nullptr : volumes_.data();
    view_.volume_count = volumes_.size();
    terms_.clear();
    for (int k = 0; k < 2; ++k) {
      node_terms_[k].clear();
      for (const auto& [weight, t] : d_.v13.node_affinity[k]) {
        node_terms_[k].push_back(
            {weight, terms_.requirements(t.match_expressions),
             t.match_expressions.size(), terms_.requirements(t.match_fields),
             t.match_fields.size()});
      }
    }
    const auto or_null = [](const auto& v) {
      return v.empty() ? nullptr : v.data();
    };
    view_.node_affinity_required = or_null(node_terms_[0]);
    view_.node_affinity_required_count = node_terms_[0].size();
    view_.node_affinity_preferred = or_null(node_terms_[1]);
    view_.node_affinity_preferred_count = node_terms_[1].size();
    spread_.clear();
    for (const auto& c : d_.v13.spread) {
      spread_.push_back(
          {c.max_skew, c.min_domains, detail::str(c.topology_key),
           detail::str(c.when_unsatisfiable), terms_.selector(c.label_selector),
           detail::str(c.node_affinity_policy),
           detail::str(c.node_taints_policy),
           terms_.strings(c.match_label_keys), c.match_label_keys.size()});
    }
    view_.topology_spread = spread_.empty() ? nullptr : spread_.data();
    view_.topology_spread_count = spread_.size();
    for (int k = 0; k < 4; ++k) {
      affinity_[k].clear();
      for (const auto& [weight, t] : d_.v13.pod_affinity[k]) {
        affinity_[k].push_back(
            {weight, detail::str(t.topology_key),
             terms_.selector(t.label_selector), terms_.strings(t.namespaces),
             t.namespaces.size(), terms_.selector(t.namespace_selector),
             terms_.strings(t.match_label_keys), t.match_label_keys.size(),
             terms_.strings(t.mismatch_label_keys),
             t.mismatch_label_keys.size()});
      }
    }
    view_.pod_affinity_required = or_null(affinity_[0]);
    view_.pod_affinity_required_count = affinity_[0].size();
    view_.pod_affinity_preferred = or_null(affinity_[1]);
    view_.pod_affinity_preferred_count = affinity_[1].size();
    view_.pod_anti_affinity_required = or_null(affinity_[2]);
    view_.pod_anti_affinity_required_count = affinity_[2].size();
    view_.pod_anti_affinity_preferred = or_null(affinity_[3]);
    view_.pod_anti_affinity_preferred_count = affinity_[3].size();
  }
  Pod& affinity(int32_t which, int32_t weight, AffinityTerm t) {
    return change([&] {
      d_.v13.pod_affinity[which].push_back({weight, std::move(t)});
    });
  }

  Data d_;
  schedplug_pod view_{};
  // v1.3
  std::vector<schedplug_volume> volumes_;
  detail::TermViews terms_;
  std::vector<schedplug_node_selector_term> node_terms_[2];
  std::vector<schedplug_topology_spread_constraint> spread_;
  std::vector<schedplug_pod_affinity_term> affinity_[4];
  std::vector<schedplug_kv> kv_[3];
  std::vector<schedplug_resource> resources_;
  std::vector<schedplug_toleration> tolerations_;
  std::vector<schedplug_owner> owners_;
  std::vector<schedplug_container> containers_;
  std::vector<std::vector<schedplug_resource>> container_resources_;
  std::vector<std::vector<schedplug_container_port>> container_ports_;
};

// A node, built in a line: Node("n1").label("zone", "a")
// .allocatable("cpu", 4000).requested("cpu", 1000).
class Node {
 public:
  explicit Node(std::string name) {
    d_.name = std::move(name);
    rebuild();
  }
  Node(const Node& other) : d_(other.d_) { rebuild(); }
  Node& operator=(const Node& other) {
    d_ = other.d_;
    rebuild();
    return *this;
  }

  Node& label(std::string k, std::string v) {
    return change([&] { d_.labels[std::move(k)] = std::move(v); });
  }
  Node& annotation(std::string k, std::string v) {
    return change([&] { d_.annotations[std::move(k)] = std::move(v); });
  }
  Node& taint(Taint t) {
    return change([&] { d_.taints.push_back(std::move(t)); });
  }
  Node& allocatable(std::string resource, int64_t value) {
    return change([&] { d_.allocatable[std::move(resource)] = value; });
  }
  // Sum of the requests of the pods already on the node. Without any
  // requested() call, the sum of the listed pods' requests (pod()).
  Node& requested(std::string resource, int64_t value) {
    return change([&] {
      d_.requested[std::move(resource)] = value;
      d_.requested_set = true;
    });
  }
  // The number of pods on the node. Without a pod_count() call, the number
  // of listed pods (pod()): the host counts the pods it lists.
  Node& pod_count(uint32_t n) {
    return change([&] { d_.pod_count = n; });
  }
  // Data a plugin declares (SCHEDPLUG_DATA_*, ABI v1.2), as for Pod.
  Node& unschedulable(bool v = true) {
    return change([&] { d_.unschedulable = v; });
  }
  Node& capacity(std::string resource, int64_t value) {
    return change([&] { d_.capacity[std::move(resource)] = value; });
  }
  // A status condition, in the order given; a condition of a type already
  // given replaces it. Status: "True", "False" or "Unknown".
  Node& condition(std::string type, std::string status) {
    return change([&] {
      for (auto& [t, s] : d_.conditions) {
        if (t == type) {
          s = std::move(status);
          return;
        }
      }
      d_.conditions.emplace_back(std::move(type), std::move(status));
    });
  }
  // A pod already on the node. The list is sorted by namespace then name,
  // as the host sends it; a pod with the namespace and name of one already
  // listed replaces it.
  Node& pod(NodePod p) {
    return change([&] {
      auto key = std::make_pair(p.namespace_, p.name_);
      d_.pods.insert_or_assign(std::move(key), std::move(p));
    });
  }
  // The pod of that namespace and name leaves the list (if listed).
  Node& remove_pod(const std::string& namespace_name, const std::string& name) {
    return change([&] { d_.pods.erase(std::make_pair(namespace_name, name)); });
  }

  // ---- ABI v1.3 data (SCHEDPLUG_DATA_NODE_IMAGES, ...), as for Pod ----
  // An image the node holds (status.images): its names and size.
  Node& image(std::vector<std::string> names, int64_t size_bytes = 0) {
    return change([&] {
      d_.v13.images.push_back({std::move(names), size_bytes});
    });
  }

  const std::string& name() const { return d_.name; }
  const schedplug_node& view() const { return view_; }

 private:
  struct Data {
    std::string name;
    std::map<std::string, std::string> labels, annotations;
    std::map<std::string, int64_t> allocatable, requested, capacity;
    std::vector<Taint> taints;
    std::optional<uint32_t> pod_count;
    bool requested_set = false;
    bool unschedulable = false;
    std::vector<std::pair<std::string, std::string>> conditions;
    std::map<std::pair<std::string, std::string>, NodePod> pods;
    // ABI v1.3 data.
    struct V13 {
      struct Image {
        std::vector<std::string> names;
        int64_t size_bytes = 0;
      };
      std::vector<Image> images;
    } v13;
  };
  template <class F>
  Node& change(F&& f) {
    f();
    rebuild();
    return *this;
  }
  void rebuild() {
    view_ = schedplug_node{};
    view_.struct_size = sizeof(schedplug_node);
    runtime::set_element_sizes(view_);
    view_.name = detail::str(d_.name);
    view_.pod_count =
        d_.pod_count.value_or(static_cast<uint32_t>(d_.pods.size()));
    detail::fill(d_.labels, kv_[0], view_.labels);
    detail::fill(d_.annotations, kv_[1], view_.annotations);
    detail::fill(d_.allocatable, res_[0], view_.allocatable);
    if (d_.requested_set) {
      detail::fill(d_.requested, res_[1], view_.requested);
    } else {
      requested_sum_.clear();
      for (const auto& [key, p] : d_.pods) {
        for (const auto& [r, v] : p.requests_) requested_sum_[r] += v;
      }
      detail::fill(requested_sum_, res_[1], view_.requested);
    }
    detail::fill(d_.capacity, res_[2], view_.capacity);
    view_.unschedulable = d_.unschedulable ? 1 : 0;
    taints_.clear();
    for (const auto& t : d_.taints) {
      taints_.push_back(
          {detail::str(t.key), detail::str(t.value), detail::str(t.effect)});
    }
    view_.taints = taints_.data();
    view_.taint_count = taints_.size();
    // v1.2 lists as the host builds them: NULL when empty, the pod list
    // sorted by namespace then name (the map's order), labels and requests
    // sorted by key.
    conditions_.clear();
    for (const auto& [type, status] : d_.conditions) {
      conditions_.push_back({detail::str(type), detail::str(status)});
    }
    view_.conditions = conditions_.empty() ? nullptr : conditions_.data();
    view_.condition_count = conditions_.size();
    pods_.clear();
    pod_kv_.assign(d_.pods.size(), {});
    pod_res_.assign(d_.pods.size(), {});
    size_t i = 0;
    for (const auto& [key, p] : d_.pods) {
      schedplug_node_pod v{};
      v.namespace_name = detail::str(p.namespace_);
      v.name = detail::str(p.name_);
      detail::fill(p.labels_, pod_kv_[i], v.labels);
      v.priority = p.priority_;
      detail::fill(p.requests_, pod_res_[i], v.requests);
      v.owner_kind = detail::str(p.owner_kind_);
      pods_.push_back(v);
      ++i;
    }
    view_.pod_list = pods_.empty() ? nullptr : pods_.data();
    view_.pod_list_count = pods_.size();
    rebuild_v13();
  }
  void rebuild_v13() {
    image_names_.clear();
    images_.clear();
    for (const auto& image : d_.v13.images) {
      std::vector<schedplug_str> names;
      for (const auto& n : image.names) names.push_back(detail::str(n));
      image_names_.push_back(std::move(names));
    }
    for (size_t i = 0; i < image_names_.size(); ++i) {
      images_.push_back({image_names_[i].data(), image_names_[i].size(),
                         d_.v13.images[i].size_bytes});
    }
    view_.images = images_.empty() ? nullptr : images_.data();
    view_.image_count = images_.size();
  }

  Data d_;
  schedplug_node view_{};
  // v1.3
  std::vector<std::vector<schedplug_str>> image_names_;
  std::vector<schedplug_node_image> images_;
  std::vector<schedplug_kv> kv_[2];
  std::vector<schedplug_resource> res_[3];
  std::vector<schedplug_taint> taints_;
  std::vector<schedplug_node_condition> conditions_;
  std::vector<schedplug_node_pod> pods_;
  std::vector<std::vector<schedplug_kv>> pod_kv_;
  std::vector<std::vector<schedplug_resource>> pod_res_;
  std::map<std::string, int64_t> requested_sum_;  // of the listed pods
};

// One node's row of a scheduling cycle.
struct NodeResult {
  std::string node;
  Verdict filter;       // SKIP: the plugin has no filter, or skipped it
  bool scored = false;  // false: filtered out, or Score skipped
  int64_t raw = 0;      // score() as returned
  int64_t score = 0;    // after normalization, in [0, 100]
};

// One pod through one plugin, as schedplug-host runs it in a cycle.
struct Cycle {
  // Set when the cycle failed as a whole: pod_begin failed, a filter or
  // score returned ERROR, or normalization did (the host's message).
  std::string error;
  bool filter_skipped = false;  // the plugin's gates skipped the hook
  bool score_skipped = false;
  std::vector<NodeResult> nodes;  // in the order given

  // The nodes that passed Filter.
  std::vector<std::string> feasible() const {
    std::vector<std::string> out;
    for (const auto& n : nodes) {
      if (n.filter.code == SCHEDPLUG_SUCCESS || n.filter.code == SCHEDPLUG_SKIP)
        out.push_back(n.node);
    }
    return out;
  }
  // A printable table: the cycle's error, then one line per node: filter
  // verdict and reason, raw and normalized score ("-" when not scored).
  std::string table() const;
  // The table without the error line. A row whose reason is the cycle's
  // error says so instead of repeating it.
  std::string rows() const;
};

// An expected row for compare(): {"node", code, "reason", score}, where a
// missing score means "not scored" and a missing code means Success.
struct Row {
  Row(std::string node_name, schedplug_code filter_code = SCHEDPLUG_SUCCESS,
      std::string filter_reason = {},
      std::optional<int64_t> normalized = std::nullopt)
      : node(std::move(node_name)),
        filter(filter_code),
        reason(std::move(filter_reason)),
        score(normalized) {}
  Row(const char* node_name) : Row(std::string(node_name)) {}

  std::string node;
  schedplug_code filter;
  std::string reason;
  std::optional<int64_t> score;
};

inline const char* code_name(schedplug_code code) {
  switch (code) {
    case SCHEDPLUG_SUCCESS:
      return "Success";
    case SCHEDPLUG_ERROR:
      return "Error";
    case SCHEDPLUG_UNSCHEDULABLE:
      return "Unschedulable";
    case SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE:
      return "UnschedulableAndUnresolvable";
    case SCHEDPLUG_SKIP:
      return "Skip";
    default:
      return "Unknown";
  }
}

inline std::string Cycle::table() const {
  return (error.empty() ? "" : "error: " + error + "\n") + rows();
}

inline std::string Cycle::rows() const {
  std::ostringstream out;
  for (const auto& n : nodes) {
    out << n.node << "  " << code_name(n.filter.code);
    if (!error.empty() && n.filter.reason == error) {
      out << " (the cycle's error)";
    } else if (!n.filter.reason.empty()) {
      out << " (" << n.filter.reason << ")";
    }
    if (n.scored) {
      out << "  raw=" << n.raw << " score=" << n.score;
    } else {
      out << "  score=-";
    }
    out << "\n";
  }
  return out.str();
}

// Compares a cycle with the expected rows (same nodes, same order). Returns
// "" when they match, else one line per difference and the whole table,
// with the cycle's error once (a row with that reason refers to it).
inline std::string compare(const Cycle& cycle, std::span<const Row> expected) {
  std::ostringstream diff;
  if (!cycle.error.empty()) diff << "the cycle failed: " << cycle.error << "\n";
  if (cycle.nodes.size() != expected.size()) {
    diff << "expected " << expected.size() << " nodes, the cycle has "
         << cycle.nodes.size() << "\n";
  }
  for (size_t i = 0; i < std::min(cycle.nodes.size(), expected.size()); ++i) {
    const NodeResult& got = cycle.nodes[i];
    const Row& want = expected[i];
    if (got.node != want.node) {
      diff << "row " << i << ": expected node " << want.node << ", got "
           << got.node << "\n";
      continue;
    }
    if (got.filter.code != want.filter || got.filter.reason != want.reason) {
      diff << want.node << ": expected filter " << code_name(want.filter)
           << " \"" << want.reason << "\", got " << code_name(got.filter.code);
      if (!cycle.error.empty() && got.filter.reason == cycle.error) {
        diff << " (the cycle's error)\n";
      } else {
        diff << " \"" << got.filter.reason << "\"\n";
      }
    }
    const std::string want_score =
        want.score.has_value() ? std::to_string(*want.score) : "-";
    const std::string got_score = got.scored ? std::to_string(got.score) : "-";
    if (got_score != want_score) {
      diff << want.node << ": expected score " << want_score << ", got "
           << got_score << "\n";
    }
  }
  if (diff.tellp() == 0) return {};
  return diff.str() + "the cycle:\n" + cycle.rows();
}
inline std::string compare(const Cycle& cycle,
                           std::initializer_list<Row> expected) {
  return compare(cycle,
                 std::span<const Row>(expected.begin(), expected.size()));
}

class Plugin;

// One pod as one plugin sees it during a cycle (plugin.h's pod_begin):
// whether its filter and score run, the pod view carrying the plugin's
// state, and the error when pod_begin failed. Destroying it calls pod_end.
// The Pod it was begun from must outlive it.
class PodScope {
 public:
  PodScope(PodScope&& other) noexcept
      : d_(other.d_),
        instance_(other.instance_),
        pod_(other.pod_),
        runs_filter_(other.runs_filter_),
        runs_score_(other.runs_score_),
        ended_(other.ended_),
        error_(std::move(other.error_)) {
    other.ended_ = true;
  }
  PodScope& operator=(PodScope&&) = delete;
  ~PodScope() {
    if (!ended_ && d_->pod_end != nullptr) d_->pod_end(instance_, pod_.state);
  }

  // The pod view to pass to this plugin's filter/score (state set).
  const schedplug_pod& pod() const { return pod_; }
  bool runs_filter() const { return runs_filter_; }
  bool runs_score() const { return runs_score_; }
  // Non-empty when pod_begin failed: the host's message.
  const std::string& error() const { return error_; }

 private:
  friend class Plugin;
  PodScope(const schedplug_plugin* d, void* instance, const schedplug_pod& pod)
      : d_(d), instance_(instance), pod_(pod) {}
  const schedplug_plugin* d_;
  void* instance_;
  schedplug_pod pod_;
  bool runs_filter_ = true;
  bool runs_score_ = true;
  bool ended_ = true;
  std::string error_;
};

// A loaded and created plugin. Not copyable; the .so stays loaded while it
// lives.
class Plugin {
 public:
  // Loads `file` as the host does (dlopen RTLD_NOW | RTLD_LOCAL, the
  // descriptor checks) and creates an instance with `args_json` (its
  // pluginConfig args). Throws Error with the host's message.
  static std::unique_ptr<Plugin> load(const std::filesystem::path& file,
                                      const std::string& args_json = "{}") {
    std::unique_ptr<Plugin> self(new Plugin());
    self->file_ = file;
    self->handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (self->handle_ == nullptr) {
      const char* why = dlerror();
      throw Error(file.string() +
                  ": not a shared object the host can load (dlopen says: " +
                  (why == nullptr ? "unknown error" : why) +
                  "); build the plugin as a shared library (add_library(... "
                  "MODULE) or -shared -fPIC) for this platform, with every "
                  "symbol it needs available");
    }
    void* sym = dlsym(self->handle_, SCHEDPLUG_ENTRY_SYMBOL);
    if (sym == nullptr) {
      throw Error(file.string() + ": exports no `" +
                  std::string(SCHEDPLUG_ENTRY_SYMBOL) +
                  "` function, so it is not a schedplug plugin");
    }
    using Entry = const schedplug_plugin* (*)();
    const schedplug_plugin* entry = reinterpret_cast<Entry>(sym)();
    if (std::string problem = runtime::accept_descriptor(entry, self->d_);
        !problem.empty()) {
      throw Error(file.string() + ": " + problem);
    }
    self->name_ = self->d_.name;
    self->version_ = self->d_.version;
    self->create(args_json);
    return self;
  }

  ~Plugin() {
    if (created_ && d_.destroy != nullptr) d_.destroy(instance_);
    if (handle_ != nullptr) dlclose(handle_);
  }
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const schedplug_plugin& descriptor() const { return d_; }
  // The settings after create() (descriptor values as create() changed them).
  const schedplug_settings& settings() const { return settings_; }
  // The data (SCHEDPLUG_DATA_*) the host sends for a profile of this plugin
  // alone: what it declared in create(). The hooks see only that data;
  // add bits with send_data() to test the plugin in a profile where
  // another plugin declared more.
  uint64_t data() const { return settings_.data | extra_data_; }
  Plugin& send_data(uint64_t bits) {
    extra_data_ |= bits;
    return *this;
  }
  // `view` as the plugin's hooks see it: the fields of undeclared data empty.
  schedplug_pod sent(const schedplug_pod& view) const {
    return detail::sent(view, data());
  }
  schedplug_node sent(const schedplug_node& view) const {
    return detail::sent(view, data());
  }
  // What the plugin logged through the host, one "<level>: <text>" a line.
  const std::vector<std::string>& logs() const { return logs_; }

  bool has_filter() const { return d_.filter != nullptr; }
  bool has_score() const { return d_.score != nullptr; }
  bool has_refresh() const { return d_.refresh != nullptr; }

  // Begins `pod` for this plugin as the host does once per cycle:
  // pod_begin() when the plugin has one, else applies() for both gates.
  PodScope begin_pod(const Pod& pod) const { return begin_pod(pod.view()); }
  PodScope begin_pod(const schedplug_pod& given) const {
    return begin_pod_sending(given, data());
  }
  // The same on the view as a host sending the data `bits` shows it.
  PodScope begin_pod_sending(const schedplug_pod& given, uint64_t bits) const {
    const schedplug_pod pod = detail::sent(given, bits);
    PodScope scope(&d_, instance_, pod);
    scope.pod_.state = nullptr;
    if (d_.pod_begin == nullptr) {
      scope.runs_filter_ = scope.runs_score_ = applies(pod);
      return scope;
    }
    schedplug_pod_begin_result result{};
    result.struct_size = sizeof(result);
    runtime::ReasonBuffer reason;
    const schedplug_code code =
        d_.pod_begin(instance_, &pod, &result, reason.get());
    if (code != SCHEDPLUG_SUCCESS) {
      scope.error_ = runtime::pod_begin_error(name_, code, reason.str());
      scope.runs_filter_ = scope.runs_score_ = false;
      return scope;
    }
    scope.pod_.state = result.state;
    scope.ended_ = false;
    scope.runs_filter_ = (result.skip & SCHEDPLUG_SKIP_FILTER) == 0;
    scope.runs_score_ = (result.skip & SCHEDPLUG_SKIP_SCORE) == 0;
    return scope;
  }

  // The hooks one at a time, with no per-pod state (the state a plugin's
  // pod_begin makes is passed by run()). applies() is true without the
  // hook; filter() is SUCCESS without it.
  bool applies(const Pod& pod) const { return applies(pod.view()); }
  Verdict filter(const Pod& pod, const Node& node) const {
    return filter(pod.view(), node.view());
  }
  ScoreResult score(const Pod& pod, const Node& node) const {
    return score(pod.view(), node.view());
  }
  // Normalizes raw scores in place, with the plugin's normalize_score or its
  // declared policy, and the host's [0, 100] check.
  Verdict normalize(const Pod& pod,
                    std::span<schedplug_node_score> scores) const {
    return normalize(pod.view(), scores);
  }
  Verdict refresh() {
    if (d_.refresh == nullptr) return {};
    runtime::ReasonBuffer reason;
    const schedplug_code code = d_.refresh(instance_, reason.get());
    if (code == SCHEDPLUG_SUCCESS) return {};
    return {SCHEDPLUG_ERROR, runtime::refresh_failed(name_, reason.str())};
  }

  // The same on views, for harnesses that build their own. Like the
  // others, they show the plugin only the declared data (sent()).
  bool applies(const schedplug_pod& given) const {
    const schedplug_pod pod = sent(given);
    return d_.applies == nullptr || d_.applies(instance_, &pod) != 0;
  }
  // A plugin that promised SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS is held
  // to it: its filter runs again on the node without its pods (as a
  // preemption dry run may see it), and a different verdict is an ERROR.
  // One that promised SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY is held to
  // that too (identity_problem): a copy of the pod under another name and
  // uid must get the same applies / pod_begin / filter results; and one that
  // promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS likewise for a
  // copy without its undeclared labels and annotations and with an
  // undeclared one of each (undeclared_keys_problem).
  Verdict filter(const schedplug_pod& given,
                 const schedplug_node& given_node) const {
    const schedplug_pod pod = sent(given);
    const schedplug_node node = sent(given_node);
    Verdict v = filter_once(pod, node);
    if (v.code == SCHEDPLUG_ERROR) return v;
    if (std::string problem = filter_promise_problem(given, pod, node, v);
        !problem.empty()) {
      return {SCHEDPLUG_ERROR, std::move(problem)};
    }
    return v;
  }
  // The promises of the filter hints for `given` on `node` (sent), whose
  // filter answered `v` for `pod` (sent, with its state): the node's pods,
  // then the pod's identity and its undeclared keys. The first one broken,
  // in a sentence, or empty.
  std::string filter_promise_problem(const schedplug_pod& given,
                                     const schedplug_pod& pod,
                                     const schedplug_node& node,
                                     const Verdict& v) const {
    if ((settings_.hints & SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS) != 0) {
      schedplug_node bare = node;
      bare.requested = {};
      bare.pod_count = 0;
      bare.pod_list = nullptr;
      bare.pod_list_count = 0;
      const Verdict without = filter_once(pod, bare);
      if (without.code != v.code || without.reason != v.reason) {
        return name_ + " promised SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS " +
               "(kHints), but its filter on node \"" +
               runtime::str_of(node.name) + "\" answered " + said(v) +
               " with the node's pods and " + said(without) +
               " without them; drop the hint, or read nothing of "
               "node->requested, pod_count and pod_list";
      }
    }
    return pod_promise_problem(given, node);
  }
  // For a plugin that promised SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY:
  // begins `given` afresh (pod_begin, else applies) and filters it on
  // `node`, then does the same for a copy named "twin-of-<name>" with the
  // uid "twin-of-<uid>"; a sentence naming what differed, or empty (also
  // when the plugin made no such promise).
  std::string identity_problem(const schedplug_pod& given,
                               const schedplug_node& given_node) const {
    if ((settings_.hints & SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY) == 0) {
      return {};
    }
    const schedplug_node node = sent(given_node);
    const Twin twin(given);
    const std::string got = outcome(twin.again, node);
    const std::string twin_got = outcome(twin.twin, node);
    if (got == twin_got) return {};
    return twin.differs("SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY", name_,
                        "on node \"" + runtime::str_of(node.name) + "\" ", got,
                        twin_got, "applies, pod_begin and filter");
  }
  // For a plugin that promised SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY:
  // begins `given` afresh (pod_begin, else applies), scores it on `nodes`
  // (sent) and, when `normalized`, normalizes those scores; then does the
  // same for a copy named "twin-of-<name>" with the uid "twin-of-<uid>". A
  // sentence naming what differed, or empty (also when the plugin made no
  // such promise).
  std::string score_identity_problem(const schedplug_pod& given,
                                     std::span<const schedplug_node> nodes,
                                     bool normalized) const {
    if ((settings_.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY) == 0) {
      return {};
    }
    const Twin twin(given);
    const std::string got = score_outcome(twin.again, nodes, normalized);
    const std::string twin_got = score_outcome(twin.twin, nodes, normalized);
    if (got == twin_got) return {};
    return twin.differs("SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY", name_, "",
                        got, twin_got,
                        "applies, pod_begin, score and normalize_score");
  }
  // The label and annotation key the copy of undeclared_keys_problem gains
  // (with the value "x"), unless the plugin declared it.
  static constexpr const char* kUndeclaredKey = "schedplug-kit.test/undeclared";
  // For a plugin that promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS:
  // begins `given` afresh (pod_begin, else applies) and filters it on
  // `node`, then does the same for a copy that keeps only the labels and
  // annotations whose keys the plugin declared (pod_keys()) and gains the
  // undeclared label and annotation kUndeclaredKey: "x"; a sentence naming
  // what differed, or empty (also when the plugin made no such promise).
  std::string undeclared_keys_problem(const schedplug_pod& given,
                                      const schedplug_node& given_node) const {
    if ((settings_.hints & SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS) ==
        0) {
      return {};
    }
    const schedplug_node node = sent(given_node);
    const auto declared = [](const std::vector<std::string>& keys,
                             const std::string& key) {
      return std::binary_search(keys.begin(), keys.end(), key);
    };
    std::string extra = kUndeclaredKey;
    while (declared(pod_keys_.labels(), extra) ||
           declared(pod_keys_.annotations(), extra)) {
      extra += "-";
    }
    const std::string value = "x";
    const uint64_t kv_size = schedplug_pod_kv_size(&given);
    std::vector<std::string> dropped_labels, dropped_annotations;
    std::vector<uint64_t> label_store, annotation_store;
    schedplug_pod again = given;
    again.state = nullptr;
    schedplug_pod copy = again;
    copy.labels = only_declared(given.labels, kv_size, pod_keys_.labels(),
                                extra, value, dropped_labels, label_store);
    copy.annotations =
        only_declared(given.annotations, kv_size, pod_keys_.annotations(),
                      extra, value, dropped_annotations, annotation_store);
    const std::string got = outcome(again, node);
    const std::string copy_got = outcome(copy, node);
    if (got == copy_got) return {};
    const auto listed = [](const std::vector<std::string>& keys) {
      if (keys.empty()) return std::string("none");
      std::string out;
      for (const std::string& k : keys) {
        out += (out.empty() ? "\"" : ", \"") + k + "\"";
      }
      return out;
    };
    return name_ + " promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS " +
           "(kHints), but on node \"" + runtime::str_of(node.name) +
           "\" pod \"" + runtime::str_of(given.name) + "\" got " + got +
           " and a copy without its undeclared labels (" +
           listed(dropped_labels) + ") and annotations (" +
           listed(dropped_annotations) +
           ") and with the undeclared label and annotation \"" + extra +
           "\": \"" + value + "\" got " + copy_got +
           "; declare every pod label and annotation key the plugin reads in "
           "applies, pod_begin and filter (declared label keys: " +
           listed(pod_keys_.labels()) +
           "; annotation keys: " + listed(pod_keys_.annotations()) +
           "), or drop the hint";
  }
  // The pod label and annotation keys the plugin declared in create()
  // (plugin.h v1.4), copied and sorted as the host copies them.
  const runtime::PodKeys& pod_keys() const { return pod_keys_; }
  // The filter hook once, on views as sent() gives them.
  Verdict filter_once(const schedplug_pod& pod,
                      const schedplug_node& node) const {
    if (d_.filter == nullptr) return {};
    runtime::ReasonBuffer reason;
    const schedplug_code code = d_.filter(instance_, &pod, &node, reason.get());
    return runtime::filter_verdict(name_, code, reason.str());
  }
  // A plugin that promised SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY is
  // held to it: a copy of the pod under another name and uid must get the
  // same applies / pod_begin / score results (score_identity_problem), or
  // the score is an ERROR naming the broken promise.
  ScoreResult score(const schedplug_pod& given,
                    const schedplug_node& given_node) const {
    if (d_.score == nullptr) {
      return {SCHEDPLUG_ERROR, 0, runtime::no_score_hook(name_)};
    }
    const schedplug_node node = sent(given_node);
    ScoreResult s = score_once(sent(given), node);
    if (s.code != SCHEDPLUG_SUCCESS) return s;
    if (std::string problem = score_identity_problem(given, {&node, 1}, false);
        !problem.empty()) {
      return {SCHEDPLUG_ERROR, 0, std::move(problem)};
    }
    return s;
  }
  // The score hook once, on views as sent() gives them.
  ScoreResult score_once(const schedplug_pod& pod,
                         const schedplug_node& node) const {
    if (d_.score == nullptr) {
      return {SCHEDPLUG_ERROR, 0, runtime::no_score_hook(name_)};
    }
    runtime::ReasonBuffer reason;
    int64_t value = 0;
    const schedplug_code code =
        d_.score(instance_, &pod, &node, &value, reason.get());
    return runtime::score_result(name_, node, code, value, reason.str());
  }
  // The promise of SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY covers
  // normalization: the same raw scores normalized for a copy of the pod
  // under another name and uid (begun afresh) must come out the same, or
  // this is an ERROR naming the broken promise.
  Verdict normalize(const schedplug_pod& given,
                    std::span<schedplug_node_score> scores) const {
    const std::vector<schedplug_node_score> raw(scores.begin(), scores.end());
    Verdict v = normalize_once(sent(given), scores);
    if (!v.ok() || scores.empty() ||
        (settings_.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY) == 0) {
      return v;
    }
    const Twin twin(given);
    const std::string got = normalize_outcome(twin.again, raw);
    const std::string twin_got = normalize_outcome(twin.twin, raw);
    if (got == twin_got) return v;
    return {
        SCHEDPLUG_ERROR,
        twin.differs("SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY", name_,
                     "normalizing the raw scores " + scores_listed(raw) + ", ",
                     got, twin_got, "applies, pod_begin and normalize_score")};
  }
  // Normalization once, on a view as sent() gives it: the plugin's
  // normalize_score or its declared policy, and the host's [0, 100] check.
  Verdict normalize_once(const schedplug_pod& pod,
                         std::span<schedplug_node_score> scores) const {
    if (scores.empty()) return {};
    if (d_.normalize_score != nullptr) {
      runtime::ReasonBuffer reason;
      const schedplug_code code = d_.normalize_score(
          instance_, &pod, scores.data(), scores.size(), reason.get());
      if (code != SCHEDPLUG_SUCCESS) {
        return {SCHEDPLUG_ERROR,
                runtime::normalize_failed(name_, reason.str())};
      }
    } else {
      runtime::apply_policy(settings_.normalize_policy, scores);
    }
    if (std::string problem =
            runtime::out_of_range(name_, d_.normalize_score != nullptr, scores);
        !problem.empty()) {
      return {SCHEDPLUG_ERROR, std::move(problem)};
    }
    return {};
  }

  // One scheduling cycle of `pod` over `nodes`, as schedplug-host runs it:
  // pod_begin once (or applies() for both gates), filter on every node,
  // score on the nodes that passed, normalization of those scores, then
  // pod_end. A filter or score ERROR fails the cycle (Cycle::error), as it
  // fails the pod in kube-scheduler. The hints' promises are checked as
  // filter() checks them, and the score identity promise on the whole score
  // pass (gates, scores, normalization) at once; the first broken promise
  // fails the cycle, and no other promise is checked in it, so that it is
  // reported once.
  //
  // The hooks see only the declared data (data()), as on the host. When the
  // pod or the nodes carry data the plugin did not declare, the cycle runs
  // again with each such bit sent; if that changes an answer (a gate, a
  // verdict or reason, a raw or normalized score, the cycle's error), the
  // plugin reads data it did not declare: the rows stay as the host would
  // answer, and Cycle::error is a sentence naming the bit to declare, the
  // hook and the node (undeclared_data_problem). Those extra cycles run
  // before the host's, so the hooks' last calls see what the host would
  // send; a plugin that logs sees them in logs().
  Cycle run(const Pod& pod, std::span<const Node> nodes) const {
    // The check's cycles first: a plugin keeping what it saw last keeps the
    // host's view.
    std::string problem = undeclared_data_problem(pod, nodes);
    Cycle cycle = run_sending(pod, nodes, data(), true);
    if (!problem.empty()) {
      cycle.error =
          cycle.error.empty()
              ? std::move(problem)
              : std::move(problem) + "; the cycle failed too: " + cycle.error;
    }
    return cycle;
  }
  Cycle run(const Pod& pod, std::initializer_list<Node> nodes) const {
    return run(pod, std::span<const Node>(nodes.begin(), nodes.size()));
  }
  // Empty when the hooks answer the same for `pod` over `nodes` with the
  // declared data only and with each undeclared SCHEDPLUG_DATA_* bit the
  // test gave (pod and nodes carry it); else a sentence: which bits change
  // the answers, where (hook, node), and to declare them.
  std::string undeclared_data_problem(const Pod& pod,
                                      std::span<const Node> nodes) const {
    uint64_t given = detail::carried(pod.view());
    for (const Node& node : nodes) given |= detail::carried(node.view());
    const uint64_t undeclared = given & ~data() & SCHEDPLUG_DATA_ALL;
    if (undeclared == 0) return {};
    const Cycle host = run_sending(pod, nodes, data(), false);
    uint64_t reads = 0;
    Difference first;
    for (uint64_t bit = 1; bit <= undeclared; bit <<= 1) {
      if ((undeclared & bit) == 0) continue;
      Difference d =
          cycle_difference(host, run_sending(pod, nodes, data() | bit, false));
      if (d.where.empty()) continue;
      reads |= bit;
      if (first.where.empty()) first = std::move(d);
    }
    if (reads == 0) reads = undeclared;  // only together, if at all
    Difference d =
        cycle_difference(host, run_sending(pod, nodes, data() | reads, false));
    if (d.where.empty()) d = std::move(first);
    if (d.where.empty()) return {};
    const std::string names = detail::data_bit_names(reads);
    const char* it = (reads & (reads - 1)) == 0 ? "it" : "them";
    return name_ + " reads data it did not declare (" + names +
           "): " + d.where + " without " + it +
           " (as schedplug-host sends it) and " + d.with + " with " + it +
           " (as the test gave it); add " + names +
           " to the data it declares (settings->data in create(), kData in " +
           "the C++ layer)";
  }
  // Where two cycles of one pod first differ, in words: "on node \"n\" its
  // filter answered X" for the first (`where`), the second's answer
  // (`with`). Empty when they answered the same.
  struct Difference {
    std::string where, with;
  };
  Difference cycle_difference(const Cycle& a, const Cycle& b) const {
    const auto gate = [](const Cycle& c) {
      return std::string(c.filter_skipped ? "skipped" : "ran") + " filter, " +
             (c.score_skipped ? "skipped" : "ran") + " score";
    };
    if (a.filter_skipped != b.filter_skipped ||
        a.score_skipped != b.score_skipped) {
      return {std::string("its ") +
                  (d_.pod_begin != nullptr ? "pod_begin" : "applies") + " " +
                  gate(a),
              gate(b)};
    }
    for (size_t i = 0; i < std::min(a.nodes.size(), b.nodes.size()); ++i) {
      const NodeResult& x = a.nodes[i];
      const NodeResult& y = b.nodes[i];
      const std::string on = "on node \"" + x.node + "\" its ";
      if (x.filter.code != y.filter.code ||
          x.filter.reason != y.filter.reason) {
        return {on + "filter answered " + said(x.filter), said(y.filter)};
      }
      const auto raw = [](const NodeResult& r) {
        return r.scored ? std::to_string(r.raw) : std::string("no score");
      };
      if (x.scored != y.scored || x.raw != y.raw) {
        return {on + "score answered " + raw(x), raw(y)};
      }
      if (x.score != y.score) {
        return {on + "score normalized to " + std::to_string(x.score),
                std::to_string(y.score)};
      }
    }
    if (a.nodes.size() != b.nodes.size() || a.error != b.error) {
      const auto failed = [](const Cycle& c) {
        return c.error.empty() ? std::string("no error")
                               : "the error \"" + c.error + "\"";
      };
      return {"its cycle had " + failed(a), failed(b)};
    }
    return {};
  }

  // One cycle as run() makes it, the hooks seeing the data `bits`; the
  // hints' promises are checked when `promises`.
  Cycle run_sending(const Pod& pod, std::span<const Node> nodes, uint64_t bits,
                    bool promises) const {
    Cycle cycle;
    const PodScope scope = begin_pod_sending(pod.view(), bits);
    if (!scope.error().empty()) {
      cycle.error = scope.error();
      return cycle;
    }
    const schedplug_pod& view = scope.pod();
    cycle.filter_skipped = !scope.runs_filter() || d_.filter == nullptr;
    cycle.score_skipped = !scope.runs_score() || d_.score == nullptr;

    std::vector<schedplug_node_score> scores;
    std::vector<size_t> scored_rows;
    std::vector<schedplug_node> feasible_nodes;  // sent
    for (const Node& node : nodes) {
      NodeResult row;
      row.node = node.name();
      const schedplug_node nv = detail::sent(node.view(), bits);
      // Promises are checked until the cycle has failed.
      std::string broken;
      if (cycle.filter_skipped) {
        row.filter = {SCHEDPLUG_SKIP, {}};
        // A promise about the pod's identity or its undeclared labels and
        // annotations covers the gates too: a pod whose filter was skipped
        // is checked like one whose filter ran.
        if (promises && d_.filter != nullptr && cycle.error.empty()) {
          broken = pod_promise_problem(pod.view(), nv);
        }
      } else {
        row.filter = filter_once(view, nv);
        if (promises && row.filter.code != SCHEDPLUG_ERROR &&
            cycle.error.empty()) {
          broken = filter_promise_problem(pod.view(), view, nv, row.filter);
        }
      }
      if (!broken.empty()) row.filter = {SCHEDPLUG_ERROR, std::move(broken)};
      if (row.filter.code == SCHEDPLUG_ERROR && cycle.error.empty()) {
        cycle.error = row.filter.reason;
      }
      const bool feasible = row.filter.code == SCHEDPLUG_SUCCESS ||
                            row.filter.code == SCHEDPLUG_SKIP;
      if (feasible) feasible_nodes.push_back(nv);
      if (feasible && !cycle.score_skipped) {
        ScoreResult s = score_once(view, nv);
        if (s.code != SCHEDPLUG_SUCCESS) {
          if (cycle.error.empty()) cycle.error = s.reason;
        } else {
          row.scored = true;
          row.raw = s.score;
          scores.push_back({detail::str(node.name()), s.score});
          scored_rows.push_back(cycle.nodes.size());
        }
      }
      cycle.nodes.push_back(std::move(row));
    }
    if (cycle.error.empty() && !scores.empty()) {
      Verdict normalized = normalize_once(view, scores);
      if (!normalized.ok()) {
        cycle.error = normalized.reason;
      } else {
        for (size_t i = 0; i < scores.size(); ++i) {
          cycle.nodes[scored_rows[i]].score = scores[i].score;
        }
      }
    }
    // The gates count, as for the filter: checked also when they skipped
    // score, on the nodes that passed filter.
    if (promises && cycle.error.empty() && d_.score != nullptr) {
      cycle.error = score_identity_problem(pod.view(), feasible_nodes, true);
    }
    return cycle;  // ~PodScope calls pod_end
  }

  // ---- Declared events (SCHEDPLUG_EVENT_*), in schedplug/testing_events.hpp
  // The events after which kube-scheduler requeues a pod this plugin
  // rejected, as the shim registers them: the declared events (kEvents, as
  // create() left them), every event (SCHEDPLUG_EVENT_ALL) for 0.
  uint64_t requeue_events() const;
  // Whether the declared events requeue `pod` after node `before` becomes
  // `after` (two states of one node): empty when the plugin's filter rejects
  // the pod on `before`, passes it on `after`, and the change is an event
  // it declared (change_events); else a sentence: the broken promise (the
  // change's events, which to add), a change no event reports, or why there
  // is nothing to check (no rejection before, no pass after, a failed
  // cycle). Each state is a cycle of its own, as run() makes it.
  std::string requeue_problem(const Pod& pod, const Node& before,
                              const Node& after) const;
  // The same for `added`, a node added to the cluster: the pod must pass on
  // it, and SCHEDPLUG_EVENT_NODE_ADD be declared.
  std::string requeue_problem(const Pod& pod, const Node& added) const;
  // One cycle of `pod` over `nodes` as run() makes it, after a change from
  // `before` (the nodes as they were, matched by name; a node not in
  // `before` was added). Each node whose rejection of the pod turned into a
  // pass is held to the declared events as requeue_problem() holds it, and
  // so is each added node that passes the pod when a node of `before`
  // rejected it; the first broken promise fails the cycle (Cycle::error),
  // reported once.
  Cycle run_after(const Pod& pod, std::span<const Node> before,
                  std::span<const Node> nodes) const;
  Cycle run_after(const Pod& pod, std::initializer_list<Node> before,
                  std::initializer_list<Node> nodes) const {
    return run_after(pod, std::span<const Node>(before.begin(), before.size()),
                     std::span<const Node>(nodes.begin(), nodes.size()));
  }

 private:
  Plugin() = default;

  static runtime::ArgsSession* session_of(void* context) {
    return static_cast<Plugin*>(context)->args_session_.get();
  }

  static void log(void* context, schedplug_log_level level, schedplug_str msg) {
    auto* self = static_cast<Plugin*>(context);
    static constexpr const char* kLevels[] = {"error", "warning", "info",
                                              "debug"};
    const char* name = level >= 0 && level < 4 ? kLevels[level] : "log";
    self->logs_.push_back(std::string(name) + ": " + runtime::str_of(msg));
  }

  // The promises about the pod (identity, then undeclared keys): the first
  // one broken on `node`, in a sentence, or empty.
  std::string pod_promise_problem(const schedplug_pod& given,
                                  const schedplug_node& node) const {
    std::string problem = identity_problem(given, node);
    if (problem.empty()) problem = undeclared_keys_problem(given, node);
    return problem;
  }

  // `list` (entries `kv_size` apart) with only the entries whose keys are
  // in `keep` (sorted), plus `extra`: `value`, still sorted; the entries
  // are laid out `kv_size` apart in `store`, the keys left out appended to
  // `dropped`. Keys and values view `list`'s and the arguments' bytes.
  static schedplug_kv_list only_declared(schedplug_kv_list list,
                                         uint64_t kv_size,
                                         const std::vector<std::string>& keep,
                                         const std::string& extra,
                                         const std::string& value,
                                         std::vector<std::string>& dropped,
                                         std::vector<uint64_t>& store) {
    std::vector<schedplug_kv> kept;
    for (uint64_t i = 0; i < list.count; ++i) {
      const auto* kv = static_cast<const schedplug_kv*>(
          schedplug_element_at(list.items, kv_size, i));
      const std::string key = runtime::str_of(kv->key);
      if (std::binary_search(keep.begin(), keep.end(), key)) {
        kept.push_back(*kv);
      } else {
        dropped.push_back(key);
      }
    }
    const schedplug_kv added{detail::str(extra), detail::str(value)};
    kept.insert(
        std::lower_bound(kept.begin(), kept.end(), added,
                         [](const schedplug_kv& a, const schedplug_kv& b) {
                           return schedplug_str_cmp(a.key, b.key) < 0;
                         }),
        added);
    const uint64_t stride = std::max<uint64_t>(kv_size, sizeof(schedplug_kv));
    store.assign(
        (kept.size() * stride + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
    auto* bytes = reinterpret_cast<char*>(store.data());
    for (size_t i = 0; i < kept.size(); ++i) {
      std::memcpy(bytes + i * stride, &kept[i], sizeof(schedplug_kv));
    }
    return {reinterpret_cast<const schedplug_kv*>(store.data()), kept.size()};
  }

  static bool rejects(const Verdict& v) {
    return v.code == SCHEDPLUG_UNSCHEDULABLE ||
           v.code == SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
  }
  // For the declared events: the filter turned from `before` (a rejection;
  // nullptr: the node was added) to `after` (a pass) on `node` for `pod`
  // with a change of the events `change`. The sentence when no declared
  // event covers it, else empty.
  std::string events_problem(const std::string& pod, const std::string& node,
                             const Verdict* before, const Verdict& after,
                             uint64_t change) const;
  // requeue_problem() for the node `before` (nullptr: `after` was added)
  // becoming `after`.
  std::string requeue_check(const Pod& pod, const Node* before,
                            const Node& after) const;

  static std::string said(const Verdict& x) {
    return std::string(code_name(x.code)) +
           (x.reason.empty() ? "" : " (\"" + x.reason + "\")");
  }

  // How pod_begin (or applies) gated the pod of `scope`, in words; empty
  // without either hook.
  std::string gates(const PodScope& scope) const {
    if (d_.pod_begin != nullptr) {
      if (!scope.error().empty()) {
        return "pod_begin failing (" + scope.error() + ")";
      }
      const char* skipped = "nothing";
      if (!scope.runs_filter()) {
        skipped = scope.runs_score() ? "filter" : "filter and score";
      } else if (!scope.runs_score()) {
        skipped = "score";
      }
      return std::string("pod_begin skipping ") + skipped;
    }
    if (d_.applies != nullptr) {
      return std::string("applies ") + (scope.runs_filter() ? "true" : "false");
    }
    return {};
  }
  static std::string then(const std::string& before, const std::string& next) {
    return before.empty() ? next : before + ", then " + next;
  }

  // What the host would make of `pod` on `node`, in words: how pod_begin
  // (or applies) gated it, then the filter's verdict.
  std::string outcome(const schedplug_pod& pod,
                      const schedplug_node& node) const {
    const PodScope scope = begin_pod(pod);
    const std::string out = gates(scope);
    if (!scope.error().empty() || !scope.runs_filter()) return out;
    return then(out, "filter " + said(filter_once(scope.pod(), node)));
  }
  // The same for scoring `pod` on `nodes` (sent): the gates, each node's
  // score, and when `normalized` the normalized scores.
  std::string score_outcome(const schedplug_pod& pod,
                            std::span<const schedplug_node> nodes,
                            bool normalized) const {
    const PodScope scope = begin_pod(pod);
    const std::string out = gates(scope);
    if (!scope.error().empty() || !scope.runs_score()) return out;
    std::vector<schedplug_node_score> scores;
    std::string each;
    for (const schedplug_node& node : nodes) {
      const ScoreResult s = score_once(scope.pod(), node);
      each += (each.empty() ? "\"" : ", \"") + runtime::str_of(node.name) +
              "\" " +
              (s.code == SCHEDPLUG_SUCCESS ? std::to_string(s.score)
                                           : said({s.code, s.reason}));
      if (s.code == SCHEDPLUG_SUCCESS) scores.push_back({node.name, s.score});
    }
    std::string scored =
        then(out, "score " + (each.empty() ? "on no node" : each));
    if (!normalized || scores.empty()) return scored;
    const Verdict v = normalize_once(scope.pod(), scores);
    return scored + (v.ok() ? ", normalized " + scores_listed(scores)
                            : ", normalization " + said(v));
  }
  // The same for normalizing `raw` for `pod`: the gates, then the
  // normalized scores.
  std::string normalize_outcome(const schedplug_pod& pod,
                                std::vector<schedplug_node_score> raw) const {
    const PodScope scope = begin_pod(pod);
    const std::string out = gates(scope);
    if (!scope.error().empty() || !scope.runs_score()) return out;
    const Verdict v = normalize_once(scope.pod(), raw);
    return then(out, v.ok() ? "normalized " + scores_listed(raw)
                            : "normalization " + said(v));
  }
  // "\"a\" 1, \"b\" 2"
  static std::string scores_listed(
      std::span<const schedplug_node_score> scores) {
    std::string out;
    for (const schedplug_node_score& s : scores) {
      out += (out.empty() ? "\"" : ", \"") + runtime::str_of(s.node_name) +
             "\" " + std::to_string(s.score);
    }
    return out;
  }

  // `given` begun afresh (no state) and a copy named "twin-of-<name>" with
  // the uid "twin-of-<uid>", for the identity promises. Not copyable: the
  // copy views its strings.
  struct Twin {
    explicit Twin(const schedplug_pod& given)
        : name(runtime::str_of(given.name)),
          uid(runtime::str_of(given.uid)),
          twin_name("twin-of-" + name),
          twin_uid("twin-of-" + uid),
          again(given) {
      again.state = nullptr;
      twin = again;
      twin.name = detail::str(twin_name);
      twin.uid = detail::str(twin_uid);
    }
    Twin(const Twin&) = delete;
    Twin& operator=(const Twin&) = delete;

    // The sentence for plugin `plugin`'s broken `hint`: `where` (empty or
    // ending in a space) the pod got `got` and the copy `twin_got`; the
    // advice names the `hooks` that must not read name and uid.
    std::string differs(const char* hint, const std::string& plugin,
                        const std::string& where, const std::string& got,
                        const std::string& twin_got, const char* hooks) const {
      return plugin + " promised " + hint + " (kHints), but " + where +
             "pod \"" + name + "\" (uid \"" + uid + "\") got " + got +
             " and a copy named \"" + twin_name + "\" (uid \"" + twin_uid +
             "\") got " + twin_got +
             "; drop the hint, or read neither the pod's name nor its uid "
             "in " +
             hooks;
    }

    const std::string name, uid, twin_name, twin_uid;
    schedplug_pod again;
    schedplug_pod twin{};
  };

  void create(const std::string& args_json) {
    host_.struct_size = sizeof(schedplug_host);
    host_.context = this;
    host_.log = &Plugin::log;
    settings_ = runtime::initial_settings(d_);
    args_session_ = std::make_unique<runtime::ArgsSession>(args_json);
    runtime::ArgsSession::install<&Plugin::session_of>(host_,
                                                       args_session_.get());
    host_.settings = &settings_;
    const std::string where = name_ + " (" + file_.string() + ")";
    runtime::ReasonBuffer error;
    schedplug_code code = SCHEDPLUG_ERROR;
    try {
      code = d_.create(args_json.c_str(), args_json.size(), &host_, &instance_,
                       error.get());
    } catch (...) {
      end_create();
      throw Error(
          runtime::create_threw(where, name_, std::current_exception()));
    }
    end_create();
    if (code != SCHEDPLUG_SUCCESS) {
      throw Error(runtime::create_rejected(where, error.str(), args_json));
    }
    created_ = true;
    settings_.struct_size = sizeof(schedplug_settings);
    settings_.reserved = 0;
    if (std::string problem = runtime::settings_problem(d_, settings_);
        !problem.empty()) {
      throw Error(runtime::create_broken_settings(where, problem, args_json));
    }
    // The keys are the instance's memory: copied once, never read again.
    pod_keys_.keep(settings_);
  }
  void end_create() {
    host_.settings = nullptr;
    runtime::ArgsSession::install<&Plugin::session_of>(host_, nullptr);
    args_session_.reset();
  }

  std::filesystem::path file_;
  void* handle_ = nullptr;
  schedplug_plugin d_{};
  std::string name_, version_;
  void* instance_ = nullptr;
  bool created_ = false;
  schedplug_host host_{};
  schedplug_settings settings_{};
  runtime::PodKeys pod_keys_;
  std::unique_ptr<runtime::ArgsSession> args_session_;
  std::vector<std::string> logs_;
  uint64_t extra_data_ = 0;
};

}  // namespace schedplug::testing

#include "schedplug/testing_events.hpp"

#ifdef SCHEDPLUG_TESTING_DEFINE_C_API
#include "schedplug/testing_c_api.inc"
#endif
