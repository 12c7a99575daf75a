// Reading kubectl dumps (kube_dump.hpp) and Kubernetes quantities. One file:
// every field reader takes the Reader, whose position makes each message name
// the file, document, item and field, and quantities are read inside those
// fields.
#include "tools/schedplug/kube_dump.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include "host/config/yaml_bounds.hpp"

namespace schedplug::tools {
namespace {

using Exact = std::map<std::string, nano_t>;

constexpr nano_t kNano = 1000000000;
// Far above any real quantity (2^63 units), far below nano_t's limit.
const nano_t kLimit = static_cast<nano_t>(1) << 120;

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

// Where one object of a dump sits, for messages.
struct Where {
  std::string file;
  size_t document = 0;         // 1-based
  std::optional<size_t> item;  // index in a List's items
  std::string kind;            // "Node" / "Pod"
  std::string name;            // metadata.name once known

  std::string text() const {
    std::string out = file + ": document " + std::to_string(document);
    if (item) out += ", items[" + std::to_string(*item) + "]";
    if (!name.empty()) out += " (" + kind + " \"" + name + "\")";
    return out;
  }
};

class Reader {
 public:
  Reader(std::vector<std::string>& problems, Where where)
      : problems_(problems), where_(std::move(where)) {}

  Where& where() { return where_; }

  void problem(const YAML::Node& at, const std::string& field,
               const std::string& message) {
    std::string line;
    if (at.IsDefined() && at.Mark().line >= 0) {
      line = " (line " + std::to_string(at.Mark().line + 1) + ")";
    }
    problems_.push_back(where_.text() + ": field " + field + line + ": " +
                        message);
  }

  // A child of a mapping; undefined when absent or null. Reports a parent
  // that is not a mapping.
  YAML::Node child(const YAML::Node& parent, const std::string& parent_field,
                   const char* key) {
    if (!parent.IsDefined() || parent.IsNull()) return YAML::Node();
    if (!parent.IsMap()) {
      problem(parent, parent_field,
              "must be a mapping (is a " + kind_of(parent) +
                  "); is this a Kubernetes object?");
      return YAML::Node();
    }
    YAML::Node c = parent[key];
    if (!c.IsDefined() || c.IsNull()) return YAML::Node();
    return c;
  }

  std::string string_at(const YAML::Node& n, const std::string& field) {
    if (!n.IsDefined() || n.IsNull()) return {};
    if (!n.IsScalar()) {
      problem(n, field, "must be a string (is a " + kind_of(n) + ")");
      return {};
    }
    return n.Scalar();
  }

  std::optional<int64_t> int_at(const YAML::Node& n, const std::string& field) {
    if (!n.IsDefined() || n.IsNull()) return std::nullopt;
    if (n.IsScalar()) {
      const std::string& s = n.Scalar();
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec == std::errc() && end == s.data() + s.size()) return v;
    }
    problem(n, field, "must be an integer (is " + describe(n) + ")");
    return std::nullopt;
  }

  host::KeyValues map_at(const YAML::Node& n, const std::string& field) {
    host::KeyValues out;
    if (!n.IsDefined() || n.IsNull()) return out;
    if (!n.IsMap()) {
      problem(n, field,
              "must be a mapping of strings (is a " + kind_of(n) + ")");
      return out;
    }
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (!kv.second.IsNull() && !kv.second.IsScalar()) {
        problem(kv.second, field + "." + key,
                "must be a string (is a " + kind_of(kv.second) + ")");
        continue;
      }
      out.emplace_back(key, kv.second.IsNull() ? "" : kv.second.Scalar());
    }
    return out;
  }

  // A ResourceList: name -> exact quantity.
  Exact resources_at(const YAML::Node& n, const std::string& field) {
    Exact out;
    if (!n.IsDefined() || n.IsNull()) return out;
    if (!n.IsMap()) {
      problem(n, field,
              "must be a mapping of resource names to quantities (is a " +
                  kind_of(n) + ")");
      return out;
    }
    for (const auto& kv : n) {
      const std::string name = kv.first.Scalar();
      const std::string sub = field + "." + name;
      if (!kv.second.IsScalar()) {
        problem(kv.second, sub,
                "must be a quantity such as 500m, 2 or 1Gi (is a " +
                    kind_of(kv.second) + ")");
        continue;
      }
      const auto q = parse_quantity(kv.second.Scalar());
      if (!q) {
        problem(kv.second, sub,
                "\"" + kv.second.Scalar() +
                    "\" is not a Kubernetes quantity (such as 500m, 2, "
                    "1.5Gi or 1e3)");
        continue;
      }
      out[name] = *q;
    }
    return out;
  }

  bool bool_at(const YAML::Node& n, const std::string& field) {
    if (!n.IsDefined() || n.IsNull()) return false;
    if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) {
      return n.Scalar() == "true";
    }
    problem(n, field, "must be true or false (is " + describe(n) + ")");
    return false;
  }

  std::vector<std::string> strings_at(const YAML::Node& n,
                                      const std::string& field) {
    std::vector<std::string> out;
    size_t i = 0;
    for (const auto& item : sequence_at(n, field)) {
      out.push_back(string_at(item, field + "[" + std::to_string(i++) + "]"));
    }
    return out;
  }

  YAML::Node sequence_at(const YAML::Node& n, const std::string& field) {
    if (!n.IsDefined() || n.IsNull()) return YAML::Node();
    if (!n.IsSequence()) {
      problem(n, field, "must be a list (is a " + kind_of(n) + ")");
      return YAML::Node();
    }
    return n;
  }

  static std::string kind_of(const YAML::Node& n) {
    if (n.IsMap()) return "mapping";
    if (n.IsSequence()) return "list";
    if (n.IsScalar()) return "string";
    return "null";
  }
  static std::string describe(const YAML::Node& n) {
    if (n.IsScalar()) return "\"" + n.Scalar() + "\"";
    return "a " + kind_of(n);
  }

 private:
  std::vector<std::string>& problems_;
  Where where_;
};

int64_t clamp64(nano_t v) {
  if (v > std::numeric_limits<int64_t>::max())
    return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min())
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

nano_t ceil_div(nano_t a, nano_t b) {
  nano_t q = a / b;
  if (a % b != 0 && ((a > 0) == (b > 0))) ++q;
  return q;
}

void add_to(Exact& sum, const Exact& more) {
  for (const auto& [name, v] : more) sum[name] += v;
}
void max_into(Exact& into, const Exact& other) {
  for (const auto& [name, v] : other) {
    auto it = into.find(name);
    if (it == into.end() || it->second < v) into[name] = v;
  }
}

// The common part of Node and Pod objects. Returns false when the object
// has no name (then nothing else is read).
bool read_metadata(Reader& r, const YAML::Node& obj, std::string& name,
                   std::string* namespace_name, std::string* uid,
                   host::KeyValues& labels, host::KeyValues& annotations,
                   std::string* created) {
  const YAML::Node meta = r.child(obj, "(object)", "metadata");
  name = r.string_at(r.child(meta, "metadata", "name"), "metadata.name");
  if (name.empty()) {
    r.problem(meta.IsDefined() ? meta : obj, "metadata.name",
              "is missing; every object of a kubectl dump has a name");
    return false;
  }
  r.where().name = name;
  if (namespace_name) {
    *namespace_name = r.string_at(r.child(meta, "metadata", "namespace"),
                                  "metadata.namespace");
    if (namespace_name->empty()) *namespace_name = "default";
  }
  if (uid) *uid = r.string_at(r.child(meta, "metadata", "uid"), "metadata.uid");
  if (created) {
    *created = r.string_at(r.child(meta, "metadata", "creationTimestamp"),
                           "metadata.creationTimestamp");
  }
  labels = r.map_at(r.child(meta, "metadata", "labels"), "metadata.labels");
  annotations = r.map_at(r.child(meta, "metadata", "annotations"),
                         "metadata.annotations");
  return true;
}

// A ResourceList as the shim's resourceList sends it: by name, cpu in
// millicores, everything else as an integer rounded up.
host::Resources resource_list(const Exact& exact) {
  host::Resources out;
  for (const auto& [name, v] : exact) {
    out.emplace_back(
        name, name == "cpu" ? quantity_milli_value(v) : quantity_value(v));
  }
  return out;
}

int32_t int32_at(Reader& r, const YAML::Node& n, const std::string& field) {
  const std::optional<int64_t> v = r.int_at(n, field);
  if (!v) return 0;
  if (*v < std::numeric_limits<int32_t>::min() ||
      *v > std::numeric_limits<int32_t>::max()) {
    r.problem(n, field, "is outside the int32 range Kubernetes allows");
    return 0;
  }
  return static_cast<int32_t>(*v);
}

std::string item(const std::string& field, size_t i) {
  return field + "[" + std::to_string(i) + "]";
}

std::vector<host::RequirementData> requirements_at(Reader& r,
                                                   const YAML::Node& list,
                                                   const std::string& field) {
  std::vector<host::RequirementData> out;
  size_t i = 0;
  for (const auto& e : r.sequence_at(list, field)) {
    const std::string f = item(field, i++);
    host::RequirementData d;
    d.key = r.string_at(r.child(e, f, "key"), f + ".key");
    d.op = r.string_at(r.child(e, f, "operator"), f + ".operator");
    d.values = r.strings_at(r.child(e, f, "values"), f + ".values");
    out.push_back(std::move(d));
  }
  return out;
}

// A metav1.LabelSelector; absent stays unset (nil), `{}` is present.
host::LabelSelectorData selector_at(Reader& r, const YAML::Node& n,
                                    const std::string& field) {
  host::LabelSelectorData s;
  if (!n.IsDefined() || n.IsNull()) return s;
  s.present = true;
  s.match_labels =
      r.map_at(r.child(n, field, "matchLabels"), field + ".matchLabels");
  s.match_expressions = requirements_at(
      r, r.child(n, field, "matchExpressions"), field + ".matchExpressions");
  return s;
}

host::NodeSelectorTermData node_term_at(Reader& r, const YAML::Node& n,
                                        const std::string& field,
                                        int32_t weight) {
  host::NodeSelectorTermData t;
  t.weight = weight;
  t.match_expressions = requirements_at(
      r, r.child(n, field, "matchExpressions"), field + ".matchExpressions");
  t.match_fields = requirements_at(r, r.child(n, field, "matchFields"),
                                   field + ".matchFields");
  return t;
}

host::PodAffinityTermData pod_term_at(Reader& r, const YAML::Node& n,
                                      const std::string& field,
                                      int32_t weight) {
  host::PodAffinityTermData t;
  t.weight = weight;
  t.topology_key =
      r.string_at(r.child(n, field, "topologyKey"), field + ".topologyKey");
  t.label_selector = selector_at(r, r.child(n, field, "labelSelector"),
                                 field + ".labelSelector");
  t.namespaces =
      r.strings_at(r.child(n, field, "namespaces"), field + ".namespaces");
  t.namespace_selector = selector_at(r, r.child(n, field, "namespaceSelector"),
                                     field + ".namespaceSelector");
  t.match_label_keys = r.strings_at(r.child(n, field, "matchLabelKeys"),
                                    field + ".matchLabelKeys");
  t.mismatch_label_keys = r.strings_at(r.child(n, field, "mismatchLabelKeys"),
                                       field + ".mismatchLabelKeys");
  return t;
}

// Required terms, then preferred ones with their weights, of one
// podAffinity or podAntiAffinity.
void pod_terms_at(Reader& r, const YAML::Node& n, const std::string& field,
                  std::vector<host::PodAffinityTermData>& required,
                  std::vector<host::PodAffinityTermData>& preferred) {
  const std::string req =
      field + ".requiredDuringSchedulingIgnoredDuringExecution";
  size_t i = 0;
  for (const auto& t : r.sequence_at(
           r.child(n, field, "requiredDuringSchedulingIgnoredDuringExecution"),
           req)) {
    required.push_back(pod_term_at(r, t, item(req, i++), 0));
  }
  const std::string pref =
      field + ".preferredDuringSchedulingIgnoredDuringExecution";
  i = 0;
  for (const auto& t : r.sequence_at(
           r.child(n, field, "preferredDuringSchedulingIgnoredDuringExecution"),
           pref)) {
    const std::string f = item(pref, i++);
    const int32_t weight = int32_at(r, r.child(t, f, "weight"), f + ".weight");
    preferred.push_back(pod_term_at(r, r.child(t, f, "podAffinityTerm"),
                                    f + ".podAffinityTerm", weight));
  }
}

KubeNode read_node(Reader& r, const YAML::Node& obj) {
  KubeNode node;
  if (!read_metadata(r, obj, node.data.name, nullptr, nullptr, node.data.labels,
                     node.data.annotations, nullptr)) {
    return node;
  }
  node.where = r.where().text();
  const YAML::Node spec = r.child(obj, "(object)", "spec");
  const YAML::Node taints =
      r.sequence_at(r.child(spec, "spec", "taints"), "spec.taints");
  size_t i = 0;
  for (const auto& t : taints) {
    const std::string f = "spec.taints[" + std::to_string(i++) + "]";
    host::TaintData d;
    d.key = r.string_at(r.child(t, f, "key"), f + ".key");
    d.value = r.string_at(r.child(t, f, "value"), f + ".value");
    d.effect = r.string_at(r.child(t, f, "effect"), f + ".effect");
    node.data.taints.push_back(std::move(d));
  }
  // kube-scheduler's NodeInfo: cpu, memory, ephemeral-storage and pods,
  // then the scalar resources by name
  // (integration/scheduler/shim/wire/convert.go).
  const YAML::Node status = r.child(obj, "(object)", "status");
  const Exact alloc = r.resources_at(r.child(status, "status", "allocatable"),
                                     "status.allocatable");
  auto get = [&](const char* name) {
    auto it = alloc.find(name);
    return it == alloc.end() ? static_cast<nano_t>(0) : it->second;
  };
  node.data.allocatable = {
      {"cpu", quantity_milli_value(get("cpu"))},
      {"memory", quantity_value(get("memory"))},
      {"ephemeral-storage", quantity_value(get("ephemeral-storage"))},
      {"pods", quantity_value(get("pods"))},
  };
  for (const auto& [name, v] : alloc) {
    if (is_scalar_resource(name)) {
      node.data.allocatable.emplace_back(name, quantity_value(v));
    }
  }
  // The data beyond the v1.1 view (plugin.h's SCHEDPLUG_DATA_NODE_*), as
  // the shim converts it; the node's pods are the simulation's to fill.
  node.data.unschedulable =
      r.bool_at(r.child(spec, "spec", "unschedulable"), "spec.unschedulable");
  i = 0;
  for (const auto& c : r.sequence_at(r.child(status, "status", "conditions"),
                                     "status.conditions")) {
    const std::string f = item("status.conditions", i++);
    node.data.conditions.emplace_back(
        r.string_at(r.child(c, f, "type"), f + ".type"),
        r.string_at(r.child(c, f, "status"), f + ".status"));
  }
  node.data.capacity = resource_list(
      r.resources_at(r.child(status, "status", "capacity"), "status.capacity"));
  i = 0;
  for (const auto& img :
       r.sequence_at(r.child(status, "status", "images"), "status.images")) {
    const std::string f = item("status.images", i++);
    host::ImageData d;
    d.names = r.strings_at(r.child(img, f, "names"), f + ".names");
    d.size_bytes =
        r.int_at(r.child(img, f, "sizeBytes"), f + ".sizeBytes").value_or(0);
    node.data.images.push_back(std::move(d));
  }
  return node;
}

// resourcehelper.PodRequests (k8s.io/component-helpers/resource) with
// pod-level resources honoured, as the shim and NodeInfo call it.
Exact pod_requests(Reader& r, const YAML::Node& spec) {
  auto container_requests = [&](const YAML::Node& c, const std::string& f) {
    const YAML::Node res = r.child(c, f, "resources");
    return r.resources_at(r.child(res, f + ".resources", "requests"),
                          f + ".resources.requests");
  };
  Exact reqs;
  const YAML::Node containers =
      r.sequence_at(r.child(spec, "spec", "containers"), "spec.containers");
  size_t i = 0;
  for (const auto& c : containers) {
    add_to(reqs, container_requests(
                     c, "spec.containers[" + std::to_string(i++) + "]"));
  }
  Exact restartable, init;
  const YAML::Node inits = r.sequence_at(
      r.child(spec, "spec", "initContainers"), "spec.initContainers");
  i = 0;
  for (const auto& c : inits) {
    const std::string f = "spec.initContainers[" + std::to_string(i++) + "]";
    Exact own = container_requests(c, f);
    const std::string policy =
        r.string_at(r.child(c, f, "restartPolicy"), f + ".restartPolicy");
    if (policy == "Always") {
      // A sidecar runs beside the containers and the later init containers.
      add_to(reqs, own);
      add_to(restartable, own);
      own = restartable;
    } else {
      add_to(own, restartable);
    }
    max_into(init, own);
  }
  max_into(reqs, init);
  const YAML::Node pod_res = r.child(spec, "spec", "resources");
  const Exact pod_level =
      r.resources_at(r.child(pod_res, "spec.resources", "requests"),
                     "spec.resources.requests");
  for (const auto& [name, v] : pod_level) {
    if (name == "cpu" || name == "memory" || name.rfind("hugepages-", 0) == 0) {
      reqs[name] = v;
    }
  }
  add_to(reqs,
         r.resources_at(r.child(spec, "spec", "overhead"), "spec.overhead"));
  return reqs;
}

// The data beyond the v1.1 view that plugins may declare (plugin.h's
// SCHEDPLUG_DATA_*), read as the shim converts it (wire/convert.go):
// simulate --native-only hands a plugin what the shim would send it.
void read_pod_data(Reader& r, const YAML::Node& obj, const YAML::Node& spec,
                   KubePod& pod) {
  host::PodData& d = pod.data;
  d.node_name = pod.node_name;
  const YAML::Node meta = r.child(obj, "(object)", "metadata");
  const YAML::Node status = r.child(obj, "(object)", "status");
  d.nominated_node_name =
      r.string_at(r.child(status, "status", "nominatedNodeName"),
                  "status.nominatedNodeName");
  d.priority_class_name = r.string_at(
      r.child(spec, "spec", "priorityClassName"), "spec.priorityClassName");
  size_t i = 0;
  for (const auto& o :
       r.sequence_at(r.child(meta, "metadata", "ownerReferences"),
                     "metadata.ownerReferences")) {
    const std::string f = item("metadata.ownerReferences", i++);
    host::OwnerData owner;
    owner.kind = r.string_at(r.child(o, f, "kind"), f + ".kind");
    owner.name = r.string_at(r.child(o, f, "name"), f + ".name");
    owner.controller =
        r.bool_at(r.child(o, f, "controller"), f + ".controller");
    if (owner.controller && pod.owner_kind.empty()) pod.owner_kind = owner.kind;
    d.owners.push_back(std::move(owner));
  }
  // pod_requests read the containers' requests and reported their problems
  // already: read them again without a second report.
  std::vector<std::string> reported;
  Reader quiet(reported, r.where());
  i = 0;
  for (const auto& c :
       r.sequence_at(r.child(spec, "spec", "containers"), "spec.containers")) {
    const std::string f = item("spec.containers", i++);
    host::ContainerData cd;
    cd.name = r.string_at(r.child(c, f, "name"), f + ".name");
    cd.image = r.string_at(r.child(c, f, "image"), f + ".image");
    const YAML::Node res = quiet.child(c, f, "resources");
    cd.requests = resource_list(
        quiet.resources_at(quiet.child(res, f + ".resources", "requests"), ""));
    cd.limits = resource_list(r.resources_at(
        r.child(res, f + ".resources", "limits"), f + ".resources.limits"));
    size_t k = 0;
    for (const auto& p : r.sequence_at(r.child(c, f, "ports"), f + ".ports")) {
      const std::string g = item(f + ".ports", k++);
      host::PortData port;
      port.container_port =
          int32_at(r, r.child(p, g, "containerPort"), g + ".containerPort");
      port.host_port = int32_at(r, r.child(p, g, "hostPort"), g + ".hostPort");
      port.protocol = r.string_at(r.child(p, g, "protocol"), g + ".protocol");
      port.host_ip = r.string_at(r.child(p, g, "hostIP"), g + ".hostIP");
      cd.ports.push_back(std::move(port));
    }
    d.containers.push_back(std::move(cd));
  }
  i = 0;
  for (const auto& v :
       r.sequence_at(r.child(spec, "spec", "volumes"), "spec.volumes")) {
    const std::string f = item("spec.volumes", i++);
    host::VolumeData vd;
    vd.name = r.string_at(r.child(v, f, "name"), f + ".name");
    if (v.IsMap()) {
      // The volume's one source: its key in the spec.
      for (const auto& kv : v) {
        const std::string key = kv.first.Scalar();
        if (key == "name") continue;
        vd.source = key;
        vd.read_only = r.bool_at(r.child(kv.second, f + "." + key, "readOnly"),
                                 f + "." + key + ".readOnly");
        if (key == "persistentVolumeClaim") {
          vd.claim_name =
              r.string_at(r.child(kv.second, f + "." + key, "claimName"),
                          f + "." + key + ".claimName");
        } else if (key == "ephemeral") {
          // The claim Kubernetes creates for a generic ephemeral volume.
          vd.claim_name = d.name + "-" + vd.name;
        }
        break;
      }
    }
    d.volumes.push_back(std::move(vd));
  }
  const YAML::Node affinity = r.child(spec, "spec", "affinity");
  const YAML::Node node_affinity =
      r.child(affinity, "spec.affinity", "nodeAffinity");
  const std::string na = "spec.affinity.nodeAffinity";
  const YAML::Node required = r.child(
      node_affinity, na, "requiredDuringSchedulingIgnoredDuringExecution");
  const std::string req =
      na + ".requiredDuringSchedulingIgnoredDuringExecution";
  i = 0;
  for (const auto& t :
       r.sequence_at(r.child(required, req, "nodeSelectorTerms"),
                     req + ".nodeSelectorTerms")) {
    d.node_affinity_required.push_back(
        node_term_at(r, t, item(req + ".nodeSelectorTerms", i++), 0));
  }
  const std::string pref =
      na + ".preferredDuringSchedulingIgnoredDuringExecution";
  i = 0;
  for (const auto& t :
       r.sequence_at(r.child(node_affinity, na,
                             "preferredDuringSchedulingIgnoredDuringExecution"),
                     pref)) {
    const std::string f = item(pref, i++);
    const int32_t weight = int32_at(r, r.child(t, f, "weight"), f + ".weight");
    d.node_affinity_preferred.push_back(node_term_at(
        r, r.child(t, f, "preference"), f + ".preference", weight));
  }
  i = 0;
  for (const auto& c :
       r.sequence_at(r.child(spec, "spec", "topologySpreadConstraints"),
                     "spec.topologySpreadConstraints")) {
    const std::string f = item("spec.topologySpreadConstraints", i++);
    host::TopologySpreadData t;
    t.max_skew = int32_at(r, r.child(c, f, "maxSkew"), f + ".maxSkew");
    t.min_domains = int32_at(r, r.child(c, f, "minDomains"), f + ".minDomains");
    t.topology_key =
        r.string_at(r.child(c, f, "topologyKey"), f + ".topologyKey");
    t.when_unsatisfiable = r.string_at(r.child(c, f, "whenUnsatisfiable"),
                                       f + ".whenUnsatisfiable");
    t.label_selector =
        selector_at(r, r.child(c, f, "labelSelector"), f + ".labelSelector");
    t.node_affinity_policy = r.string_at(r.child(c, f, "nodeAffinityPolicy"),
                                         f + ".nodeAffinityPolicy");
    t.node_taints_policy =
        r.string_at(r.child(c, f, "nodeTaintsPolicy"), f + ".nodeTaintsPolicy");
    t.match_label_keys =
        r.strings_at(r.child(c, f, "matchLabelKeys"), f + ".matchLabelKeys");
    d.topology_spread.push_back(std::move(t));
  }
  pod_terms_at(r, r.child(affinity, "spec.affinity", "podAffinity"),
               "spec.affinity.podAffinity", d.pod_affinity[0],
               d.pod_affinity[1]);
  pod_terms_at(r, r.child(affinity, "spec.affinity", "podAntiAffinity"),
               "spec.affinity.podAntiAffinity", d.pod_affinity[2],
               d.pod_affinity[3]);
}

KubePod read_pod(Reader& r, const YAML::Node& obj) {
  KubePod pod;
  if (!read_metadata(r, obj, pod.data.name, &pod.data.namespace_name,
                     &pod.data.uid, pod.data.labels, pod.data.annotations,
                     &pod.created)) {
    return pod;
  }
  pod.where = r.where().text();
  const YAML::Node spec = r.child(obj, "(object)", "spec");
  pod.node_name =
      r.string_at(r.child(spec, "spec", "nodeName"), "spec.nodeName");
  pod.scheduler_name =
      r.string_at(r.child(spec, "spec", "schedulerName"), "spec.schedulerName");
  if (pod.scheduler_name.empty()) pod.scheduler_name = "default-scheduler";
  if (auto p = r.int_at(r.child(spec, "spec", "priority"), "spec.priority")) {
    if (*p < std::numeric_limits<int32_t>::min() ||
        *p > std::numeric_limits<int32_t>::max()) {
      r.problem(r.child(spec, "spec", "priority"), "spec.priority",
                "is outside the int32 range Kubernetes allows");
    } else {
      pod.data.priority = static_cast<int32_t>(*p);
    }
  }
  pod.data.node_selector =
      r.map_at(r.child(spec, "spec", "nodeSelector"), "spec.nodeSelector");
  const YAML::Node tolerations =
      r.sequence_at(r.child(spec, "spec", "tolerations"), "spec.tolerations");
  size_t i = 0;
  for (const auto& t : tolerations) {
    const std::string f = "spec.tolerations[" + std::to_string(i++) + "]";
    host::TolerationData d;
    d.key = r.string_at(r.child(t, f, "key"), f + ".key");
    d.op = r.string_at(r.child(t, f, "operator"), f + ".operator");
    d.value = r.string_at(r.child(t, f, "value"), f + ".value");
    d.effect = r.string_at(r.child(t, f, "effect"), f + ".effect");
    d.toleration_seconds =
        r.int_at(r.child(t, f, "tolerationSeconds"), f + ".tolerationSeconds");
    pod.data.tolerations.push_back(std::move(d));
  }
  const YAML::Node status = r.child(obj, "(object)", "status");
  pod.phase = r.string_at(r.child(status, "status", "phase"), "status.phase");

  const Exact reqs = pod_requests(r, spec);
  for (const auto& [name, v] : reqs) {
    const int64_t value =
        name == "cpu" ? quantity_milli_value(v) : quantity_value(v);
    pod.data.requests.emplace_back(name, value);
    if (name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
        is_scalar_resource(name)) {
      pod.node_requests[name] = value;
    }
  }
  if (reqs.find("pods") == reqs.end()) {
    pod.data.requests.emplace_back("pods", 1);  // one of the node's slots
  }
  read_pod_data(r, obj, spec, pod);
  return pod;
}

// Calls `each(reader, object)` for every object of the expected kind in
// every document, reporting documents and items of another kind.
template <class Each>
void walk(const std::string& yaml, const std::filesystem::path& file,
          const std::string& kind, const std::string& kubectl,
          std::vector<std::string>& problems, Each each) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(yaml);
  } catch (const YAML::Exception& e) {
    problems.push_back(file.string() + ": not valid YAML at line " +
                       std::to_string(e.mark.line + 1) + ", column " +
                       std::to_string(e.mark.column + 1) + ": " + e.msg +
                       "; make the dump with `" + kubectl + "`");
    return;
  }
  for (size_t d = 0; d < docs.size(); ++d) {
    const YAML::Node& doc = docs[d];
    Where where{file.string(), d + 1, std::nullopt, kind, ""};
    if (doc.IsNull()) continue;
    // Before the reader walks it: a recursive anchor or an alias bomb.
    if (auto bad = host::yaml_bounds_problem(
            doc, host::yaml_bounds_for(yaml.size()))) {
      problems.push_back(file.string() + ":" + std::to_string(bad->line) +
                         ": " + bad->message);
      continue;
    }
    Reader r(problems, where);
    if (!doc.IsMap()) {
      r.problem(doc, "(document)",
                "is a " + Reader::kind_of(doc) + ", not a Kubernetes object; " +
                    "make the dump with `" + kubectl + "`");
      continue;
    }
    const std::string doc_kind =
        r.string_at(r.child(doc, "(document)", "kind"), "kind");
    const bool is_list = doc_kind == "List" || doc_kind == kind + "List";
    if (!is_list && doc_kind != kind) {
      r.problem(doc.IsMap() && doc["kind"] ? doc["kind"] : doc, "kind",
                (doc_kind.empty() ? std::string("is missing")
                                  : "is \"" + doc_kind + "\"") +
                    "; this file must hold " + kind + " objects or a List " +
                    "of them, as `" + kubectl + "` writes");
      continue;
    }
    if (!is_list) {
      each(r, doc);
      continue;
    }
    const YAML::Node items =
        r.sequence_at(r.child(doc, "(document)", "items"), "items");
    size_t i = 0;
    for (const auto& item : items) {
      Where w = where;
      w.item = i++;
      Reader ir(problems, w);
      if (!item.IsMap()) {
        ir.problem(item, "(item)",
                   "is a " + Reader::kind_of(item) + ", not a " + kind);
        continue;
      }
      const std::string item_kind =
          ir.string_at(ir.child(item, "(item)", "kind"), "kind");
      if (!item_kind.empty() && item_kind != kind) {
        ir.problem(item["kind"], "kind",
                   "is \"" + item_kind + "\"; this file must hold " + kind +
                       " objects, as `" + kubectl + "` writes");
        continue;
      }
      each(ir, item);
    }
  }
}

std::string read_file(const std::filesystem::path& file, const char* what,
                      const std::string& kubectl) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw DumpError({file.string() + ": cannot read the " + what +
                     " dump; check the path, or make it with `" + kubectl +
                     " > " + file.string() + "`"});
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kNodesCommand = "kubectl get nodes -o yaml";
const std::string kPodsCommand = "kubectl get pods -A -o yaml";

void throw_if(std::vector<std::string>& problems) {
  if (!problems.empty()) throw DumpError(std::move(problems));
}

}  // namespace

DumpError::DumpError(std::vector<std::string> problems)
    : std::runtime_error(join(problems)), problems_(std::move(problems)) {}

std::optional<nano_t> parse_quantity(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  nano_t mantissa = 0;
  int digits = 0, fraction = 0;
  bool dot = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (mantissa > kLimit / 10) return std::nullopt;
    mantissa = mantissa * 10 + (c - '0');
    ++digits;
    if (dot) ++fraction;
  }
  if (digits == 0) return std::nullopt;
  const std::string_view suffix = text.substr(i);
  int exponent10 = 0;
  int binary = 0;  // powers of 1024
  static const std::unordered_map<std::string_view, int> kDecimal = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static const std::unordered_map<std::string_view, int> kBinary = {
      {"Ki", 1}, {"Mi", 2}, {"Gi", 3}, {"Ti", 4}, {"Pi", 5}, {"Ei", 6}};
  if (auto d = kDecimal.find(suffix); d != kDecimal.end()) {
    exponent10 = d->second;
  } else if (auto b = kBinary.find(suffix); b != kBinary.end()) {
    binary = b->second;
  } else if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    int e = 0;
    std::string_view digits_part = suffix.substr(1);
    const bool neg = !digits_part.empty() && digits_part[0] == '-';
    if (!digits_part.empty() &&
        (digits_part[0] == '-' || digits_part[0] == '+'))
      digits_part.remove_prefix(1);
    const auto [end, ec] = std::from_chars(
        digits_part.data(), digits_part.data() + digits_part.size(), e);
    if (digits_part.empty() || ec != std::errc() ||
        end != digits_part.data() + digits_part.size() || e > 40) {
      return std::nullopt;
    }
    exponent10 = neg ? -e : e;
  } else {
    return std::nullopt;
  }
  nano_t value = mantissa;
  for (int k = 0; k < binary; ++k) {
    if (value > kLimit / 1024) return std::nullopt;
    value *= 1024;
  }
  int scale = 9 + exponent10 - fraction;  // to billionths
  for (; scale > 0; --scale) {
    if (value > kLimit / 10) return std::nullopt;
    value *= 10;
  }
  if (scale < 0) {
    nano_t divisor = 1;
    for (; scale < 0 && divisor <= kLimit / 10; ++scale) divisor *= 10;
    value = ceil_div(value, divisor);  // finer than 1n: round up
  }
  return negative ? -value : value;
}

int64_t quantity_value(nano_t nano) { return clamp64(ceil_div(nano, kNano)); }
int64_t quantity_milli_value(nano_t nano) {
  return clamp64(ceil_div(nano, kNano / 1000));
}

bool is_scalar_resource(std::string_view name) {
  if (name.rfind("hugepages-", 0) == 0) return true;
  if (name.rfind("attachable-volumes-", 0) == 0) return true;
  if (name.find("kubernetes.io/") != std::string_view::npos) return true;
  // Extended resources: a domain-qualified name outside kubernetes.io,
  // except quota's requests.* names.
  return name.find('/') != std::string_view::npos &&
         name.rfind("requests.", 0) != 0;
}

std::vector<KubeNode> parse_node_dump(const std::string& yaml,
                                      const std::filesystem::path& file) {
  std::vector<std::string> problems;
  std::vector<KubeNode> nodes;
  std::unordered_map<std::string, std::string> seen;
  walk(yaml, file, "Node", kNodesCommand, problems,
       [&](Reader& r, const YAML::Node& obj) {
         KubeNode n = read_node(r, obj);
         if (n.data.name.empty()) return;
         auto [it, added] = seen.emplace(n.data.name, n.where);
         if (!added) {
           problems.push_back(n.where + ": the node name \"" + n.data.name +
                              "\" appears twice (first at " + it->second +
                              "); a cluster has one node per name");
           return;
         }
         nodes.push_back(std::move(n));
       });
  throw_if(problems);
  return nodes;
}

std::vector<KubePod> parse_pod_dump(const std::string& yaml,
                                    const std::filesystem::path& file) {
  std::vector<std::string> problems;
  std::vector<KubePod> pods;
  std::unordered_map<std::string, std::string> seen;
  walk(yaml, file, "Pod", kPodsCommand, problems,
       [&](Reader& r, const YAML::Node& obj) {
         KubePod p = read_pod(r, obj);
         if (p.data.name.empty()) return;
         auto [it, added] = seen.emplace(p.key(), p.where);
         if (!added) {
           problems.push_back(p.where + ": the pod \"" + p.key() +
                              "\" appears twice (first at " + it->second +
                              "); a namespace has one pod per name");
           return;
         }
         p.order = pods.size();
         pods.push_back(std::move(p));
       });
  throw_if(problems);
  return pods;
}

std::vector<KubeNode> read_node_dump(const std::filesystem::path& file) {
  return parse_node_dump(read_file(file, "node", kNodesCommand), file);
}

std::vector<KubePod> read_pod_dump(const std::filesystem::path& file) {
  return parse_pod_dump(read_file(file, "pod", kPodsCommand), file);
}

}  // namespace schedplug::tools
