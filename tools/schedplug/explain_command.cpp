// `schedplug explain` (explain_command.hpp): the Explain call and each cycle
// printed as text or JSON. One file: both forms print the same facts (outcome,
// rejection groups, scores) through the same helpers, so they cannot drift
// apart.
#include "tools/schedplug/explain_command.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <map>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "host/app/host_app.hpp"
#include "schedplug/v1/schedplug.grpc.pb.h"
#include "tools/schedplug/explain_table.hpp"

namespace schedplug::tools {
namespace {

using Json = nlohmann::ordered_json;

std::vector<bool> skipped_of(
    const google::protobuf::RepeatedField<bool>& skipped, int n) {
  std::vector<bool> out(static_cast<size_t>(n), false);
  for (int i = 0; i < n && i < skipped.size(); ++i)
    out[static_cast<size_t>(i)] = skipped[i];
  return out;
}

// The cycle's nodes as the shared table: rejected nodes with the filter
// cells up to the rejecting plugin, scored nodes with their scores, and the
// chosen node when it is neither.
ExplainTable table_of(const v1::ExplainedCycle& c) {
  ExplainTable table;
  table.filters.assign(c.filters().begin(), c.filters().end());
  table.scorers.assign(c.scorers().begin(), c.scorers().end());
  table.weights.assign(c.weights().begin(), c.weights().end());
  const std::vector<bool> filter_skipped =
      skipped_of(c.filter_skipped(), c.filters_size());
  const std::vector<bool> scorer_skipped =
      skipped_of(c.scorer_skipped(), c.scorers_size());
  bool chosen_listed = false;
  for (const v1::ExplainedNode& n : c.nodes()) {
    ExplainRow row;
    row.node = n.node();
    if (n.rejected()) {
      row.feasible = false;
      if (n.rejected_by() < table.filters.size())
        row.rejected_by = table.filters[n.rejected_by()];
      row.filters = filter_cells(filter_skipped, n.rejected_by(),
                                 code_name(n.code()), n.reason());
    } else {
      row.feasible = true;
      row.filters = filter_cells(filter_skipped, std::nullopt, "", "");
    }
    if (n.scored()) {
      row.scored = true;
      for (size_t p = 0; p < table.scorers.size(); ++p) {
        ExplainScoreCell cell;
        cell.skipped = scorer_skipped[p];
        const int i = static_cast<int>(p);
        if (!cell.skipped) {
          cell.raw = i < n.raw_size() ? n.raw(i) : 0;
          cell.normalized = i < n.normalized_size() ? n.normalized(i) : 0;
          const int weight = p < table.weights.size() ? table.weights[p] : 1;
          row.total += cell.normalized * weight;
        }
        row.scores.push_back(cell);
      }
    }
    if (!c.chosen_node().empty() && n.node() == c.chosen_node()) {
      row.mark = ExplainRow::Mark::kChosen;
      chosen_listed = true;
    }
    table.rows.push_back(std::move(row));
  }
  if (!c.chosen_node().empty() && !chosen_listed) {
    ExplainRow row;
    row.node = c.chosen_node();
    row.feasible = true;
    row.filters = filter_cells(filter_skipped, std::nullopt, "", "");
    row.mark = ExplainRow::Mark::kChosen;
    table.rows.push_back(std::move(row));
  }
  // Scored nodes best first, as a reader looks for the winner; rejected
  // nodes after them in the host's order.
  std::stable_sort(table.rows.begin(), table.rows.end(),
                   [](const ExplainRow& a, const ExplainRow& b) {
                     if (a.feasible != b.feasible) return a.feasible;
                     return a.total > b.total;
                   });
  return table;
}

std::string utc_time(int64_t unix_nanos) {
  const std::time_t seconds = static_cast<std::time_t>(unix_nanos / 1000000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%Y-%m-%dT%H:%M:%S") << "." << std::setw(3)
      << std::setfill('0') << (unix_nanos / 1000000) % 1000 << "Z";
  return out.str();
}

std::string duration_text(int64_t nanos) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1);
  if (nanos < 1000) {
    out << nanos << " ns";
  } else if (nanos < 1000000) {
    out << static_cast<double>(nanos) / 1e3 << " µs";
  } else {
    out << static_cast<double>(nanos) / 1e6 << " ms";
  }
  return out.str();
}

// What became of a cycle, as the shim told the host.
enum class Outcome { kPlaced, kUnreserved, kUnschedulable, kNotReported };

Outcome outcome_of(const v1::ExplainedCycle& c) {
  if (c.unschedulable()) return Outcome::kUnschedulable;
  if (c.chosen_node().empty()) return Outcome::kNotReported;
  return c.unreserved() ? Outcome::kUnreserved : Outcome::kPlaced;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPlaced:
      return "placed";
    case Outcome::kUnreserved:
      return "unreserved";
    case Outcome::kUnschedulable:
      return "unschedulable";
    case Outcome::kNotReported:
      break;
  }
  return "not reported";
}

// The nodes native filters rejected for the same reason: the plugin, its
// verdict and reason.
struct RejectionGroup {
  std::string plugin;
  std::string verdict;
  std::string reason;
  std::vector<std::string> nodes;
};

// The cycle's listed rejections by reason, the most nodes first (ties in
// profile order).
std::vector<RejectionGroup> rejection_groups(const v1::ExplainedCycle& c) {
  std::vector<RejectionGroup> groups;
  std::map<std::tuple<uint32_t, int, std::string>, size_t> index;
  std::vector<uint32_t> order;
  for (const v1::ExplainedNode& n : c.nodes()) {
    if (!n.rejected()) continue;
    const auto key = std::make_tuple(n.rejected_by(),
                                     static_cast<int>(n.code()), n.reason());
    auto [it, added] = index.try_emplace(key, groups.size());
    if (added) {
      RejectionGroup g;
      g.plugin = n.rejected_by() < static_cast<uint32_t>(c.filters_size())
                     ? c.filters(static_cast<int>(n.rejected_by()))
                     : "?";
      g.verdict = code_name(n.code());
      g.reason = n.reason();
      groups.push_back(std::move(g));
      order.push_back(n.rejected_by());
    }
    groups[it->second].nodes.push_back(n.node());
  }
  std::vector<size_t> by(groups.size());
  for (size_t i = 0; i < by.size(); ++i) by[i] = i;
  std::stable_sort(by.begin(), by.end(), [&](size_t a, size_t b) {
    if (groups[a].nodes.size() != groups[b].nodes.size())
      return groups[a].nodes.size() > groups[b].nodes.size();
    return order[a] < order[b];
  });
  std::vector<RejectionGroup> sorted;
  sorted.reserve(groups.size());
  for (size_t i : by) sorted.push_back(std::move(groups[i]));
  return sorted;
}

// Rejected node evaluations, listed or beyond the host's cap (a host that
// predates nodes_rejected: the listed ones).
uint32_t rejected_count(const v1::ExplainedCycle& c) {
  const auto listed = static_cast<uint32_t>(
      std::count_if(c.nodes().begin(), c.nodes().end(),
                    [](const v1::ExplainedNode& n) { return n.rejected(); }));
  return std::max(listed, c.nodes_rejected());
}

uint32_t passed_count(const v1::ExplainedCycle& c) {
  const uint32_t rejected = rejected_count(c);
  return c.nodes_filtered() > rejected ? c.nodes_filtered() - rejected : 0;
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void print_outcome(const v1::ExplainedCycle& c, std::ostream& out) {
  out << "  outcome: ";
  switch (outcome_of(c)) {
    case Outcome::kPlaced:
      out << "placed on " << c.chosen_node() << "\n";
      return;
    case Outcome::kUnreserved:
      out << "kube-scheduler reserved " << c.chosen_node()
          << ", then undid it (a later Reserve plugin, Permit, PreBind or "
             "the binding failed); it tries the pod again\n";
      return;
    case Outcome::kUnschedulable:
      if (c.unschedulable_message().empty()) {
        out << "no node: kube-scheduler found none for the pod\n";
      } else {
        out << "no node; kube-scheduler said: " << c.unschedulable_message()
            << "\n";
      }
      return;
    case Outcome::kNotReported:
      break;
  }
  out << "not reported: the shim tells the host at kube-scheduler's "
         "Reserve, Unreserve and PostFilter, and none came for this cycle "
         "(it is still running, preemption nominated a node, or the profile "
         "leaves the native plugins out of reserve and postFilter)\n";
}

void print_filters(const v1::ExplainedCycle& c, bool list_nodes,
                   std::ostream& out) {
  if (c.filters().empty()) {
    out << "  native filters: none\n";
    return;
  }
  const uint32_t rejected = rejected_count(c);
  const uint32_t passed = passed_count(c);
  out << "  native filters: " << plural(c.nodes_filtered(), "node", "nodes")
      << " evaluated, " << rejected << " rejected, " << passed << " passed\n";
  for (const RejectionGroup& g : rejection_groups(c)) {
    out << "    " << g.nodes.size() << " rejected by " << g.plugin << " ("
        << g.verdict << ")" << (g.reason.empty() ? "" : ": " + g.reason)
        << "\n";
    if (list_nodes) out << "      " << joined(g.nodes) << "\n";
  }
  if (passed == 0) return;
  out << "    " << passed << " passed every native filter";
  switch (outcome_of(c)) {
    case Outcome::kUnschedulable:
      out << "; kube-scheduler's in-tree filters rejected "
          << (passed == 1 ? "it" : "them")
          << (c.unschedulable_message().empty()
                  ? " (the pod's FailedScheduling event says why)"
                  : " (its words above say why)");
      break;
    case Outcome::kNotReported:
      out << "; if the pod is Pending, kube-scheduler's in-tree filters "
             "rejected "
          << (passed == 1 ? "it" : "them")
          << " (the pod's FailedScheduling event says why)";
      break;
    default:
      break;
  }
  out << "\n";
}

// "NetworkLatency 100 x5 + Other skipped" for a scored row.
std::string score_terms(const ExplainTable& table, const ExplainRow& row) {
  std::string out;
  for (size_t p = 0; p < table.scorers.size() && p < row.scores.size(); ++p) {
    const ExplainScoreCell& s = row.scores[p];
    out += out.empty() ? "" : " + ";
    out += table.scorers[p];
    if (s.skipped) {
      out += " skipped";
    } else {
      const int weight = p < table.weights.size() ? table.weights[p] : 1;
      out += " " + std::to_string(s.normalized) + " x" + std::to_string(weight);
    }
  }
  return out;
}

// The best native totals: the first few scored nodes (best first), the
// chosen node among them or after them, the runner-up marked.
void print_scores(const v1::ExplainedCycle& c, const ExplainTable& table,
                  std::ostream& out) {
  constexpr size_t kShown = 3;
  std::vector<const ExplainRow*> scored;
  for (const ExplainRow& r : table.rows) {
    if (r.scored) scored.push_back(&r);
  }
  if (c.scorers().empty()) {
    out << "  native scores: none (no native Score plugin)\n";
    return;
  }
  if (scored.empty()) {
    out << "  native scores: none";
    switch (outcome_of(c)) {
      case Outcome::kUnschedulable:
        out << " (no node was feasible)";
        break;
      case Outcome::kNotReported:
        out << " yet (scores computed ahead show once the shim says which "
               "nodes kube-scheduler scored)";
        break;
      default:
        out << " (kube-scheduler scores only when more than one node is "
               "feasible)";
        break;
    }
    out << "\n";
    return;
  }
  out << "  native scores: " << plural(scored.size(), "node", "nodes")
      << " scored (the weighted native total; kube-scheduler adds its "
         "in-tree plugins' scores)\n";
  const ExplainRow* runner_up = nullptr;
  for (const ExplainRow* r : scored) {
    if (r->mark != ExplainRow::Mark::kChosen) {
      runner_up = r;
      break;
    }
  }
  const bool placed = outcome_of(c) == Outcome::kPlaced ||
                      outcome_of(c) == Outcome::kUnreserved;
  size_t width = 0;
  for (const ExplainRow* r : scored) width = std::max(width, r->node.size());
  size_t printed = 0;
  for (size_t i = 0; i < scored.size(); ++i) {
    const ExplainRow& r = *scored[i];
    const bool chosen = r.mark == ExplainRow::Mark::kChosen;
    if (i >= kShown && !chosen) continue;
    out << "    " << std::left << std::setw(static_cast<int>(width)) << r.node
        << "  " << std::right << std::setw(6) << r.total << "  "
        << score_terms(table, r);
    if (chosen) {
      out << "  <- chosen";
    } else if (placed && &r == runner_up) {
      out << "  <- runner-up";
    }
    out << "\n";
    ++printed;
  }
  if (printed < scored.size()) {
    out << "    ... "
        << plural(scored.size() - printed, "more node", "more nodes")
        << " (--nodes lists every node)\n";
  }
}

void print_cycle(const v1::ExplainedCycle& c, int number, int of,
                 bool list_nodes, std::ostream& out) {
  const ExplainTable table = table_of(c);
  out << "cycle " << number << " of " << of << ", "
      << utc_time(c.started_unix_nanos()) << ", profile \""
      << c.scheduler_name() << "\", pod uid " << c.pod_uid() << "\n";
  print_outcome(c, out);
  print_filters(c, list_nodes, out);
  print_scores(c, table, out);
  if (c.nodes_left_out() > 0) {
    out << "  " << c.nodes_left_out()
        << " more nodes are not listed (the host's per-cycle cap)\n";
  }
  for (int p = 0; p < c.scorer_errors_size(); ++p) {
    if (!c.scorer_errors(p).empty()) {
      out << "  " << c.scorers(p) << " failed: " << c.scorer_errors(p) << "\n";
    }
  }
  for (const std::string& u : c.unfinished())
    out << "  unfinished: " << u << "\n";
  if (!c.timings().empty()) {
    out << "  plugin time:";
    for (int i = 0; i < c.timings_size(); ++i) {
      const v1::PluginTiming& t = c.timings(i);
      out << (i ? ", " : " ") << t.plugin() << " " << t.hook() << " "
          << duration_text(t.nanos());
    }
    out << "\n";
  }
  if (list_nodes && !table.rows.empty()) {
    out << "  every node listed (the rejected and the scored ones):\n";
    print_explain_rows(table, out, 4, /*skip_not_run=*/true);
  }
}

Json cycle_json(const v1::ExplainedCycle& c) {
  Json j;
  j["profile"] = c.scheduler_name();
  j["pod_uid"] = c.pod_uid();
  j["started"] = utc_time(c.started_unix_nanos());
  j["table_version"] = c.table_version();
  j["outcome"] = outcome_name(outcome_of(c));
  j["chosen_node"] = c.chosen_node();
  j["unschedulable_message"] = c.unschedulable_message();
  j["nodes_filtered"] = c.nodes_filtered();
  j["nodes_rejected"] = rejected_count(c);
  j["nodes_passed"] = passed_count(c);
  j["nodes_left_out"] = c.nodes_left_out();
  Json rejections = Json::array();
  for (const RejectionGroup& g : rejection_groups(c)) {
    rejections.push_back({{"plugin", g.plugin},
                          {"verdict", g.verdict},
                          {"reason", g.reason},
                          {"nodes", g.nodes}});
  }
  j["rejections"] = rejections;
  Json timings = Json::array();
  for (const v1::PluginTiming& t : c.timings()) {
    timings.push_back({{"plugin", t.plugin()},
                       {"hook", t.hook()},
                       {"seconds", static_cast<double>(t.nanos()) / 1e9}});
  }
  j["timings"] = timings;
  Json errors = Json::array();
  for (int p = 0; p < c.scorer_errors_size(); ++p) {
    if (!c.scorer_errors(p).empty())
      errors.push_back(
          {{"plugin", c.scorers(p)}, {"error", c.scorer_errors(p)}});
  }
  j["score_errors"] = errors;
  j["unfinished"] = Json(
      std::vector<std::string>(c.unfinished().begin(), c.unfinished().end()));
  j["explain"] = explain_rows_json(table_of(c));
  return j;
}

}  // namespace

int run_explain(const ExplainOptions& options, std::ostream& out,
                std::ostream& err) {
  std::shared_ptr<grpc::Channel> channel;
  try {
    channel = host::dial_host(options.listen, {.ca = options.tls_ca,
                                               .cert = options.tls_cert,
                                               .key = options.tls_key});
  } catch (const std::invalid_argument& e) {
    err << "error: " << e.what() << "\n";
    return kExplainFailed;
  }
  auto stub = v1::Host::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(
                           options.timeout_seconds * 1000)));
  v1::ExplainRequest request;
  request.set_pod(options.pod);
  v1::ExplainResponse response;
  const grpc::Status status = stub->Explain(&context, request, &response);
  if (!status.ok()) {
    err << "error: schedplug-host at " << options.listen
        << " did not answer Explain: " << status.error_message();
    if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      err << " (a host older than `schedplug explain`; upgrade it)";
    } else if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      err << " (is it running, and is --listen the address it serves? On "
             "the unix socket, run as a uid the host allows: --allow-uid, "
             "--socket-group)";
    }
    err << "\n";
    return kExplainFailed;
  }
  const int code = response.cycles().empty() ? kExplainNotHeld : kExplainFound;
  if (options.json) {
    Json j;
    j["pod"] = options.pod;
    j["host"] = options.listen;
    Json cycles = Json::array();
    for (const v1::ExplainedCycle& c : response.cycles())
      cycles.push_back(cycle_json(c));
    j["cycles"] = cycles;
    if (!response.not_held().empty()) j["not_held"] = response.not_held();
    out << j.dump(2) << "\n";
    return code;
  }
  if (response.cycles().empty()) {
    out << "pod " << options.pod << ": " << response.not_held() << "\n";
    return code;
  }
  const v1::ExplainedCycle& last = response.cycles(response.cycles_size() - 1);
  out << "pod " << last.pod_namespace() << "/" << last.pod_name() << ": "
      << response.cycles_size() << " cycle"
      << (response.cycles_size() == 1 ? "" : "s")
      << " held by the schedplug-host at " << options.listen
      << " (oldest first)\n";
  for (int i = 0; i < response.cycles_size(); ++i)
    print_cycle(response.cycles(i), i + 1, response.cycles_size(),
                options.nodes, out);
  return code;
}

}  // namespace schedplug::tools
