#include "host/model/records.hpp"

#include <algorithm>

namespace schedplug::host {
namespace {

schedplug_str view_of(const std::string& s) {
  return schedplug_str{s.data(), s.size()};
}

// Sorts by key in byte order and keeps the LAST value of a duplicate key
// (the way a later map entry overwrites an earlier one).
template <typename Entry>
void sort_unique_keep_last(std::vector<Entry>& entries) {
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const Entry& a, const Entry& b) { return a.first < b.first; });
  std::vector<Entry> unique;
  unique.reserve(entries.size());
  for (auto& e : entries) {
    if (!unique.empty() && unique.back().first == e.first) {
      unique.back() = std::move(e);
    } else {
      unique.push_back(std::move(e));
    }
  }
  entries = std::move(unique);
}

std::vector<schedplug_kv> kv_views(const KeyValues& kvs) {
  std::vector<schedplug_kv> out;
  out.reserve(kvs.size());
  for (const auto& [k, v] : kvs) out.push_back({view_of(k), view_of(v)});
  return out;
}

std::vector<schedplug_resource> resource_views(const Resources& resources) {
  std::vector<schedplug_resource> out;
  out.reserve(resources.size());
  for (const auto& [name, value] : resources) {
    out.push_back({view_of(name), value});
  }
  return out;
}

schedplug_kv_list list_of(const std::vector<schedplug_kv>& v) {
  return {v.data(), v.size()};
}

schedplug_resource_list list_of(const std::vector<schedplug_resource>& v) {
  return {v.data(), v.size()};
}

}  // namespace

PodRecord::PodRecord(PodData data) : data_(std::move(data)) {
  sort_unique_keep_last(data_.labels);
  sort_unique_keep_last(data_.annotations);
  sort_unique_keep_last(data_.node_selector);
  sort_unique_keep_last(data_.requests);

  labels_ = kv_views(data_.labels);
  annotations_ = kv_views(data_.annotations);
  node_selector_ = kv_views(data_.node_selector);
  requests_ = resource_views(data_.requests);
  tolerations_.reserve(data_.tolerations.size());
  for (const auto& t : data_.tolerations) {
    schedplug_toleration v{};
    v.key = view_of(t.key);
    v.op = view_of(t.op);
    v.value = view_of(t.value);
    v.effect = view_of(t.effect);
    v.has_toleration_seconds = t.toleration_seconds.has_value() ? 1 : 0;
    v.toleration_seconds = t.toleration_seconds.value_or(0);
    tolerations_.push_back(v);
  }

  view_.struct_size = sizeof(schedplug_pod);
  set_element_sizes(view_);
  view_.namespace_name = view_of(data_.namespace_name);
  view_.name = view_of(data_.name);
  view_.uid = view_of(data_.uid);
  view_.labels = list_of(labels_);
  view_.annotations = list_of(annotations_);
  view_.priority = data_.priority;
  view_.requests = list_of(requests_);
  view_.node_selector = list_of(node_selector_);
  view_.tolerations = tolerations_.data();
  view_.toleration_count = tolerations_.size();
}

NodeRecord::NodeRecord(NodeData data) : data_(std::move(data)) {
  sort_unique_keep_last(data_.labels);
  sort_unique_keep_last(data_.annotations);
  sort_unique_keep_last(data_.allocatable);
  sort_unique_keep_last(data_.requested);

  labels_ = kv_views(data_.labels);
  annotations_ = kv_views(data_.annotations);
  allocatable_ = resource_views(data_.allocatable);
  requested_ = resource_views(data_.requested);
  taints_.reserve(data_.taints.size());
  for (const auto& t : data_.taints) {
    taints_.push_back({view_of(t.key), view_of(t.value), view_of(t.effect)});
  }

  view_.struct_size = sizeof(schedplug_node);
  set_element_sizes(view_);
  view_.name = view_of(data_.name);
  view_.labels = list_of(labels_);
  view_.annotations = list_of(annotations_);
  view_.taints = taints_.data();
  view_.taint_count = taints_.size();
  view_.allocatable = list_of(allocatable_);
  view_.requested = list_of(requested_);
  view_.pod_count = data_.pod_count;
}

}  // namespace schedplug::host
