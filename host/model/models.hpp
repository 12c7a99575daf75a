// The host's model of a pod and a node as decoded from the wire: owned
// data with a ready-made C ABI view.
//
// A model owns every string and array its view points into, so the view
// stays valid for the model's lifetime. Models are immutable after
// construction and neither copyable nor movable (the view holds pointers
// into the model itself); keep them in std::unique_ptr or
// std::shared_ptr<const ...>.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"
#include "schedplug/runtime.hpp"

namespace schedplug::host {

// The element sizes a view carries (plugin.h rule 5): the SDK's rule, so the
// host and the test kit cannot disagree.
using ::schedplug::runtime::set_element_sizes;

using KeyValues = std::vector<std::pair<std::string, std::string>>;
using Resources = std::vector<std::pair<std::string, int64_t>>;

struct TaintData {
  std::string key;
  std::string value;
  std::string effect;
};

struct TolerationData {
  std::string key;
  std::string op;
  std::string value;
  std::string effect;
  std::optional<int64_t> toleration_seconds;
};

// v1.2 data (plugin.h's SCHEDPLUG_DATA_*), present when the shim sent it.
struct OwnerData {
  std::string kind;
  std::string name;
  bool controller = false;
};

struct PortData {
  int32_t container_port = 0;
  int32_t host_port = 0;
  std::string protocol;
  std::string host_ip;
};

struct ContainerData {
  std::string name;
  std::string image;
  Resources requests;
  Resources limits;
  std::vector<PortData> ports;
};

// One pod already on a node (the compact list).
struct NodePodData {
  std::string namespace_name;
  std::string name;
  KeyValues labels;
  int32_t priority = 0;
  Resources requests;
  std::string owner_kind;
};

// v1.3 data.
struct VolumeData {
  std::string name;
  std::string source;  // the volume source's key in the pod spec
  std::string claim_name;
  bool read_only = false;
};

struct ImageData {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
};

struct RequirementData {
  std::string key;
  std::string op;
  std::vector<std::string> values;
};

struct LabelSelectorData {
  bool present = false;  // false: unset (nil)
  KeyValues match_labels;
  std::vector<RequirementData> match_expressions;
};

struct NodeSelectorTermData {
  int32_t weight = 0;  // preferred terms; 0 for required ones
  std::vector<RequirementData> match_expressions;
  std::vector<RequirementData> match_fields;
};

struct TopologySpreadData {
  int32_t max_skew = 0;
  int32_t min_domains = 0;  // 0: unset
  std::string topology_key;
  std::string when_unsatisfiable;
  LabelSelectorData label_selector;
  std::string node_affinity_policy;  // empty: unset
  std::string node_taints_policy;
  std::vector<std::string> match_label_keys;
};

struct PodAffinityTermData {
  int32_t weight = 0;  // preferred terms; 0 for required ones
  std::string topology_key;
  LabelSelectorData label_selector;
  std::vector<std::string> namespaces;
  LabelSelectorData namespace_selector;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
};

// Plain data of a pod, as it arrives (lists in any order).
struct PodData {
  std::string namespace_name;
  std::string name;
  std::string uid;
  KeyValues labels;
  KeyValues annotations;
  int32_t priority = 0;
  Resources requests;
  KeyValues node_selector;
  std::vector<TolerationData> tolerations;
  // v1.2
  std::string node_name;
  std::string nominated_node_name;
  std::string priority_class_name;
  std::vector<OwnerData> owners;          // as sent
  std::vector<ContainerData> containers;  // spec order
  // v1.3
  std::vector<VolumeData> volumes;  // spec order
  std::vector<NodeSelectorTermData> node_affinity_required;
  std::vector<NodeSelectorTermData> node_affinity_preferred;
  std::vector<TopologySpreadData> topology_spread;
  // Pod affinity required, preferred; anti-affinity required, preferred.
  std::vector<PodAffinityTermData> pod_affinity[4];
};

// Plain data of a node, as it arrives (lists in any order).
struct NodeData {
  std::string name;
  KeyValues labels;
  KeyValues annotations;
  std::vector<TaintData> taints;
  Resources allocatable;
  Resources requested;
  uint32_t pod_count = 0;
  // v1.2
  bool unschedulable = false;
  std::vector<std::pair<std::string, std::string>> conditions;  // type, status
  Resources capacity;
  std::vector<NodePodData> pods;  // sorted by namespace, name on build
  // v1.3
  std::vector<ImageData> images;  // as sent
};

// A pod with its view. Sorts labels, annotations, node selector and
// requests by key; a duplicate key keeps the last value.
class PodModel {
 public:
  explicit PodModel(PodData data);
  PodModel(const PodModel&) = delete;
  PodModel& operator=(const PodModel&) = delete;

  const schedplug_pod& view() const { return view_; }
  const PodData& data() const { return data_; }

 private:
  PodData data_;
  std::vector<schedplug_kv> labels_, annotations_, node_selector_;
  std::vector<schedplug_resource> requests_;
  std::vector<schedplug_toleration> tolerations_;
  std::vector<schedplug_owner> owners_;
  std::vector<schedplug_container> containers_;
  std::vector<std::vector<schedplug_resource>> container_resources_;
  std::vector<std::vector<schedplug_container_port>> container_ports_;
  std::vector<schedplug_volume> volumes_;
  // v1.3 nested arrays: a deque keeps its elements (and so the buffers the
  // view points into) in place as it grows.
  const schedplug_str* strings_of(const std::vector<std::string>& list);
  const schedplug_selector_requirement* requirements_of(
      const std::vector<RequirementData>& list);
  schedplug_label_selector selector_of(LabelSelectorData& selector);
  std::deque<std::vector<schedplug_str>> strings_;
  std::deque<std::vector<schedplug_selector_requirement>> requirements_;
  std::deque<std::vector<schedplug_kv>> selector_labels_;
  std::vector<schedplug_node_selector_term> node_affinity_[2];
  std::vector<schedplug_topology_spread_constraint> topology_spread_;
  std::vector<schedplug_pod_affinity_term> pod_affinity_[4];
  schedplug_pod view_{};
};

// A node with its view. Same sorting rules as PodModel.
class NodeModel {
 public:
  explicit NodeModel(NodeData data);
  NodeModel(const NodeModel&) = delete;
  NodeModel& operator=(const NodeModel&) = delete;

  const schedplug_node& view() const { return view_; }
  const NodeData& data() const { return data_; }
  const std::string& name() const { return data_.name; }

 private:
  NodeData data_;
  std::vector<schedplug_kv> labels_, annotations_;
  std::vector<schedplug_taint> taints_;
  std::vector<schedplug_resource> allocatable_, requested_, capacity_;
  std::vector<schedplug_node_condition> conditions_;
  std::vector<schedplug_node_pod> pods_;
  std::vector<std::vector<schedplug_kv>> pod_labels_;
  std::vector<std::vector<schedplug_resource>> pod_requests_;
  std::vector<schedplug_node_image> images_;
  std::vector<std::vector<schedplug_str>> image_names_;
  schedplug_node view_{};
};

}  // namespace schedplug::host
