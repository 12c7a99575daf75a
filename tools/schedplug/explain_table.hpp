// One pod's per-node explanation as `schedplug simulate --explain` and
// `schedplug explain` print it: for each node, every native filter's
// verdict and reason, every native scorer's raw and normalized score and
// weight, and the total. One text layout and one JSON schema for both
// (docs/explain.md).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedplug/cpp/status.hpp"

namespace schedplug::tools {

struct ExplainFilterCell {
  // Success, Unschedulable, UnschedulableAndUnresolvable, Error, Skipped
  // (the plugin's gate said no), NotRun (an earlier filter rejected).
  std::string verdict;
  std::string reason;
};

struct ExplainScoreCell {
  bool skipped = false;
  // The plugin's own score before normalizing; false: nobody kept it (a
  // native plugin's, when schedplug-host no longer holds the cycle).
  bool raw_known = true;
  int64_t raw = 0;
  int64_t normalized = 0;
};

struct ExplainRow {
  std::string node;
  bool feasible = false;
  std::string rejected_by;
  std::vector<ExplainFilterCell> filters;  // per filter of the table
  bool scored = false;
  std::vector<ExplainScoreCell> scores;  // per scorer, when scored
  int64_t total = 0;
  enum class Mark { kNone, kChosen, kTied };
  Mark mark = Mark::kNone;
};

struct ExplainTable {
  std::vector<std::string> filters;
  std::vector<std::string> scorers;
  std::vector<int> weights;  // per scorer
  std::vector<ExplainRow> rows;
};

// A node's filter cells: the filters before `stop` passed it (or skipped
// the pod), the one at `stop` gave `verdict` and `reason`, the later ones
// did not run. No `stop`: every filter passed it.
std::vector<ExplainFilterCell> filter_cells(const std::vector<bool>& skipped,
                                            std::optional<size_t> stop,
                                            const std::string& verdict,
                                            const std::string& reason);

// kube-scheduler's code names, as the cells say them.
using schedplug::code_name;

// The rows, `indent` spaces in, each plugin on its own line below its
// node; `skip_not_run` leaves out the filters an earlier one kept from
// running (the node's line names the filter that rejected it).
void print_explain_rows(const ExplainTable& table, std::ostream& out,
                        int indent = 4, bool skip_not_run = false);

// The rows as JSON: [{"node", "feasible", "filters": [{"plugin",
// "verdict", "reason"}], "scores": [{"plugin", "skipped", "raw",
// "normalized", "weight", "weighted"}], "total"}, ...]; "scores" and
// "total" only for scored nodes, "chosen" for the chosen node.
nlohmann::ordered_json explain_rows_json(const ExplainTable& table);

}  // namespace schedplug::tools
