// The host's mirror of one scheduler's node snapshot.
//
// Nodes live in dense slots chosen by the shim (NodeTableDelta in the
// proto). A delta is validated completely before anything changes, so a
// refused delta leaves the table exactly as it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/table/compact_node.hpp"
#include "host/table/node_names.hpp"
#include "schedplug/plugin.h"

namespace schedplug::host {

struct NodeUpsert {
  uint32_t slot = 0;
  int64_t generation = 0;  // kube-scheduler's NodeInfo generation
  std::shared_ptr<const CompactNode> node;  // never null
};

// A change to the table; mirrors schedplug.v1.NodeTableDelta.
struct TableDelta {
  uint64_t base_version = 0;
  uint64_t new_version = 0;
  bool full = false;  // forget every node first; base_version is ignored
  std::vector<NodeUpsert> upserts;
  std::vector<uint32_t> removed;  // ignored when full

  bool empty() const { return !full && upserts.empty() && removed.empty(); }
};

// Why a delta was refused. The table is unchanged.
class DeltaError : public std::runtime_error {
 public:
  enum class Kind {
    kVersionMismatch,  // resync: the shim must send the full table
    kInvalid,          // the delta itself is malformed
    kTooLarge,         // valid, but the table would pass apply's max_bytes
  };
  DeltaError(Kind kind, const std::string& message, size_t bytes_after = 0)
      : std::runtime_error(message), kind_(kind), bytes_after_(bytes_after) {}
  Kind kind() const { return kind_; }
  // kTooLarge: the table's bytes() had the delta been applied.
  size_t bytes_after() const { return bytes_after_; }

 private:
  Kind kind_;
  size_t bytes_after_;
};

class NodeTable {
 public:
  // Slots are dense small integers; a larger index is refused rather than
  // allocating a huge slot array.
  static constexpr uint32_t kMaxSlots = 1u << 20;
  // A delta's indices must also be below the table's size plus its
  // upserts plus this headroom, so one small delta cannot make the host
  // allocate a slot array far larger than the cluster (docs/protocol.md).
  static constexpr uint32_t kSlotHeadroom = 1024;

  // Applies `delta` atomically. Throws DeltaError; on error nothing changes.
  // A valid delta that grows the table past `max_bytes` (bytes()) is
  // refused with Kind::kTooLarge; one that does not grow it never is.
  void apply(const TableDelta& delta, size_t max_bytes = SIZE_MAX);

  // The memory the table holds, estimated from what it stores: every
  // node's block (CompactNode::block_bytes) plus kNodeOverhead, plus
  // kSlotBytes per slot. An estimate of the heap in use, not a
  // measurement (malloc's own overhead and free lists are not in it).
  size_t bytes() const { return bytes_; }
  // Per node besides its block: the CompactNode, its shared_ptr control
  // block, and the name index's hash node and bucket.
  static constexpr size_t kNodeOverhead = sizeof(CompactNode) + 32 + 48;
  static constexpr size_t kSlotBytes = 2 * sizeof(void*) + 16;
  static size_t node_bytes(const CompactNode& node) {
    return node.block_bytes() + kNodeOverhead;
  }

  uint64_t version() const { return version_; }
  // Number of nodes in the table.
  size_t size() const { return size_; }
  // One past the highest slot ever used (the length of views()).
  size_t slot_count() const { return views_.size(); }
  // The node view of every slot; nullptr for an empty slot.
  std::span<const schedplug_node* const> views() const { return views_; }
  // The node in `slot`, or nullptr when the slot is empty or out of range.
  const CompactNode* at(uint32_t slot) const;
  // The same, shared: it stays valid after the table changes (a shadow
  // run after the call reads it).
  std::shared_ptr<const CompactNode> shared(uint32_t slot) const;
  // The NodeInfo generation stored with `slot` (0 when empty).
  int64_t generation(uint32_t slot) const;
  // The slot holding node `name`.
  std::optional<uint32_t> find(std::string_view name) const;
  // Every slot's node name, indexed by slot ("" for an empty one), as of
  // now. Built on first use after a delta adds or removes a node, then
  // shared: a delta that only updates nodes keeps it, and what a caller
  // holds never changes.
  std::shared_ptr<const NodeNames> names() const;

 private:
  struct Slot {
    std::shared_ptr<const CompactNode> node;
    int64_t generation = 0;
  };
  void validate(const TableDelta& delta) const;
  // bytes() after `delta` (validated, not empty).
  size_t bytes_after(const TableDelta& delta) const;
  void clear();
  // A slot gains or loses its node: names() builds anew.
  void forget_names();
  void remove_slot(uint32_t slot);
  void put(const NodeUpsert& upsert);

  std::vector<Slot> slots_;
  std::vector<const schedplug_node*> views_;  // parallel to slots_
  // Keys view the names inside the nodes held in slots_.
  std::unordered_map<std::string_view, uint32_t> by_name_;
  uint64_t version_ = 0;
  // names(): reset when a slot gains or loses its node.
  mutable std::mutex names_mutex_;
  mutable std::shared_ptr<const NodeNames> names_;
  size_t size_ = 0;
  size_t node_bytes_ = 0;  // sum of node_bytes() of the stored nodes
  size_t bytes_ = 0;       // node_bytes_ + kSlotBytes per slot
};

}  // namespace schedplug::host
