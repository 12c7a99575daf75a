// A session's node table as the shim sent it (schedplug.v1.Node messages
// by slot), kept by the recorder to write checkpoints and by replay to
// name nodes. Follows the deltas the host applied; does not validate them
// (the host's NodeTable already did).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

class TableMirror {
 public:
  // Applies a delta the host accepted. Takes the upserts out of `delta`.
  void apply(v1::NodeTableDelta& delta);
  // The whole table as one delta with `full` set, at version().
  v1::NodeTableDelta checkpoint() const;
  uint64_t version() const { return version_; }
  // The node name in `slot` ("" when empty).
  const std::string& name(uint32_t slot) const;
  size_t size() const { return size_; }

 private:
  std::vector<v1::Node> slots_;  // index: slot; an empty name: empty slot
  uint64_t version_ = 0;
  size_t size_ = 0;
};

}  // namespace schedplug::host
