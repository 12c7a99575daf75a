// The test kit's node builder (Node), with the pods it lists, and the view
// it gives a plugin. Part of the test kit; include schedplug/testing.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"
#include "schedplug/runtime.hpp"
#include "schedplug/testing/elements.hpp"

namespace schedplug::testing {

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

}  // namespace schedplug::testing
