#include "host/model/models.hpp"

#include <algorithm>
#include <tuple>

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

PodModel::PodModel(PodData data) : data_(std::move(data)) {
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

  // v1.2 data.
  view_.node_name = view_of(data_.node_name);
  view_.nominated_node_name = view_of(data_.nominated_node_name);
  view_.priority_class_name = view_of(data_.priority_class_name);
  owners_.reserve(data_.owners.size());
  for (const auto& o : data_.owners) {
    owners_.push_back({view_of(o.kind), view_of(o.name), o.controller ? 1 : 0});
  }
  view_.owners = owners_.empty() ? nullptr : owners_.data();
  view_.owner_count = owners_.size();
  // Reserved up front: the views point into these inner vectors.
  containers_.reserve(data_.containers.size());
  container_resources_.reserve(2 * data_.containers.size());
  container_ports_.reserve(data_.containers.size());
  for (auto& c : data_.containers) {
    sort_unique_keep_last(c.requests);
    sort_unique_keep_last(c.limits);
    container_resources_.push_back(resource_views(c.requests));
    const auto& requests = container_resources_.back();
    container_resources_.push_back(resource_views(c.limits));
    const auto& limits = container_resources_.back();
    container_ports_.emplace_back();
    auto& ports = container_ports_.back();
    for (const auto& port : c.ports) {
      ports.push_back({port.container_port, port.host_port,
                       view_of(port.protocol), view_of(port.host_ip)});
    }
    schedplug_container v{};
    v.name = view_of(c.name);
    v.image = view_of(c.image);
    v.requests = list_of(requests);
    v.limits = list_of(limits);
    v.ports = ports.empty() ? nullptr : ports.data();
    v.port_count = ports.size();
    containers_.push_back(v);
  }
  view_.containers = containers_.empty() ? nullptr : containers_.data();
  view_.container_count = containers_.size();

  // v1.3 data.
  volumes_.reserve(data_.volumes.size());
  for (const auto& v : data_.volumes) {
    volumes_.push_back({view_of(v.name), view_of(v.source),
                        view_of(v.claim_name), v.read_only ? 1 : 0});
  }
  view_.volumes = volumes_.empty() ? nullptr : volumes_.data();
  view_.volume_count = volumes_.size();

  for (int preferred = 0; preferred < 2; ++preferred) {
    const auto& terms = preferred ? data_.node_affinity_preferred
                                  : data_.node_affinity_required;
    auto& out = node_affinity_[preferred];
    out.reserve(terms.size());
    for (const auto& t : terms) {
      out.push_back({t.weight, requirements_of(t.match_expressions),
                     t.match_expressions.size(),
                     requirements_of(t.match_fields), t.match_fields.size()});
    }
  }
  view_.node_affinity_required =
      node_affinity_[0].empty() ? nullptr : node_affinity_[0].data();
  view_.node_affinity_required_count = node_affinity_[0].size();
  view_.node_affinity_preferred =
      node_affinity_[1].empty() ? nullptr : node_affinity_[1].data();
  view_.node_affinity_preferred_count = node_affinity_[1].size();

  topology_spread_.reserve(data_.topology_spread.size());
  for (auto& c : data_.topology_spread) {
    schedplug_topology_spread_constraint v{};
    v.max_skew = c.max_skew;
    v.min_domains = c.min_domains;
    v.topology_key = view_of(c.topology_key);
    v.when_unsatisfiable = view_of(c.when_unsatisfiable);
    v.label_selector = selector_of(c.label_selector);
    v.node_affinity_policy = view_of(c.node_affinity_policy);
    v.node_taints_policy = view_of(c.node_taints_policy);
    v.match_label_keys = strings_of(c.match_label_keys);
    v.match_label_key_count = c.match_label_keys.size();
    topology_spread_.push_back(v);
  }
  view_.topology_spread =
      topology_spread_.empty() ? nullptr : topology_spread_.data();
  view_.topology_spread_count = topology_spread_.size();

  for (int kind = 0; kind < 4; ++kind) {
    auto& out = pod_affinity_[kind];
    out.reserve(data_.pod_affinity[kind].size());
    for (auto& t : data_.pod_affinity[kind]) {
      schedplug_pod_affinity_term v{};
      v.weight = t.weight;
      v.topology_key = view_of(t.topology_key);
      v.label_selector = selector_of(t.label_selector);
      v.namespaces = strings_of(t.namespaces);
      v.namespace_count = t.namespaces.size();
      v.namespace_selector = selector_of(t.namespace_selector);
      v.match_label_keys = strings_of(t.match_label_keys);
      v.match_label_key_count = t.match_label_keys.size();
      v.mismatch_label_keys = strings_of(t.mismatch_label_keys);
      v.mismatch_label_key_count = t.mismatch_label_keys.size();
      out.push_back(v);
    }
  }
  const auto terms = [](const std::vector<schedplug_pod_affinity_term>& v) {
    return v.empty() ? nullptr : v.data();
  };
  view_.pod_affinity_required = terms(pod_affinity_[0]);
  view_.pod_affinity_required_count = pod_affinity_[0].size();
  view_.pod_affinity_preferred = terms(pod_affinity_[1]);
  view_.pod_affinity_preferred_count = pod_affinity_[1].size();
  view_.pod_anti_affinity_required = terms(pod_affinity_[2]);
  view_.pod_anti_affinity_required_count = pod_affinity_[2].size();
  view_.pod_anti_affinity_preferred = terms(pod_affinity_[3]);
  view_.pod_anti_affinity_preferred_count = pod_affinity_[3].size();
}

const schedplug_str* PodModel::strings_of(
    const std::vector<std::string>& list) {
  if (list.empty()) return nullptr;
  std::vector<schedplug_str>& out = strings_.emplace_back();
  out.reserve(list.size());
  for (const auto& s : list) out.push_back(view_of(s));
  return out.data();
}

const schedplug_selector_requirement* PodModel::requirements_of(
    const std::vector<RequirementData>& list) {
  if (list.empty()) return nullptr;
  std::vector<schedplug_selector_requirement>& out =
      requirements_.emplace_back();
  out.reserve(list.size());
  for (const auto& r : list) {
    out.push_back(
        {view_of(r.key), view_of(r.op), strings_of(r.values), r.values.size()});
  }
  return out.data();
}

schedplug_label_selector PodModel::selector_of(LabelSelectorData& selector) {
  schedplug_label_selector out{};
  if (!selector.present) return out;
  out.present = 1;
  sort_unique_keep_last(selector.match_labels);
  const std::vector<schedplug_kv>& labels =
      selector_labels_.emplace_back(kv_views(selector.match_labels));
  out.match_labels = list_of(labels);
  out.match_expressions = requirements_of(selector.match_expressions);
  out.match_expression_count = selector.match_expressions.size();
  return out;
}

NodeModel::NodeModel(NodeData data) : data_(std::move(data)) {
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

  // v1.2 data.
  view_.unschedulable = data_.unschedulable ? 1 : 0;
  conditions_.reserve(data_.conditions.size());
  for (const auto& [type, status] : data_.conditions) {
    conditions_.push_back({view_of(type), view_of(status)});
  }
  view_.conditions = conditions_.empty() ? nullptr : conditions_.data();
  view_.condition_count = conditions_.size();
  sort_unique_keep_last(data_.capacity);
  capacity_ = resource_views(data_.capacity);
  view_.capacity = list_of(capacity_);
  std::sort(data_.pods.begin(), data_.pods.end(),
            [](const NodePodData& a, const NodePodData& b) {
              return std::tie(a.namespace_name, a.name) <
                     std::tie(b.namespace_name, b.name);
            });
  pods_.reserve(data_.pods.size());
  pod_labels_.reserve(data_.pods.size());
  pod_requests_.reserve(data_.pods.size());
  for (auto& p : data_.pods) {
    sort_unique_keep_last(p.labels);
    sort_unique_keep_last(p.requests);
    pod_labels_.push_back(kv_views(p.labels));
    pod_requests_.push_back(resource_views(p.requests));
    schedplug_node_pod v{};
    v.namespace_name = view_of(p.namespace_name);
    v.name = view_of(p.name);
    v.labels = list_of(pod_labels_.back());
    v.priority = p.priority;
    v.requests = list_of(pod_requests_.back());
    v.owner_kind = view_of(p.owner_kind);
    pods_.push_back(v);
  }
  view_.pod_list = pods_.empty() ? nullptr : pods_.data();
  view_.pod_list_count = pods_.size();

  // v1.3 data. The views point into the inner vectors, whose buffers stay
  // put when the outer vector grows.
  images_.reserve(data_.images.size());
  image_names_.reserve(data_.images.size());
  for (const auto& image : data_.images) {
    std::vector<schedplug_str> names;
    names.reserve(image.names.size());
    for (const auto& n : image.names) names.push_back(view_of(n));
    image_names_.push_back(std::move(names));
    const auto& stored = image_names_.back();
    images_.push_back({stored.empty() ? nullptr : stored.data(), stored.size(),
                       image.size_bytes});
  }
  view_.images = images_.empty() ? nullptr : images_.data();
  view_.image_count = images_.size();
}

}  // namespace schedplug::host
