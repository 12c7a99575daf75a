#include "tools/schedplug/explain_command.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <sstream>

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

size_t rejected_count(const v1::ExplainedCycle& c) {
  return static_cast<size_t>(
      std::count_if(c.nodes().begin(), c.nodes().end(),
                    [](const v1::ExplainedNode& n) { return n.rejected(); }));
}

void print_cycle(const v1::ExplainedCycle& c, int number, int of,
                 std::ostream& out) {
  const size_t rejected = rejected_count(c);
  const size_t scored = static_cast<size_t>(c.nodes_size()) - rejected;
  out << "cycle " << number << " of " << of << ", "
      << utc_time(c.started_unix_nanos()) << ", profile \""
      << c.scheduler_name() << "\", pod uid " << c.pod_uid() << "\n";
  out << "  chosen node: "
      << (c.chosen_node().empty()
              ? "none reported (kube-scheduler did not reserve a node in "
                "this cycle, or the shim has not told the host yet: it does "
                "with its next call)"
              : c.chosen_node())
      << "\n";
  out << "  native filters: "
      << (c.filters().empty()
              ? std::string("none")
              : std::to_string(c.nodes_filtered()) + " node evaluations, " +
                    std::to_string(rejected) + " rejected")
      << "; native scores: "
      << (c.scorers().empty() ? std::string("none")
                              : std::to_string(scored) + " nodes scored")
      << "\n";
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
  out << "  explain " << c.pod_namespace() << "/" << c.pod_name()
      << " (profile \"" << c.scheduler_name() << "\", " << c.nodes_size()
      << " nodes listed: the rejected and the scored ones):\n";
  print_explain_rows(table_of(c), out);
}

Json cycle_json(const v1::ExplainedCycle& c) {
  Json j;
  j["profile"] = c.scheduler_name();
  j["pod_uid"] = c.pod_uid();
  j["started"] = utc_time(c.started_unix_nanos());
  j["table_version"] = c.table_version();
  j["chosen_node"] = c.chosen_node();
  j["nodes_filtered"] = c.nodes_filtered();
  j["nodes_left_out"] = c.nodes_left_out();
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
    print_cycle(response.cycles(i), i + 1, response.cycles_size(), out);
  return code;
}

}  // namespace schedplug::tools
