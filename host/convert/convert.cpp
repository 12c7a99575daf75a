// Every field of a Pod and a Node message, each checked against its limit
// as it is copied: long because the messages are, and one file so that no
// field can skip its check.
#include "host/convert/convert.hpp"

#include <string_view>

#include <fmt/format.h>

namespace schedplug::host {
namespace {

using L = FieldLimits;

// At most 64 bytes of `s` for a message (a refused string may be huge).
std::string clip(std::string_view s) {
  if (s.size() <= 64) return std::string(s);
  return std::string(s.substr(0, 64)) + "...";
}

// The pod or node being converted, for messages; built only on a refusal.
struct Subject {
  const char* kind;  // "pod", "node"
  std::string_view ns;
  std::string_view name;
  int64_t index = -1;               // a delta upsert's node index
  const Subject* parent = nullptr;  // the node whose pod list holds it
  int position = 0;                 // its position there

  std::string describe() const {
    if (parent != nullptr) {
      return fmt::format("{}: pods[{}] (\"{}/{}\")", parent->describe(),
                         position, clip(ns), clip(name));
    }
    std::string out = std::string(kind) + " \"" +
                      (ns.empty() ? "" : clip(ns) + "/") + clip(name) + "\"";
    if (index >= 0) out += fmt::format(" (index {})", index);
    return out;
  }
};

constexpr std::string_view kWhy =
    "; the host bounds every field above Kubernetes' own limits "
    "(docs/security.md, \"Limits\"), so an object as a Kubernetes API "
    "server stores it always fits: send it unchanged";

[[noreturn]] void string_too_long(const Subject& subject,
                                  const std::string& field, size_t length,
                                  size_t limit, size_t kubernetes) {
  throw FieldLimitError(
      FieldLimitError::Kind::kString,
      fmt::format("{}: {} is {} bytes long, over the limit of {} bytes{}{}",
                  subject.describe(), field, length, limit,
                  kubernetes == 0
                      ? std::string()
                      : fmt::format(" (Kubernetes allows {})", kubernetes),
                  kWhy));
}

[[noreturn]] void list_too_long(const Subject& subject,
                                const std::string& field, size_t length,
                                size_t limit) {
  throw FieldLimitError(
      FieldLimitError::Kind::kList,
      fmt::format("{}: {} has {} entries, over the limit of {}{}",
                  subject.describe(), field, length, limit, kWhy));
}

// `field()` names the field; called only when the string is too long.
template <typename Field>
void check_string(const Subject& subject, const std::string& s, size_t limit,
                  size_t kubernetes, Field&& field) {
  if (s.size() > limit) [[unlikely]] {
    string_too_long(subject, field(), s.size(), limit, kubernetes);
  }
}

void check_list(const Subject& subject, int size, size_t limit,
                const char* field) {
  if (static_cast<size_t>(size) > limit) [[unlikely]] {
    list_too_long(subject, field, static_cast<size_t>(size), limit);
  }
}

void check_name(const Subject& subject, const std::string& s, const char* field,
                size_t kubernetes = 253) {
  check_string(subject, s, L::kNameBytes, kubernetes,
               [&] { return std::string(field); });
}

// Labels and node selectors: bounded keys and values.
template <typename Repeated>
KeyValues key_values(const Subject& subject, const Repeated& list,
                     const char* field) {
  check_list(subject, list.size(), L::kMapEntries, field);
  KeyValues out;
  out.reserve(static_cast<size_t>(list.size()));
  int i = 0;
  for (const v1::KeyValue& kv : list) {
    check_string(subject, kv.key(), L::kKeyBytes, 317,
                 [&] { return fmt::format("{}[{}] key", field, i); });
    check_string(subject, kv.value(), L::kValueBytes, 63, [&] {
      return fmt::format("{}[\"{}\"] value", field, clip(kv.key()));
    });
    out.emplace_back(kv.key(), kv.value());
    ++i;
  }
  return out;
}

// Annotations: bounded keys, and keys and values bounded together.
template <typename Repeated>
KeyValues annotations(const Subject& subject, const Repeated& list) {
  check_list(subject, list.size(), L::kMapEntries, "annotations");
  KeyValues out;
  out.reserve(static_cast<size_t>(list.size()));
  size_t total = 0;
  int i = 0;
  for (const v1::KeyValue& kv : list) {
    check_string(subject, kv.key(), L::kKeyBytes, 317,
                 [&] { return fmt::format("annotations[{}] key", i); });
    total += kv.key().size() + kv.value().size();
    out.emplace_back(kv.key(), kv.value());
    ++i;
  }
  if (total > L::kAnnotationsTotalBytes) [[unlikely]] {
    string_too_long(subject, "annotations (keys and values together)", total,
                    L::kAnnotationsTotalBytes, 256 * 1024);
  }
  return out;
}

template <typename Repeated>
Resources resources(const Subject& subject, const Repeated& list,
                    const char* field) {
  check_list(subject, list.size(), L::kListEntries, field);
  Resources out;
  out.reserve(static_cast<size_t>(list.size()));
  int i = 0;
  for (const v1::Resource& r : list) {
    check_string(subject, r.name(), L::kKeyBytes, 317,
                 [&] { return fmt::format("{}[{}] name", field, i); });
    out.emplace_back(r.name(), r.value());
    ++i;
  }
  return out;
}

void check_other(const Subject& subject, const std::string& s, const char* list,
                 int i, const char* member) {
  check_string(subject, s, L::kOtherBytes, 0,
               [&] { return fmt::format("{}[{}].{}", list, i, member); });
}

// v1.3: selectors, affinity and spread terms. `field` names the list.
template <typename Repeated>
std::vector<std::string> strings(const Subject& subject, const Repeated& list,
                                 size_t limit, size_t kubernetes,
                                 const std::string& field) {
  check_list(subject, list.size(), L::kListEntries, field.c_str());
  int i = 0;
  for (const std::string& s : list) {
    check_string(subject, s, limit, kubernetes,
                 [&] { return fmt::format("{}[{}]", field, i); });
    ++i;
  }
  return {list.begin(), list.end()};
}

template <typename Repeated>
std::vector<RequirementData> requirements(const Subject& subject,
                                          const Repeated& list,
                                          const std::string& field) {
  check_list(subject, list.size(), L::kListEntries, field.c_str());
  std::vector<RequirementData> out;
  out.reserve(static_cast<size_t>(list.size()));
  int i = 0;
  for (const v1::SelectorRequirement& r : list) {
    const std::string where = fmt::format("{}[{}]", field, i);
    check_string(subject, r.key(), L::kKeyBytes, 317,
                 [&] { return where + ".key"; });
    check_string(subject, r.operator_(), L::kOtherBytes, 0,
                 [&] { return where + ".operator"; });
    // Label values (63) or, in matchFields, node names (253).
    out.push_back(
        {r.key(), r.operator_(),
         strings(subject, r.values(), L::kNameBytes, 253, where + ".values")});
    ++i;
  }
  return out;
}

LabelSelectorData selector(const Subject& subject, bool present,
                           const v1::LabelSelector& s,
                           const std::string& field) {
  if (!present) return {};
  return {
      true,
      key_values(subject, s.match_labels(), (field + ".match_labels").c_str()),
      requirements(subject, s.match_expressions(),
                   field + ".match_expressions")};
}

template <typename Repeated>
std::vector<NodeSelectorTermData> node_selector_terms(const Subject& subject,
                                                      const Repeated& list,
                                                      const char* field) {
  check_list(subject, list.size(), L::kListEntries, field);
  std::vector<NodeSelectorTermData> out;
  out.reserve(static_cast<size_t>(list.size()));
  int i = 0;
  for (const v1::NodeSelectorTerm& t : list) {
    const std::string where = fmt::format("{}[{}]", field, i);
    out.push_back(
        {t.weight(),
         requirements(subject, t.match_expressions(),
                      where + ".match_expressions"),
         requirements(subject, t.match_fields(), where + ".match_fields")});
    ++i;
  }
  return out;
}

template <typename Repeated>
std::vector<PodAffinityTermData> pod_affinity_terms(const Subject& subject,
                                                    const Repeated& list,
                                                    const char* field) {
  check_list(subject, list.size(), L::kListEntries, field);
  std::vector<PodAffinityTermData> out;
  out.reserve(static_cast<size_t>(list.size()));
  int i = 0;
  for (const v1::PodAffinityTerm& t : list) {
    const std::string where = fmt::format("{}[{}]", field, i);
    check_string(subject, t.topology_key(), L::kKeyBytes, 317,
                 [&] { return where + ".topology_key"; });
    out.push_back(
        {t.weight(), t.topology_key(),
         selector(subject, t.has_label_selector(), t.label_selector(),
                  where + ".label_selector"),
         strings(subject, t.namespaces(), L::kNameBytes, 63,
                 where + ".namespaces"),
         selector(subject, t.has_namespace_selector(), t.namespace_selector(),
                  where + ".namespace_selector"),
         strings(subject, t.match_label_keys(), L::kKeyBytes, 317,
                 where + ".match_label_keys"),
         strings(subject, t.mismatch_label_keys(), L::kKeyBytes, 317,
                 where + ".mismatch_label_keys")});
    ++i;
  }
  return out;
}

NodePodData node_pod(const Subject& node, const v1::NodePod& p, int position) {
  const Subject subject{"pod", p.namespace_(), p.name(), -1, &node, position};
  check_name(subject, p.namespace_(), "namespace", 63);
  check_name(subject, p.name(), "name");
  check_string(subject, p.owner_kind(), L::kOtherBytes, 0,
               [] { return std::string("owner_kind"); });
  return {p.namespace_(),
          p.name(),
          key_values(subject, p.labels(), "labels"),
          p.priority(),
          resources(subject, p.requests(), "requests"),
          p.owner_kind()};
}

NodeData node_data(const v1::Node& node, int64_t index) {
  const Subject subject{"node", {}, node.name(), index};
  check_name(subject, node.name(), "name");
  NodeData out;
  out.name = node.name();
  out.labels = key_values(subject, node.labels(), "labels");
  out.annotations = annotations(subject, node.annotations());
  check_list(subject, node.taints_size(), L::kListEntries, "taints");
  out.taints.reserve(static_cast<size_t>(node.taints_size()));
  int i = 0;
  for (const v1::Taint& t : node.taints()) {
    check_string(subject, t.key(), L::kKeyBytes, 317,
                 [&] { return fmt::format("taints[{}].key", i); });
    check_string(subject, t.value(), L::kValueBytes, 63,
                 [&] { return fmt::format("taints[{}].value", i); });
    check_other(subject, t.effect(), "taints", i, "effect");
    out.taints.push_back({t.key(), t.value(), t.effect()});
    ++i;
  }
  out.allocatable = resources(subject, node.allocatable(), "allocatable");
  out.requested = resources(subject, node.requested(), "requested");
  out.pod_count = node.pod_count();
  out.unschedulable = node.unschedulable();
  check_list(subject, node.conditions_size(), L::kListEntries, "conditions");
  out.conditions.reserve(static_cast<size_t>(node.conditions_size()));
  i = 0;
  for (const v1::NodeCondition& c : node.conditions()) {
    check_string(subject, c.type(), L::kKeyBytes, 317,
                 [&] { return fmt::format("conditions[{}].type", i); });
    check_other(subject, c.status(), "conditions", i, "status");
    out.conditions.emplace_back(c.type(), c.status());
    ++i;
  }
  out.capacity = resources(subject, node.capacity(), "capacity");
  check_list(subject, node.pods_size(), L::kPodsOnNode, "pods");
  out.pods.reserve(static_cast<size_t>(node.pods_size()));
  i = 0;
  for (const v1::NodePod& p : node.pods()) {
    out.pods.push_back(node_pod(subject, p, i++));
  }
  // v1.3
  check_list(subject, node.images_size(), L::kListEntries, "images");
  out.images.reserve(static_cast<size_t>(node.images_size()));
  i = 0;
  for (const v1::NodeImage& image : node.images()) {
    const std::string where = fmt::format("images[{}].names", i);
    check_list(subject, image.names_size(), L::kListEntries, where.c_str());
    ImageData d{{image.names().begin(), image.names().end()},
                image.size_bytes()};
    int j = 0;
    for (const std::string& name : image.names()) {
      check_string(subject, name, L::kImageBytes, 0,
                   [&] { return fmt::format("{}[{}]", where, j); });
      ++j;
    }
    out.images.push_back(std::move(d));
    ++i;
  }
  return out;
}

template <typename T>
size_t vector_bytes(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

size_t string_bytes(const std::string& s) {
  // Short strings live inside the std::string itself.
  return s.size() > 15 ? s.size() + 1 : 0;
}

size_t kv_bytes(const KeyValues& list) {
  size_t out = vector_bytes(list) + list.size() * sizeof(schedplug_kv);
  for (const auto& [k, v] : list) out += string_bytes(k) + string_bytes(v);
  return out;
}

size_t strings_bytes(const std::vector<std::string>& list) {
  size_t out = vector_bytes(list) + list.size() * sizeof(schedplug_str);
  for (const std::string& s : list) out += string_bytes(s);
  return out;
}

size_t requirement_bytes(const std::vector<RequirementData>& list) {
  size_t out = vector_bytes(list) +
               list.size() * (sizeof(schedplug_selector_requirement) + 24);
  for (const RequirementData& r : list) {
    out += string_bytes(r.key) + string_bytes(r.op) + strings_bytes(r.values);
  }
  return out;
}

size_t selector_bytes(const LabelSelectorData& s) {
  return kv_bytes(s.match_labels) + 24 + requirement_bytes(s.match_expressions);
}

size_t resource_bytes(const Resources& list) {
  size_t out = vector_bytes(list) + list.size() * sizeof(schedplug_resource);
  for (const auto& r : list) out += string_bytes(r.first);
  return out;
}

}  // namespace

PodData pod_from_proto(const v1::Pod& pod) {
  const Subject subject{"pod", pod.namespace_(), pod.name()};
  check_name(subject, pod.namespace_(), "namespace", 63);
  check_name(subject, pod.name(), "name");
  check_name(subject, pod.uid(), "uid", 0);
  check_name(subject, pod.node_name(), "node_name");
  check_name(subject, pod.nominated_node_name(), "nominated_node_name");
  check_name(subject, pod.priority_class_name(), "priority_class_name");
  PodData out;
  out.namespace_name = pod.namespace_();
  out.name = pod.name();
  out.uid = pod.uid();
  out.labels = key_values(subject, pod.labels(), "labels");
  out.annotations = annotations(subject, pod.annotations());
  out.priority = pod.priority();
  out.requests = resources(subject, pod.requests(), "requests");
  out.node_selector = key_values(subject, pod.node_selector(), "node_selector");
  check_list(subject, pod.tolerations_size(), L::kListEntries, "tolerations");
  out.tolerations.reserve(static_cast<size_t>(pod.tolerations_size()));
  int i = 0;
  for (const v1::Toleration& t : pod.tolerations()) {
    check_string(subject, t.key(), L::kKeyBytes, 317,
                 [&] { return fmt::format("tolerations[{}].key", i); });
    check_string(subject, t.value(), L::kValueBytes, 63,
                 [&] { return fmt::format("tolerations[{}].value", i); });
    check_other(subject, t.operator_(), "tolerations", i, "operator");
    check_other(subject, t.effect(), "tolerations", i, "effect");
    TolerationData d{t.key(), t.operator_(), t.value(), t.effect(), {}};
    if (t.has_toleration_seconds())
      d.toleration_seconds = t.toleration_seconds();
    out.tolerations.push_back(std::move(d));
    ++i;
  }
  out.node_name = pod.node_name();
  out.nominated_node_name = pod.nominated_node_name();
  out.priority_class_name = pod.priority_class_name();
  check_list(subject, pod.owners_size(), L::kListEntries, "owners");
  out.owners.reserve(static_cast<size_t>(pod.owners_size()));
  i = 0;
  for (const v1::OwnerRef& o : pod.owners()) {
    check_other(subject, o.kind(), "owners", i, "kind");
    check_string(subject, o.name(), L::kNameBytes, 253,
                 [&] { return fmt::format("owners[{}].name", i); });
    out.owners.push_back({o.kind(), o.name(), o.controller()});
    ++i;
  }
  check_list(subject, pod.containers_size(), L::kListEntries, "containers");
  out.containers.reserve(static_cast<size_t>(pod.containers_size()));
  i = 0;
  for (const v1::Container& c : pod.containers()) {
    check_string(subject, c.name(), L::kNameBytes, 63,
                 [&] { return fmt::format("containers[{}].name", i); });
    check_string(subject, c.image(), L::kImageBytes, 0,
                 [&] { return fmt::format("containers[{}].image", i); });
    const std::string where = fmt::format("containers[{}]", i);
    ContainerData d{
        c.name(),
        c.image(),
        resources(subject, c.requests(), (where + ".requests").c_str()),
        resources(subject, c.limits(), (where + ".limits").c_str()),
        {}};
    check_list(subject, c.ports_size(), L::kPorts, (where + ".ports").c_str());
    d.ports.reserve(static_cast<size_t>(c.ports_size()));
    int j = 0;
    for (const v1::ContainerPort& p : c.ports()) {
      check_string(subject, p.protocol(), L::kOtherBytes, 0, [&] {
        return fmt::format("{}.ports[{}].protocol", where, j);
      });
      check_string(subject, p.host_ip(), L::kOtherBytes, 0, [&] {
        return fmt::format("{}.ports[{}].host_ip", where, j);
      });
      d.ports.push_back(
          {p.container_port(), p.host_port(), p.protocol(), p.host_ip()});
      ++j;
    }
    out.containers.push_back(std::move(d));
    ++i;
  }
  // v1.3
  check_list(subject, pod.volumes_size(), L::kListEntries, "volumes");
  out.volumes.reserve(static_cast<size_t>(pod.volumes_size()));
  i = 0;
  for (const v1::Volume& v : pod.volumes()) {
    check_string(subject, v.name(), L::kNameBytes, 63,
                 [&] { return fmt::format("volumes[{}].name", i); });
    check_other(subject, v.source(), "volumes", i, "source");
    // A generic ephemeral volume's claim is "<pod name>-<volume name>".
    check_string(subject, v.claim_name(), L::kNameBytes, 253,
                 [&] { return fmt::format("volumes[{}].claim_name", i); });
    out.volumes.push_back(
        {v.name(), v.source(), v.claim_name(), v.read_only()});
    ++i;
  }
  out.node_affinity_required = node_selector_terms(
      subject, pod.node_affinity_required(), "node_affinity_required");
  out.node_affinity_preferred = node_selector_terms(
      subject, pod.node_affinity_preferred(), "node_affinity_preferred");
  check_list(subject, pod.topology_spread_size(), L::kListEntries,
             "topology_spread");
  out.topology_spread.reserve(static_cast<size_t>(pod.topology_spread_size()));
  i = 0;
  for (const v1::TopologySpreadConstraint& c : pod.topology_spread()) {
    const std::string where = fmt::format("topology_spread[{}]", i);
    check_string(subject, c.topology_key(), L::kKeyBytes, 317,
                 [&] { return where + ".topology_key"; });
    check_other(subject, c.when_unsatisfiable(), "topology_spread", i,
                "when_unsatisfiable");
    check_other(subject, c.node_affinity_policy(), "topology_spread", i,
                "node_affinity_policy");
    check_other(subject, c.node_taints_policy(), "topology_spread", i,
                "node_taints_policy");
    out.topology_spread.push_back(
        {c.max_skew(), c.min_domains(), c.topology_key(),
         c.when_unsatisfiable(),
         selector(subject, c.has_label_selector(), c.label_selector(),
                  where + ".label_selector"),
         c.node_affinity_policy(), c.node_taints_policy(),
         strings(subject, c.match_label_keys(), L::kKeyBytes, 317,
                 where + ".match_label_keys")});
    ++i;
  }
  out.pod_affinity[0] = pod_affinity_terms(subject, pod.pod_affinity_required(),
                                           "pod_affinity_required");
  out.pod_affinity[1] = pod_affinity_terms(
      subject, pod.pod_affinity_preferred(), "pod_affinity_preferred");
  out.pod_affinity[2] = pod_affinity_terms(
      subject, pod.pod_anti_affinity_required(), "pod_anti_affinity_required");
  out.pod_affinity[3] =
      pod_affinity_terms(subject, pod.pod_anti_affinity_preferred(),
                         "pod_anti_affinity_preferred");
  return out;
}

NodeData node_from_proto(const v1::Node& node) { return node_data(node, -1); }

TableDelta delta_from_proto(const v1::NodeTableDelta& delta) {
  TableDelta out;
  out.base_version = delta.base_version();
  out.new_version = delta.new_version();
  out.full = delta.full();
  out.upserts.reserve(static_cast<size_t>(delta.upserts_size()));
  for (const v1::Node& node : delta.upserts()) {
    // NodeModel sorts and deduplicates; the table keeps a compact copy.
    const NodeModel model(node_data(node, node.index()));
    out.upserts.push_back(
        {node.index(), node.generation(), CompactNode::copy_of(model.view())});
  }
  out.removed.assign(delta.removed().begin(), delta.removed().end());
  return out;
}

size_t estimated_bytes(const PodData& pod) {
  // The model: PodData, its view and the view's arrays (PodModel).
  size_t out = sizeof(PodModel) + 256;
  for (const std::string* s :
       {&pod.namespace_name, &pod.name, &pod.uid, &pod.node_name,
        &pod.nominated_node_name, &pod.priority_class_name}) {
    out += string_bytes(*s);
  }
  out += kv_bytes(pod.labels) + kv_bytes(pod.annotations) +
         kv_bytes(pod.node_selector) + resource_bytes(pod.requests);
  out += vector_bytes(pod.tolerations) +
         pod.tolerations.size() * sizeof(schedplug_toleration);
  for (const TolerationData& t : pod.tolerations) {
    out += string_bytes(t.key) + string_bytes(t.op) + string_bytes(t.value) +
           string_bytes(t.effect);
  }
  out += vector_bytes(pod.owners) + pod.owners.size() * sizeof(schedplug_owner);
  for (const OwnerData& o : pod.owners) {
    out += string_bytes(o.kind) + string_bytes(o.name);
  }
  out += vector_bytes(pod.containers) +
         pod.containers.size() * (sizeof(schedplug_container) + 2 * 24 + 24);
  for (const ContainerData& c : pod.containers) {
    out += string_bytes(c.name) + string_bytes(c.image) +
           resource_bytes(c.requests) + resource_bytes(c.limits) +
           vector_bytes(c.ports) +
           c.ports.size() * sizeof(schedplug_container_port);
    for (const PortData& p : c.ports) {
      out += string_bytes(p.protocol) + string_bytes(p.host_ip);
    }
  }
  out +=
      vector_bytes(pod.volumes) + pod.volumes.size() * sizeof(schedplug_volume);
  for (const VolumeData& v : pod.volumes) {
    out += string_bytes(v.name) + string_bytes(v.source) +
           string_bytes(v.claim_name);
  }
  for (const auto* terms :
       {&pod.node_affinity_required, &pod.node_affinity_preferred}) {
    out += vector_bytes(*terms) +
           terms->size() * sizeof(schedplug_node_selector_term);
    for (const NodeSelectorTermData& t : *terms) {
      out += requirement_bytes(t.match_expressions) +
             requirement_bytes(t.match_fields);
    }
  }
  out +=
      vector_bytes(pod.topology_spread) +
      pod.topology_spread.size() * sizeof(schedplug_topology_spread_constraint);
  for (const TopologySpreadData& c : pod.topology_spread) {
    out += string_bytes(c.topology_key) + string_bytes(c.when_unsatisfiable) +
           string_bytes(c.node_affinity_policy) +
           string_bytes(c.node_taints_policy) +
           selector_bytes(c.label_selector) + strings_bytes(c.match_label_keys);
  }
  for (const auto& terms : pod.pod_affinity) {
    out += vector_bytes(terms) +
           terms.size() * sizeof(schedplug_pod_affinity_term);
    for (const PodAffinityTermData& t : terms) {
      out += string_bytes(t.topology_key) + selector_bytes(t.label_selector) +
             strings_bytes(t.namespaces) +
             selector_bytes(t.namespace_selector) +
             strings_bytes(t.match_label_keys) +
             strings_bytes(t.mismatch_label_keys);
    }
  }
  return out;
}

}  // namespace schedplug::host
