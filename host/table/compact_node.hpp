// A node of the node table, stored compactly: its view and every array and
// string the view points to live in one allocation, except the strings
// nodes share (label keys and values, taints, resource names...), which
// come from the host's StringPool.
//
// The table holds thousands of nodes that every PreFilter walks; one block
// per node (instead of one heap string per label key and value) halves the
// memory and keeps a node's labels in a few neighbouring cache lines.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "schedplug/plugin.h"

namespace schedplug::host {

class CompactNode {
 public:
  // Copies `view` (already sorted as plugin.h requires, e.g. a
  // NodeModel's view) into one block.
  static std::shared_ptr<const CompactNode> copy_of(const schedplug_node& view);

  ~CompactNode();
  CompactNode(const CompactNode&) = delete;
  CompactNode& operator=(const CompactNode&) = delete;

  const schedplug_node& view() const { return view_; }
  std::string_view name() const { return {view_.name.data, view_.name.len}; }
  // Bytes of the block (for memory figures; pooled strings not included).
  size_t block_bytes() const { return block_bytes_; }

 private:
  CompactNode() = default;
  schedplug_node view_{};
  std::unique_ptr<std::byte[]> block_;
  size_t block_bytes_ = 0;
};

}  // namespace schedplug::host
