// The node slots a PreFilter or FilterNodes call evaluates (the requests'
// `evaluate`: [first, end) pairs of node-table slots), checked, and turned
// into the span of node views the filter chain walks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "schedplug/plugin.h"

namespace schedplug::host {

// Empty when `ranges` is well formed (an even count, first < end in every
// pair); otherwise one sentence for INVALID_ARGUMENT, naming `call`. Empty
// `ranges` are well formed (every node) unless `required`.
std::string window_error(std::span<const uint32_t> ranges,
                         std::string_view call, bool required);

// `views` (NodeTable::views()) with every slot outside `ranges` nullptr
// (the chain skips those), so that an index into the answer is still the
// table slot. Built in `out`, which the caller reuses between calls; the
// answer views it and ends after the last slot in a range. Slots past the
// end of `views` are ignored, ranges may overlap or come in any order:
// each slot is copied at most once, O(slots + pairs log pairs). `ranges`
// must be well formed (window_error).
std::span<const schedplug_node* const> window_views(
    std::span<const schedplug_node* const> views,
    std::span<const uint32_t> ranges, std::vector<const schedplug_node*>& out);

// A walk over `ranges` ([first, end) pairs in the order given, clipped to
// `table_size`; empty pairs after clipping dropped): the pairs covering
// its positions [from, to), in walk order, the first and last possibly
// cut. A slot in two pairs is walked twice.
std::vector<uint32_t> walk_slice(std::span<const uint32_t> ranges,
                                 size_t table_size, size_t from, size_t to);

// How many positions that walk has.
size_t walk_length(std::span<const uint32_t> ranges, size_t table_size);

}  // namespace schedplug::host
