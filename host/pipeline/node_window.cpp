#include "host/pipeline/node_window.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace schedplug::host {

std::string window_error(std::span<const uint32_t> ranges,
                         std::string_view call, bool required) {
  if (ranges.empty()) {
    if (!required) return {};
    return fmt::format(
        "{}: evaluate is empty; list the node slots to filter as [first, "
        "end) pairs (only PreFilter takes an empty list, as every node)",
        call);
  }
  if (ranges.size() % 2 != 0) {
    return fmt::format(
        "{}: evaluate holds {} number{}, an odd count, not [first, end) "
        "pairs of node slots; send an even count (use a shim from the same "
        "schedplug release)",
        call, ranges.size(), ranges.size() == 1 ? "" : "s");
  }
  for (size_t i = 0; i < ranges.size(); i += 2) {
    if (ranges[i] >= ranges[i + 1]) {
      return fmt::format(
          "{}: evaluate pair {} is [{}, {}), an empty range; each pair must "
          "be [first, end) with first < end (use a shim from the same "
          "schedplug release)",
          call, i / 2, ranges[i], ranges[i + 1]);
    }
  }
  return {};
}

std::span<const schedplug_node* const> window_views(
    std::span<const schedplug_node* const> views,
    std::span<const uint32_t> ranges, std::vector<const schedplug_node*>& out) {
  // The ranges, clipped to the table, in slot order (the shim's window
  // wraps around the table's end, so its second pair comes first).
  thread_local std::vector<std::pair<size_t, size_t>> pairs;
  pairs.clear();
  size_t last = 0;
  for (size_t i = 0; i + 1 < ranges.size(); i += 2) {
    const size_t first = ranges[i];
    const size_t end = std::min<size_t>(ranges[i + 1], views.size());
    if (first >= end) continue;
    pairs.emplace_back(first, end);
    last = std::max(last, end);
  }
  std::sort(pairs.begin(), pairs.end());
  out.assign(last, nullptr);
  size_t copied = 0;  // every slot in a range below it is in `out`
  for (auto [first, end] : pairs) {
    first = std::max(first, copied);
    if (first >= end) continue;
    std::copy(views.begin() + static_cast<std::ptrdiff_t>(first),
              views.begin() + static_cast<std::ptrdiff_t>(end),
              out.begin() + static_cast<std::ptrdiff_t>(first));
    copied = end;
  }
  return out;
}

size_t walk_length(std::span<const uint32_t> ranges, size_t table_size) {
  size_t n = 0;
  for (size_t i = 0; i + 1 < ranges.size(); i += 2) {
    const size_t end = std::min<size_t>(ranges[i + 1], table_size);
    if (ranges[i] < end) n += end - ranges[i];
  }
  return n;
}

std::vector<uint32_t> walk_slice(std::span<const uint32_t> ranges,
                                 size_t table_size, size_t from, size_t to) {
  std::vector<uint32_t> out;
  size_t at = 0;  // walk position of the pair's first slot
  for (size_t i = 0; i + 1 < ranges.size() && at < to; i += 2) {
    const size_t first = ranges[i];
    const size_t end = std::min<size_t>(ranges[i + 1], table_size);
    if (first >= end) continue;
    const size_t len = end - first;
    // This pair's part of [from, to), in pair offsets.
    const size_t lo = std::max(from, at) - at;
    const size_t hi = std::min(to, at + len) - at;
    if (lo < hi) {
      out.push_back(static_cast<uint32_t>(first + lo));
      out.push_back(static_cast<uint32_t>(first + hi));
    }
    at += len;
  }
  return out;
}

}  // namespace schedplug::host
