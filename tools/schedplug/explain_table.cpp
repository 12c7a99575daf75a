#include "tools/schedplug/explain_table.hpp"

#include <algorithm>
#include <iomanip>

#include "schedplug/plugin.h"

namespace schedplug::tools {

std::vector<ExplainFilterCell> filter_cells(const std::vector<bool>& skipped,
                                            std::optional<size_t> stop,
                                            const std::string& verdict,
                                            const std::string& reason) {
  std::vector<ExplainFilterCell> cells;
  cells.reserve(skipped.size());
  for (size_t p = 0; p < skipped.size(); ++p) {
    if (!stop || p < *stop) {
      cells.push_back({skipped[p] ? "Skipped" : "Success", ""});
    } else if (p == *stop) {
      cells.push_back({verdict, reason});
    } else {
      cells.push_back({"NotRun", ""});
    }
  }
  return cells;
}

void print_explain_rows(const ExplainTable& table, std::ostream& out,
                        int indent, bool skip_not_run) {
  const std::string node_in(static_cast<size_t>(indent), ' ');
  const std::string plugin_in(static_cast<size_t>(indent) + 2, ' ');
  size_t width = 0;
  for (const std::string& p : table.filters) width = std::max(width, p.size());
  for (const std::string& p : table.scorers) width = std::max(width, p.size());
  for (const ExplainRow& d : table.rows) {
    out << node_in << d.node;
    if (!d.feasible) {
      out << "  rejected by " << d.rejected_by;
    } else if (d.scored) {
      out << "  total " << d.total;
    } else {
      out << "  feasible";
    }
    if (d.mark == ExplainRow::Mark::kChosen) {
      out << "  <- chosen";
    } else if (d.mark == ExplainRow::Mark::kTied) {
      out << "  <- tied";
    }
    out << "\n";
    for (size_t p = 0; p < table.filters.size() && p < d.filters.size(); ++p) {
      const ExplainFilterCell& c = d.filters[p];
      if (skip_not_run && c.verdict == "NotRun") continue;
      out << plugin_in << std::left << std::setw(static_cast<int>(width))
          << table.filters[p] << "  filter  ";
      if (c.verdict == "Skipped") {
        out << "skipped for this pod (applies() or PreFilter said so)";
      } else if (c.verdict == "NotRun") {
        out << "not run (an earlier filter rejected the node)";
      } else {
        out << c.verdict << (c.reason.empty() ? "" : ": " + c.reason);
      }
      out << "\n";
    }
    if (!d.scored) continue;
    for (size_t p = 0; p < table.scorers.size() && p < d.scores.size(); ++p) {
      const ExplainScoreCell& c = d.scores[p];
      out << plugin_in << std::left << std::setw(static_cast<int>(width))
          << table.scorers[p] << "  score   ";
      if (c.skipped) {
        out << "skipped for this pod (applies() or PreScore said so)\n";
      } else {
        const int weight = p < table.weights.size() ? table.weights[p] : 1;
        if (c.raw_known) {
          out << "raw " << c.raw << ", ";
        } else {
          out << "raw not kept, ";
        }
        out << "normalized " << c.normalized << ", weight " << weight << " -> "
            << c.normalized * weight << "\n";
      }
    }
  }
}

nlohmann::ordered_json explain_rows_json(const ExplainTable& table) {
  using Json = nlohmann::ordered_json;
  Json nodes = Json::array();
  for (const ExplainRow& d : table.rows) {
    Json n;
    n["node"] = d.node;
    n["feasible"] = d.feasible;
    Json filters = Json::array();
    for (size_t p = 0; p < table.filters.size() && p < d.filters.size(); ++p) {
      filters.push_back({{"plugin", table.filters[p]},
                         {"verdict", d.filters[p].verdict},
                         {"reason", d.filters[p].reason}});
    }
    n["filters"] = filters;
    if (d.scored) {
      Json scores = Json::array();
      for (size_t p = 0; p < table.scorers.size() && p < d.scores.size(); ++p) {
        const ExplainScoreCell& c = d.scores[p];
        Json s{{"plugin", table.scorers[p]}, {"skipped", c.skipped}};
        if (!c.skipped) {
          const int weight = p < table.weights.size() ? table.weights[p] : 1;
          s["raw"] = c.raw_known ? Json(c.raw) : Json(nullptr);
          s["normalized"] = c.normalized;
          s["weight"] = weight;
          s["weighted"] = c.normalized * weight;
        }
        scores.push_back(s);
      }
      n["scores"] = scores;
      n["total"] = d.total;
    }
    if (d.mark == ExplainRow::Mark::kChosen) n["chosen"] = true;
    nodes.push_back(n);
  }
  return nodes;
}

}  // namespace schedplug::tools
