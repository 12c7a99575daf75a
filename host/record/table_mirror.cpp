#include "host/record/table_mirror.hpp"

namespace schedplug::host {

void TableMirror::apply(v1::NodeTableDelta& delta) {
  if (delta.full()) {
    slots_.clear();
    size_ = 0;
  } else {
    for (uint32_t slot : delta.removed()) {
      if (slot < slots_.size() && !slots_[slot].name().empty()) {
        slots_[slot].Clear();
        --size_;
      }
    }
  }
  for (v1::Node& node : *delta.mutable_upserts()) {
    const uint32_t slot = node.index();
    if (slot >= slots_.size()) slots_.resize(slot + 1);
    if (slots_[slot].name().empty()) ++size_;
    slots_[slot].Swap(&node);
  }
  if (delta.full() || delta.new_version() > version_)
    version_ = delta.new_version();
}

v1::NodeTableDelta TableMirror::checkpoint() const {
  v1::NodeTableDelta out;
  out.set_full(true);
  out.set_new_version(version_);
  out.mutable_upserts()->Reserve(static_cast<int>(size_));
  for (const v1::Node& node : slots_) {
    if (!node.name().empty()) *out.add_upserts() = node;
  }
  return out;
}

const std::string& TableMirror::name(uint32_t slot) const {
  static const std::string kNone;
  return slot < slots_.size() ? slots_[slot].name() : kNone;
}

}  // namespace schedplug::host
