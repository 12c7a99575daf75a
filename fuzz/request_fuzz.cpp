// Fuzz target "request": the request decoder (host/convert/convert.*).
//
// The input is a serialized schedplug.v1.PreFilterRequest, the message
// that carries both a pod and a node-table delta (Filter and PreScore carry
// the same Pod message). Whatever protobuf accepts must convert without
// crashing into pod and node models whose views keep plugin.h's promises: lists
// sorted by key in byte order with unique keys, each key holding the last value
// the request gave it, and compact node copies equal to their models.
// The converted delta is then applied to an empty table and to one that
// already holds nodes.
#include <map>
#include <string>

#include <google/protobuf/stubs/logging.h>
#include "fuzz/fuzz_checks.hpp"
#include "host/convert/convert.hpp"
#include "host/model/models.hpp"
#include "host/table/node_table.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace {

using schedplug::fuzz::sv;
namespace host = schedplug::host;
namespace v1 = schedplug::v1;

// Every key of `input` is in `list` with the value it was given last.
template <typename Repeated>
void check_last_wins(const Repeated& input, const schedplug_kv_list& list,
                     const char* what) {
  schedplug::fuzz::check_kv_list(list, what);
  std::map<std::string, std::string> want;
  for (const v1::KeyValue& kv : input) want[kv.key()] = kv.value();
  SCHEDPLUG_FUZZ_CHECK(want.size() == list.count,
                       std::string(what) + ": wrong number of entries");
  for (size_t i = 0; i < list.count; ++i) {
    auto it = want.find(std::string(sv(list.items[i].key)));
    SCHEDPLUG_FUZZ_CHECK(it != want.end(), std::string(what) + ": extra key");
    SCHEDPLUG_FUZZ_CHECK(it->second == sv(list.items[i].value),
                         std::string(what) + ": not the last value");
    // What plugins call to look a key up.
    const schedplug_kv* found =
        schedplug_kv_find(list, std::string(sv(list.items[i].key)).c_str());
    if (it->first.find('\0') == std::string::npos) {
      SCHEDPLUG_FUZZ_CHECK(found == &list.items[i],
                           std::string(what) + ": schedplug_kv_find");
    }
  }
}

template <typename Repeated>
void check_resources_last_wins(const Repeated& input,
                               const schedplug_resource_list& list,
                               const char* what) {
  schedplug::fuzz::check_resources(list, what);
  std::map<std::string, int64_t> want;
  for (const v1::Resource& r : input) want[r.name()] = r.value();
  SCHEDPLUG_FUZZ_CHECK(want.size() == list.count,
                       std::string(what) + ": wrong number of entries");
  for (size_t i = 0; i < list.count; ++i) {
    auto it = want.find(std::string(sv(list.items[i].name)));
    SCHEDPLUG_FUZZ_CHECK(it != want.end() && it->second == list.items[i].value,
                         std::string(what) + ": not the last value");
  }
}

void check_pod(const v1::Pod& pod) {
  const host::PodModel model(host::pod_from_proto(pod));
  const schedplug_pod& v = model.view();
  SCHEDPLUG_FUZZ_CHECK(v.struct_size == sizeof(schedplug_pod), "struct_size");
  SCHEDPLUG_FUZZ_CHECK(sv(v.namespace_name) == pod.namespace_() &&
                           sv(v.name) == pod.name() && sv(v.uid) == pod.uid(),
                       "pod identity");
  SCHEDPLUG_FUZZ_CHECK(v.priority == pod.priority(), "priority");
  check_last_wins(pod.labels(), v.labels, "pod labels");
  check_last_wins(pod.annotations(), v.annotations, "pod annotations");
  check_last_wins(pod.node_selector(), v.node_selector, "pod node selector");
  check_resources_last_wins(pod.requests(), v.requests, "pod requests");
  SCHEDPLUG_FUZZ_CHECK(
      v.toleration_count == static_cast<size_t>(pod.tolerations_size()),
      "toleration count");
  for (size_t i = 0; i < v.toleration_count; ++i) {
    const v1::Toleration& t = pod.tolerations(static_cast<int>(i));
    const schedplug_toleration& got = v.tolerations[i];
    SCHEDPLUG_FUZZ_CHECK(
        sv(got.key) == t.key() && sv(got.op) == t.operator_() &&
            sv(got.value) == t.value() && sv(got.effect) == t.effect(),
        "toleration");
    SCHEDPLUG_FUZZ_CHECK(
        (got.has_toleration_seconds != 0) == t.has_toleration_seconds() &&
            (!t.has_toleration_seconds() ||
             got.toleration_seconds == t.toleration_seconds()),
        "toleration seconds");
  }
}

void check_node(const v1::Node& node) {
  const host::NodeModel model(host::node_from_proto(node));
  const schedplug_node& v = model.view();
  SCHEDPLUG_FUZZ_CHECK(sv(v.name) == node.name(), "node name");
  SCHEDPLUG_FUZZ_CHECK(v.pod_count == node.pod_count(), "pod_count");
  check_last_wins(node.labels(), v.labels, "node labels");
  check_last_wins(node.annotations(), v.annotations, "node annotations");
  check_resources_last_wins(node.allocatable(), v.allocatable,
                            "node allocatable");
  check_resources_last_wins(node.requested(), v.requested, "node requested");
  SCHEDPLUG_FUZZ_CHECK(v.taint_count == static_cast<size_t>(node.taints_size()),
                       "taint count");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // protobuf logs every string that is not UTF-8; most inputs have one.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  v1::PreFilterRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  host::TableDelta delta;
  try {
    check_pod(request.pod());
    for (const v1::Node& node : request.delta().upserts()) check_node(node);
    delta = host::delta_from_proto(request.delta());
  } catch (const host::FieldLimitError& e) {
    // A field over the host's bounds: refused with a message naming it.
    SCHEDPLUG_FUZZ_CHECK(
        std::string(e.what()).find("over the limit of") != std::string::npos,
        "a FieldLimitError without its limit");
    return 0;
  }
  SCHEDPLUG_FUZZ_CHECK(delta.upserts.size() ==
                           static_cast<size_t>(request.delta().upserts_size()),
                       "upsert count");
  for (size_t i = 0; i < delta.upserts.size(); ++i) {
    const v1::Node& node = request.delta().upserts(static_cast<int>(i));
    const host::NodeModel model(host::node_from_proto(node));
    SCHEDPLUG_FUZZ_CHECK(delta.upserts[i].slot == node.index() &&
                             delta.upserts[i].generation == node.generation(),
                         "upsert slot/generation");
    schedplug::fuzz::check_same_node(model.view(),
                                     delta.upserts[i].node->view());
  }

  // Into an empty table, and into one holding nodes the delta may touch.
  host::NodeTable empty;
  host::NodeTable filled;
  {
    host::TableDelta seed;
    seed.full = true;
    seed.new_version = request.delta().base_version();
    for (uint32_t slot = 0; slot < 4; ++slot) {
      host::NodeData d;
      d.name = "node-" + std::to_string(slot);
      const host::NodeModel r(std::move(d));
      seed.upserts.push_back({slot, 1, host::CompactNode::copy_of(r.view())});
    }
    filled.apply(seed);
  }
  for (host::NodeTable* table : {&empty, &filled}) {
    const uint64_t before = table->version();
    const size_t size_before = table->size();
    try {
      table->apply(delta);
    } catch (const host::DeltaError&) {
      SCHEDPLUG_FUZZ_CHECK(
          table->version() == before && table->size() == size_before,
          "a refused delta changed the table");
      continue;
    }
    // Only the slots the delta touched: a valid delta may use an index near
    // NodeTable::kMaxSlots, and walking a million slots per input would
    // make the target crawl.
    for (const host::NodeUpsert& u : delta.upserts) {
      const host::CompactNode* n = table->at(u.slot);
      SCHEDPLUG_FUZZ_CHECK(n != nullptr && n->name() == u.node->name(),
                           "an applied upsert is not in its slot");
      schedplug::fuzz::check_node_view(n->view());
      SCHEDPLUG_FUZZ_CHECK(table->find(n->name()) == u.slot, "find()");
      SCHEDPLUG_FUZZ_CHECK(table->generation(u.slot) == u.generation,
                           "generation");
    }
  }
  return 0;
}
