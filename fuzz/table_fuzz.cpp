// Fuzz target "table": the node-table delta applier (host/table).
//
// The input is a program of deltas (decoded by Bytes, so every input is
// one). Each delta goes to the real NodeTable and to a plain reference
// model written from the rules in node_table.hpp and the proto comments;
// after every delta both must agree on acceptance, the error kind, the
// version and every slot (name, generation, find(), views()). Nodes are
// built the way the service builds them (NodeModel, then CompactNode), and
// each compact copy must equal its NodeModel's view.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "fuzz/fuzz_checks.hpp"
#include "host/model/models.hpp"
#include "host/table/compact_node.hpp"
#include "host/table/node_table.hpp"

namespace {

using schedplug::fuzz::Bytes;
using schedplug::host::CompactNode;
using schedplug::host::DeltaError;
using schedplug::host::NodeData;
using schedplug::host::NodeModel;
using schedplug::host::NodeTable;
using schedplug::host::TableDelta;

struct ModelSlot {
  std::string name;
  int64_t generation;
};

struct Model {
  uint64_t version = 0;
  std::map<uint32_t, ModelSlot> slots;
};

enum class Outcome { kApplied, kMismatch, kInvalid };

// The rules, restated independently of NodeTable::validate.
Outcome model_apply(Model& m, const TableDelta& d) {
  if (!d.full && d.base_version != m.version) return Outcome::kMismatch;
  if (d.empty()) {
    if (d.new_version != 0 && d.new_version < d.base_version)
      return Outcome::kInvalid;
    if (d.new_version != 0) m.version = d.new_version;
    return Outcome::kApplied;
  }
  if (!d.full && d.new_version <= d.base_version) return Outcome::kInvalid;
  std::map<uint32_t, ModelSlot> next;
  if (!d.full) {
    next = m.slots;
    std::set<uint32_t> removed;
    for (uint32_t s : d.removed) {
      if (!m.slots.contains(s) || !removed.insert(s).second)
        return Outcome::kInvalid;
      next.erase(s);
    }
  }
  std::set<uint32_t> seen_slots;
  std::set<std::string> seen_names;
  // Indices stay below the slots in use (one past the highest occupied
  // one; none for a full delta) plus the upserts plus the headroom.
  const size_t in_use =
      d.full || m.slots.empty() ? 0 : m.slots.rbegin()->first + size_t{1};
  const size_t slot_limit =
      in_use + d.upserts.size() + NodeTable::kSlotHeadroom;
  for (const auto& u : d.upserts) {
    const std::string name(u.node->name());
    if (name.empty() || u.slot >= NodeTable::kMaxSlots ||
        u.slot >= slot_limit || !seen_slots.insert(u.slot).second ||
        !seen_names.insert(name).second)
      return Outcome::kInvalid;
    if (d.full) continue;
    auto at = next.find(u.slot);
    if (at != next.end() && at->second.name != name) return Outcome::kInvalid;
    for (const auto& [slot, s] : next) {
      if (s.name == name && slot != u.slot) return Outcome::kInvalid;
    }
  }
  for (const auto& u : d.upserts)
    next[u.slot] = {std::string(u.node->name()), u.generation};
  m.slots = std::move(next);
  m.version = d.new_version;
  return Outcome::kApplied;
}

uint32_t slot_of(Bytes& in) {
  const uint8_t b = in.u8();
  // Mostly a few small slots so names and slots collide often; sometimes a
  // sparse one (up to a few thousand) or one at or past the limit (refused;
  // kMaxSlots - 1 itself is left out: a million-slot table per input would
  // make the target a hundred times slower).
  if (b < 240) return b % 24;
  if (b < 254) return static_cast<uint32_t>(b - 240) * 256u + in.u8();
  if (b == 254) return NodeTable::kMaxSlots + (in.u8() % 2);
  return in.u32() | NodeTable::kMaxSlots;
}

std::shared_ptr<const CompactNode> node_of(Bytes& in) {
  NodeData d;
  const uint8_t pick = in.u8();
  d.name = pick < 250 ? "n" + std::to_string(pick % 20) : in.str(8);
  const int labels = in.u8() % 4;
  for (int i = 0; i < labels; ++i) d.labels.emplace_back(in.str(6), in.str(6));
  if (in.u8() % 4 == 0) d.annotations.emplace_back(in.str(6), in.str(6));
  if (in.u8() % 4 == 0) d.taints.push_back({in.str(6), in.str(6), in.str(6)});
  const int resources = in.u8() % 3;
  for (int i = 0; i < resources; ++i) {
    d.allocatable.emplace_back(in.str(4), static_cast<int64_t>(in.u64()));
    d.requested.emplace_back(in.str(4), static_cast<int64_t>(in.u64()));
  }
  d.pod_count = in.u8();
  const NodeModel built(std::move(d));
  auto compact = CompactNode::copy_of(built.view());
  schedplug::fuzz::check_same_node(built.view(), compact->view());
  return compact;
}

void check_same(const NodeTable& t, const Model& m) {
  SCHEDPLUG_FUZZ_CHECK(t.version() == m.version, "version differs");
  SCHEDPLUG_FUZZ_CHECK(t.size() == m.slots.size(), "size differs");
  const size_t want_count = m.slots.empty() ? 0 : m.slots.rbegin()->first + 1;
  SCHEDPLUG_FUZZ_CHECK(t.slot_count() == want_count, "slot_count differs");
  SCHEDPLUG_FUZZ_CHECK(t.views().size() == t.slot_count(), "views size");
  size_t occupied = 0;
  for (uint32_t slot = 0; slot < t.slot_count(); ++slot) {
    const CompactNode* n = t.at(slot);
    if (n == nullptr) {
      SCHEDPLUG_FUZZ_CHECK(t.views()[slot] == nullptr, "view of empty slot");
      SCHEDPLUG_FUZZ_CHECK(t.generation(slot) == 0, "generation of empty");
      continue;
    }
    ++occupied;
    SCHEDPLUG_FUZZ_CHECK(t.views()[slot] == &n->view(), "view pointer");
    // Sparse slots: only look the model up for occupied ones.
    auto it = m.slots.find(slot);
    SCHEDPLUG_FUZZ_CHECK(it != m.slots.end(), "table has an extra node");
    SCHEDPLUG_FUZZ_CHECK(n->name() == it->second.name, "name differs");
    SCHEDPLUG_FUZZ_CHECK(t.generation(slot) == it->second.generation,
                         "generation differs");
    SCHEDPLUG_FUZZ_CHECK(t.find(n->name()) == slot, "find() differs");
    schedplug::fuzz::check_node_view(n->view());
  }
  SCHEDPLUG_FUZZ_CHECK(occupied == m.slots.size(), "occupied count");
  SCHEDPLUG_FUZZ_CHECK(t.at(static_cast<uint32_t>(t.slot_count())) == nullptr,
                       "at() past the end");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  NodeTable table;
  Model model;
  for (int step = 0; step < 32 && !in.empty(); ++step) {
    TableDelta d;
    const uint8_t flags = in.u8();
    d.full = (flags & 1) != 0;
    d.base_version = (flags & 2) != 0 ? in.u64() : table.version();
    d.new_version =
        (flags & 4) != 0 ? in.u64() : d.base_version + 1 + (flags >> 6);
    if ((flags & 8) != 0) d.new_version = 0;
    const int upserts = in.u8() % 6;
    for (int i = 0; i < upserts; ++i) {
      const uint32_t slot = slot_of(in);
      const int64_t generation = in.u8();
      d.upserts.push_back({slot, generation, node_of(in)});
    }
    const int removed = (flags & 16) != 0 ? in.u8() % 5 : 0;
    for (int i = 0; i < removed; ++i) d.removed.push_back(slot_of(in));

    const Outcome want = model_apply(model, d);
    Outcome got = Outcome::kApplied;
    try {
      table.apply(d);
    } catch (const DeltaError& e) {
      got = e.kind() == DeltaError::Kind::kVersionMismatch ? Outcome::kMismatch
                                                           : Outcome::kInvalid;
      SCHEDPLUG_FUZZ_CHECK(std::string_view(e.what()).size() > 20,
                           "a delta error without a message");
    }
    SCHEDPLUG_FUZZ_CHECK(got == want,
                         "NodeTable::apply and the model disagree "
                         "on step " +
                             std::to_string(step));
    check_same(table, model);
  }
  return 0;
}
