// A list of node names by index, kept compact: the text back to back in one
// buffer. A NodeTable hands out one indexed by slot (NodeTable::names()),
// shared and immutable, so whoever keeps nodes beyond the call (explain's
// recent cycles) keeps 4-byte slots and still names them after later deltas
// reuse those slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace schedplug::host {

class NodeNames {
 public:
  // Appends `name` (empty for an empty slot); returns its index.
  uint32_t add(std::string_view name) {
    text_.append(name);
    ends_.push_back(static_cast<uint32_t>(text_.size()));
    return static_cast<uint32_t>(ends_.size() - 1);
  }
  // "" for an index never added.
  std::string_view at(uint32_t index) const {
    if (index >= ends_.size()) return {};
    const uint32_t begin = index == 0 ? 0 : ends_[index - 1];
    return std::string_view(text_).substr(begin, ends_[index] - begin);
  }
  size_t size() const { return ends_.size(); }
  void reserve(size_t names, size_t text_bytes) {
    ends_.reserve(names);
    text_.reserve(text_bytes);
  }
  // Heap and inline bytes held.
  size_t bytes() const {
    return sizeof(NodeNames) + text_.capacity() +
           ends_.capacity() * sizeof(uint32_t);
  }

 private:
  std::string text_;
  std::vector<uint32_t> ends_;  // ends_[i]: one past name i in text_
};

}  // namespace schedplug::host
