// A session's node table as the shim sent it (schedplug.v1.Node messages
// by slot), kept by the recorder to write checkpoints and by replay to
// name nodes. Follows the deltas the host applied. A recording is input
// like any other, so the mirror checks every index it is given against the
// host's own rules (NodeTable): a delta that breaks them is refused whole.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

class TableMirror {
 public:
  // Applies a delta the host accepted; takes the upserts out of `delta`.
  // Refuses one whose indices the host's NodeTable would refuse (an index
  // at or past NodeTable::kMaxSlots, or past the table's size plus the
  // delta's upserts plus NodeTable::kSlotHeadroom; an index listed twice;
  // a removed index that holds no node) or a node without a name: returns
  // false, leaves the mirror and `delta` as they were and, when `error` is
  // not null, says why there.
  bool apply(v1::NodeTableDelta& delta, std::string* error = nullptr);
  // The whole table as one delta with `full` set, at version().
  v1::NodeTableDelta checkpoint() const;
  uint64_t version() const { return version_; }
  // The node name in `slot` ("" when empty or out of range).
  const std::string& name(uint32_t slot) const;
  // Nodes held, and one past the highest slot ever used.
  size_t size() const { return size_; }
  size_t slot_count() const { return slots_.size(); }

 private:
  // Index: slot; null for an empty slot. A pointer per slot, so that a table
  // with far-apart indices costs 8 bytes per empty slot, not a Node.
  std::vector<std::unique_ptr<v1::Node>> slots_;
  uint64_t version_ = 0;
  size_t size_ = 0;
};

}  // namespace schedplug::host
