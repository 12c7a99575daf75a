#include "host/table/node_table.hpp"

#include <algorithm>
#include <unordered_set>

namespace schedplug::host {
namespace {

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

[[noreturn]] void invalid(const std::string& message) {
  throw DeltaError(DeltaError::Kind::kInvalid,
                   "invalid node table delta: " + message);
}

}  // namespace

const CompactNode* NodeTable::at(uint32_t slot) const {
  return slot < slots_.size() ? slots_[slot].node.get() : nullptr;
}

std::shared_ptr<const CompactNode> NodeTable::shared(uint32_t slot) const {
  if (slot >= slots_.size()) return nullptr;
  return slots_[slot].node;
}

std::shared_ptr<const NodeNames> NodeTable::names() const {
  std::lock_guard lock(names_mutex_);
  if (names_ == nullptr) {
    auto names = std::make_shared<NodeNames>();
    size_t text = 0;
    for (const Slot& s : slots_) text += s.node ? s.node->name().size() : 0;
    names->reserve(slots_.size(), text);
    for (const Slot& s : slots_) {
      names->add(s.node ? s.node->name() : std::string_view());
    }
    names_ = std::move(names);
  }
  return names_;
}

int64_t NodeTable::generation(uint32_t slot) const {
  return slot < slots_.size() ? slots_[slot].generation : 0;
}

std::optional<uint32_t> NodeTable::find(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

void NodeTable::validate(const TableDelta& delta) const {
  if (!delta.full && delta.base_version != version_) {
    throw DeltaError(
        DeltaError::Kind::kVersionMismatch,
        "node table version mismatch: the delta is based on version " +
            std::to_string(delta.base_version) +
            " but the host's table is at " + std::to_string(version_) +
            "; send the full node table (NodeTableDelta.full = true)");
  }
  if (delta.empty()) {
    if (delta.new_version != 0 && delta.new_version < delta.base_version) {
      invalid("an empty delta moves the version backwards from " +
              std::to_string(delta.base_version) + " to " +
              std::to_string(delta.new_version));
    }
    return;
  }
  if (!delta.full && delta.new_version <= delta.base_version) {
    invalid("new_version " + std::to_string(delta.new_version) +
            " must be greater than base_version " +
            std::to_string(delta.base_version) + " for a non-empty delta");
  }

  std::unordered_set<uint32_t> removed;
  if (!delta.full) {
    removed.reserve(delta.removed.size());
    for (uint32_t slot : delta.removed) {
      if (at(slot) == nullptr) {
        invalid("removed lists node index " + std::to_string(slot) +
                ", which holds no node");
      }
      if (!removed.insert(slot).second) {
        invalid("removed lists node index " + std::to_string(slot) + " twice");
      }
    }
  }

  std::unordered_set<uint32_t> slots;
  std::unordered_set<std::string_view> names;
  slots.reserve(delta.upserts.size());
  names.reserve(delta.upserts.size());
  const size_t slot_limit =
      (delta.full ? 0 : slots_.size()) + delta.upserts.size() + kSlotHeadroom;
  for (const NodeUpsert& u : delta.upserts) {
    if (u.node == nullptr) invalid("an upsert has no node");
    const std::string_view name = u.node->name();
    const std::string where =
        "node " + quoted(name) + " at index " + std::to_string(u.slot);
    if (name.empty()) {
      invalid("the node at index " + std::to_string(u.slot) + " has no name");
    }
    if (u.slot >= kMaxSlots) {
      invalid(where + ": indices must be dense small integers below " +
              std::to_string(kMaxSlots));
    }
    if (u.slot >= slot_limit) {
      invalid(where +
              " is beyond the table: indices must stay below the "
              "table's size (" +
              std::to_string(delta.full ? 0 : slots_.size()) +
              ") plus the delta's upserts (" +
              std::to_string(delta.upserts.size()) + ") plus " +
              std::to_string(kSlotHeadroom) + "; reuse freed indices");
    }
    if (!slots.insert(u.slot).second) {
      invalid("index " + std::to_string(u.slot) +
              " appears twice among the upserts");
    }
    if (!names.insert(name).second) {
      invalid("duplicate node name " + quoted(name) +
              ": it appears twice among the upserts");
    }
    if (delta.full) continue;
    const CompactNode* current = at(u.slot);
    if (current != nullptr && current->name() != name &&
        !removed.contains(u.slot)) {
      invalid(where + ": index " + std::to_string(u.slot) +
              " still holds node " + quoted(current->name()) +
              "; list the index in `removed` to reuse it");
    }
    auto holder = by_name_.find(name);
    if (holder != by_name_.end() && holder->second != u.slot &&
        !removed.contains(holder->second)) {
      invalid("duplicate node name " + quoted(name) + ": index " +
              std::to_string(holder->second) +
              " already holds it and the delta adds it again at index " +
              std::to_string(u.slot) + " without removing index " +
              std::to_string(holder->second));
    }
  }
}

size_t NodeTable::bytes_after(const TableDelta& delta) const {
  size_t nodes = delta.full ? 0 : node_bytes_;
  size_t slots = delta.full ? 0 : slots_.size();
  if (!delta.full) {
    for (uint32_t slot : delta.removed) nodes -= node_bytes(*at(slot));
  }
  std::unordered_set<uint32_t> removed;
  if (!delta.full && !delta.removed.empty()) {
    removed.insert(delta.removed.begin(), delta.removed.end());
  }
  for (const NodeUpsert& u : delta.upserts) {
    nodes += node_bytes(*u.node);
    slots = std::max<size_t>(slots, size_t{u.slot} + 1);
    // An upsert replacing the node in its slot frees the old one.
    if (const CompactNode* old = delta.full ? nullptr : at(u.slot);
        old != nullptr && !removed.contains(u.slot)) {
      nodes -= node_bytes(*old);
    }
  }
  // Trailing empty slots are dropped after apply; counting them anyway
  // only makes the figure a little high.
  return nodes + slots * kSlotBytes;
}

void NodeTable::forget_names() {
  std::lock_guard lock(names_mutex_);
  names_.reset();
}

void NodeTable::clear() {
  forget_names();
  slots_.clear();
  views_.clear();
  by_name_.clear();
  size_ = 0;
  node_bytes_ = 0;
}

void NodeTable::remove_slot(uint32_t slot) {
  Slot& s = slots_[slot];
  forget_names();
  node_bytes_ -= node_bytes(*s.node);
  by_name_.erase(s.node->name());
  s.node.reset();
  s.generation = 0;
  views_[slot] = nullptr;
  --size_;
}

void NodeTable::put(const NodeUpsert& u) {
  if (u.slot >= slots_.size()) {
    slots_.resize(u.slot + 1);
    views_.resize(u.slot + 1, nullptr);
  }
  Slot& s = slots_[u.slot];
  if (s.node != nullptr) {
    // Same name (validated): the old key views the old node's name.
    by_name_.erase(s.node->name());
    node_bytes_ -= node_bytes(*s.node);
  } else {
    forget_names();
    ++size_;
  }
  node_bytes_ += node_bytes(*u.node);
  s.node = u.node;
  s.generation = u.generation;
  views_[u.slot] = &s.node->view();
  by_name_[s.node->name()] = u.slot;
}

void NodeTable::apply(const TableDelta& delta, size_t max_bytes) {
  validate(delta);
  if (delta.empty()) {
    if (delta.new_version != 0) version_ = delta.new_version;
    return;
  }
  if (max_bytes != SIZE_MAX) {
    const size_t after = bytes_after(delta);
    if (after > max_bytes && after > bytes_) {
      throw DeltaError(DeltaError::Kind::kTooLarge,
                       "the node table would hold " + std::to_string(after) +
                           " bytes after this delta (now " +
                           std::to_string(bytes_) + "), over the " +
                           std::to_string(max_bytes) + " it may use",
                       after);
    }
  }
  if (delta.full) {
    clear();
    by_name_.reserve(delta.upserts.size());
  } else {
    for (uint32_t slot : delta.removed) remove_slot(slot);
  }
  for (const NodeUpsert& u : delta.upserts) put(u);
  // Drop trailing empty slots so views() does not keep growing.
  while (!slots_.empty() && slots_.back().node == nullptr) {
    slots_.pop_back();
    views_.pop_back();
  }
  bytes_ = node_bytes_ + slots_.size() * kSlotBytes;
  version_ = delta.new_version;
}

}  // namespace schedplug::host
