// The test kit's results and assertions: one scheduling cycle's rows
// (Cycle, NodeResult), the expected rows (Row) and compare(), which says
// which cells differ. Part of the test kit; include schedplug/testing.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/cpp/status.hpp"
#include "schedplug/plugin.h"
#include "schedplug/testing/elements.hpp"

namespace schedplug::testing {

// kube-scheduler's code names (schedplug/cpp/status.hpp), as the tables
// say them.
using schedplug::code_name;

// One node's row of a scheduling cycle.
struct NodeResult {
  std::string node;
  Verdict filter;       // SKIP: the plugin has no filter, or skipped it
  bool scored = false;  // false: filtered out, or Score skipped
  int64_t raw = 0;      // score() as returned
  int64_t score = 0;    // after normalization, in [0, 100]
};

// One pod through one plugin, as schedplug-host runs it in a cycle.
struct Cycle {
  // Set when the cycle failed as a whole: pod_begin failed, a filter or
  // score returned ERROR, or normalization did (the host's message).
  std::string error;
  bool filter_skipped = false;  // the plugin's gates skipped the hook
  bool score_skipped = false;
  std::vector<NodeResult> nodes;  // in the order given

  // The nodes that passed Filter.
  std::vector<std::string> feasible() const {
    std::vector<std::string> out;
    for (const auto& n : nodes) {
      if (n.filter.code == SCHEDPLUG_SUCCESS || n.filter.code == SCHEDPLUG_SKIP)
        out.push_back(n.node);
    }
    return out;
  }
  // A printable table: the cycle's error, then one line per node: filter
  // verdict and reason, raw and normalized score ("-" when not scored).
  std::string table() const;
  // The table without the error line. A row whose reason is the cycle's
  // error says so instead of repeating it.
  std::string rows() const;
};

// An expected row for compare(): {"node", code, "reason", score}, where a
// missing score means "not scored" and a missing code means Success.
struct Row {
  Row(std::string node_name, schedplug_code filter_code = SCHEDPLUG_SUCCESS,
      std::string filter_reason = {},
      std::optional<int64_t> normalized = std::nullopt)
      : node(std::move(node_name)),
        filter(filter_code),
        reason(std::move(filter_reason)),
        score(normalized) {}
  Row(const char* node_name) : Row(std::string(node_name)) {}

  std::string node;
  schedplug_code filter;
  std::string reason;
  std::optional<int64_t> score;
};

inline std::string Cycle::table() const {
  return (error.empty() ? "" : "error: " + error + "\n") + rows();
}

inline std::string Cycle::rows() const {
  std::ostringstream out;
  for (const auto& n : nodes) {
    out << n.node << "  " << code_name(n.filter.code);
    if (!error.empty() && n.filter.reason == error) {
      out << " (the cycle's error)";
    } else if (!n.filter.reason.empty()) {
      out << " (" << n.filter.reason << ")";
    }
    if (n.scored) {
      out << "  raw=" << n.raw << " score=" << n.score;
    } else {
      out << "  score=-";
    }
    out << "\n";
  }
  return out.str();
}

// Compares a cycle with the expected rows (same nodes, same order). Returns
// "" when they match, else one line per difference and the whole table,
// with the cycle's error once (a row with that reason refers to it).
inline std::string compare(const Cycle& cycle, std::span<const Row> expected) {
  std::ostringstream diff;
  if (!cycle.error.empty()) diff << "the cycle failed: " << cycle.error << "\n";
  if (cycle.nodes.size() != expected.size()) {
    diff << "expected " << expected.size() << " nodes, the cycle has "
         << cycle.nodes.size() << "\n";
  }
  for (size_t i = 0; i < std::min(cycle.nodes.size(), expected.size()); ++i) {
    const NodeResult& got = cycle.nodes[i];
    const Row& want = expected[i];
    if (got.node != want.node) {
      diff << "row " << i << ": expected node " << want.node << ", got "
           << got.node << "\n";
      continue;
    }
    if (got.filter.code != want.filter || got.filter.reason != want.reason) {
      diff << want.node << ": expected filter " << code_name(want.filter)
           << " \"" << want.reason << "\", got " << code_name(got.filter.code);
      if (!cycle.error.empty() && got.filter.reason == cycle.error) {
        diff << " (the cycle's error)\n";
      } else {
        diff << " \"" << got.filter.reason << "\"\n";
      }
    }
    const std::string want_score =
        want.score.has_value() ? std::to_string(*want.score) : "-";
    const std::string got_score = got.scored ? std::to_string(got.score) : "-";
    if (got_score != want_score) {
      diff << want.node << ": expected score " << want_score << ", got "
           << got_score << "\n";
    }
  }
  if (diff.tellp() == 0) return {};
  return diff.str() + "the cycle:\n" + cycle.rows();
}
inline std::string compare(const Cycle& cycle,
                           std::initializer_list<Row> expected) {
  return compare(cycle,
                 std::span<const Row>(expected.begin(), expected.size()));
}

}  // namespace schedplug::testing
