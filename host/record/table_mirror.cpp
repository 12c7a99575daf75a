#include "host/record/table_mirror.hpp"

#include <unordered_set>

#include <fmt/format.h>

#include "host/table/node_table.hpp"

namespace schedplug::host {
namespace {

bool refuse(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return false;
}

}  // namespace

bool TableMirror::apply(v1::NodeTableDelta& delta, std::string* error) {
  // Everything is checked before anything changes.
  std::unordered_set<uint32_t> removed;
  if (!delta.full()) {
    for (uint32_t slot : delta.removed()) {
      if (name(slot).empty()) {
        return refuse(error, fmt::format("removed lists node index {}, which "
                                         "holds no node",
                                         slot));
      }
      if (!removed.insert(slot).second) {
        return refuse(error,
                      fmt::format("removed lists node index {} twice", slot));
      }
    }
  }
  // As NodeTable::validate: one delta grows the table by its upserts plus
  // a small headroom at most, so a recorded index cannot size the mirror.
  const uint64_t slot_limit = std::min<uint64_t>(
      NodeTable::kMaxSlots, (delta.full() ? 0 : slots_.size()) +
                                static_cast<uint64_t>(delta.upserts_size()) +
                                NodeTable::kSlotHeadroom);
  std::unordered_set<uint32_t> upserted;
  for (const v1::Node& node : delta.upserts()) {
    if (node.index() >= slot_limit) {
      return refuse(
          error,
          fmt::format("node \"{}\" at index {} is beyond the table: indices "
                      "stay below {} and below the table's size plus the "
                      "delta's upserts plus {}",
                      node.name(), node.index(), NodeTable::kMaxSlots,
                      NodeTable::kSlotHeadroom));
    }
    if (node.name().empty()) {
      return refuse(
          error, fmt::format("the node at index {} has no name", node.index()));
    }
    if (!upserted.insert(node.index()).second) {
      return refuse(error,
                    fmt::format("index {} appears twice among the upserts",
                                node.index()));
    }
  }

  if (delta.full()) {
    slots_.clear();
    size_ = 0;
  } else {
    for (uint32_t slot : delta.removed()) {
      slots_[slot].reset();
      --size_;
    }
  }
  for (v1::Node& node : *delta.mutable_upserts()) {
    const size_t slot = node.index();  // below slot_limit
    if (slot >= slots_.size()) slots_.resize(slot + 1);
    if (slots_[slot] == nullptr) {
      slots_[slot] = std::make_unique<v1::Node>();
      ++size_;
    }
    slots_[slot]->Swap(&node);
  }
  delta.clear_upserts();
  if (delta.full() || delta.new_version() > version_)
    version_ = delta.new_version();
  return true;
}

v1::NodeTableDelta TableMirror::checkpoint() const {
  v1::NodeTableDelta out;
  out.set_full(true);
  out.set_new_version(version_);
  out.mutable_upserts()->Reserve(static_cast<int>(size_));
  for (const auto& node : slots_) {
    if (node != nullptr) *out.add_upserts() = *node;
  }
  return out;
}

const std::string& TableMirror::name(uint32_t slot) const {
  static const std::string kNone;
  return slot < slots_.size() && slots_[slot] != nullptr ? slots_[slot]->name()
                                                         : kNone;
}

}  // namespace schedplug::host
