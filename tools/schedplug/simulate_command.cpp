#include "tools/schedplug/simulate_command.hpp"

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <set>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "tools/schedplug/explain_table.hpp"
#include "tools/schedplug/kube_dump.hpp"
#include "tools/schedplug/simulate_framework.hpp"
#include "tools/schedplug/simulate_native.hpp"
#include "tools/schedplug/simulate_report.hpp"

namespace schedplug::tools {
namespace {

using Json = nlohmann::ordered_json;

// Resolves --explain arguments to pods of the dump; problems are input
// errors.
std::set<const KubePod*> explained_pods(const SimulateOptions& options,
                                        const std::vector<KubePod>& pods,
                                        std::vector<std::string>& problems) {
  std::set<const KubePod*> out;
  for (const std::string& want : options.explain) {
    if (want == "*") {  // every pod simulate schedules
      for (const KubePod& p : pods) {
        if (p.node_name.empty() && !p.terminal()) out.insert(&p);
      }
      continue;
    }
    std::vector<const KubePod*> matches;
    for (const KubePod& p : pods) {
      if (p.key() == want ||
          (want.find('/') == std::string::npos && p.data.name == want)) {
        matches.push_back(&p);
      }
    }
    if (matches.empty()) {
      problems.push_back("--explain " + want + ": no pod of that name in " +
                         options.pods.string() +
                         "; give it as NAMESPACE/NAME or NAME");
      continue;
    }
    if (matches.size() > 1) {
      std::string which;
      for (const KubePod* p : matches) {
        which += (which.empty() ? "" : ", ") + p->key();
      }
      problems.push_back("--explain " + want +
                         ": several pods have that "
                         "name (" +
                         which + "); give NAMESPACE/NAME");
      continue;
    }
    const KubePod* p = matches.front();
    if (!p->node_name.empty()) {
      problems.push_back("--explain " + want +
                         ": the pod is already bound "
                         "to node \"" +
                         p->node_name + "\" in " + options.pods.string() +
                         "; simulate places only pods without spec.nodeName");
      continue;
    }
    if (p->terminal()) {
      problems.push_back("--explain " + want +
                         ": the pod has finished "
                         "(phase " +
                         p->phase + "); kube-scheduler ignores it");
      continue;
    }
    out.insert(p);
  }
  return out;
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string profile_summary(const SimulatedProfile& p, bool native_only) {
  std::string filters, scores;
  for (const std::string& f : p.filters) {
    filters += (filters.empty() ? "" : ", ") + f;
  }
  for (size_t i = 0; i < p.scorers.size(); ++i) {
    scores += (scores.empty() ? "" : ", ") + p.scorers[i] + " (weight " +
              std::to_string(p.weights[i]) + ")";
  }
  const char* which = native_only ? "native " : "";
  return "profile \"" + p.name + "\": " + which + "filters " +
         (filters.empty() ? "none" : filters) + "; " + which + "scores " +
         (scores.empty() ? "none" : scores);
}

int bad_input(std::ostream& err, const std::vector<std::string>& problems) {
  for (const auto& p : problems) err << "error: " << p << "\n";
  return kSimulateBadInput;
}

struct Counts {
  size_t placed = 0, unschedulable = 0, errors = 0, skipped = 0, ties = 0,
         preempted = 0;
};

Counts count(const SimulationReport& report) {
  Counts c;
  for (const SimulatedPod& r : report.pods) {
    if (r.status == "placed") {
      ++c.placed;
      if (r.top.size() > 1) ++c.ties;
    } else if (r.status == "unschedulable") {
      ++c.unschedulable;
    } else if (r.status == "error") {
      ++c.errors;
    } else if (r.status == "preempted") {
      ++c.preempted;
    } else {
      ++c.skipped;
    }
  }
  return c;
}

struct DumpCounts {
  size_t nodes = 0, pods = 0, bound = 0, finished = 0;
};

void print_json(const SimulateOptions& options, const DumpCounts& dump,
                const SimulationReport& report, const Counts& c, int code,
                std::ostream& out) {
  Json j;
  j["config"] = options.config.string();
  j["plugins_dir"] = options.plugins.string();
  j["nodes_file"] = options.nodes.string();
  j["pods_file"] = options.pods.string();
  j["scheduler"] =
      report.scheduler.empty() ? "native plugins only" : report.scheduler;
  j["nodes"] = dump.nodes;
  j["bound_pods"] = dump.bound;
  j["finished_pods"] = dump.finished;
  Json profiles = Json::array();
  for (const SimulatedProfile& p : report.profiles) {
    Json scores = Json::array();
    for (size_t s = 0; s < p.scorers.size(); ++s) {
      scores.push_back({{"plugin", p.scorers[s]}, {"weight", p.weights[s]}});
    }
    profiles.push_back(
        {{"name", p.name}, {"filters", p.filters}, {"scores", scores}});
  }
  j["profiles"] = profiles;
  Json pods = Json::array();
  for (const SimulatedPod& r : report.pods) {
    Json pj;
    pj["pod"] = r.pod->key();
    pj["profile"] = r.pod->scheduler_name;
    pj["status"] = r.status;
    if (r.status == "placed" || r.status == "preempted") {
      pj["node"] = r.top.front();
      pj["tie"] = r.top.size() > 1 ? Json(r.top) : Json::array();
      pj["score"] = r.score;
      pj["scored"] = r.scored;
    }
    if (!r.profile.empty()) pj["feasible_nodes"] = r.feasible;
    if (!r.reason.empty()) pj["reason"] = r.reason;
    if (!r.nominated_node.empty()) pj["nominated_node"] = r.nominated_node;
    if (r.explain) pj["explain"] = explain_rows_json(*r.explain);
    pods.push_back(pj);
  }
  j["pods"] = pods;
  Json evicted = Json::array();
  for (const SimulatedEviction& e : report.evicted) {
    evicted.push_back({{"pod", e.pod}, {"node", e.node}, {"by", e.by}});
  }
  j["evicted"] = evicted;
  j["summary"] = {{"pending", report.pods.size()},
                  {"placed", c.placed},
                  {"ties", c.ties},
                  {"unschedulable", c.unschedulable},
                  {"errors", c.errors},
                  {"preempted", c.preempted},
                  {"skipped", c.skipped}};
  j["exit_code"] = code;
  out << j.dump(2) << "\n";
}

void print_placement(const SimulatedPod& r, std::ostream& out) {
  const std::string& first = r.top.front();
  if (r.top.size() == 1) {
    out << first;
  } else {
    out << "tie: ";
    for (size_t i = 0; i < r.top.size(); ++i) {
      if (i == 8 && r.top.size() > 9) {
        out << ", ... (" << r.top.size() - 8 << " more)";
        break;
      }
      out << (i ? ", " : "") << r.top[i];
    }
  }
  if (r.scored) {
    out << "  (score " << r.score;
  } else {
    out << "  (the only feasible node";
  }
  if (r.top.size() > 1) {
    out << "; " << r.top.size() << " nodes tie, simulation goes on with "
        << first;
  }
  out << ")";
}

void print_text(const DumpCounts& dump, size_t pending,
                const SimulationReport& report, const Counts& c,
                bool native_only, std::ostream& out) {
  if (!report.scheduler.empty()) {
    out << report.scheduler
        << " with its in-tree plugins and the native ones (through "
           "schedplug-host)\n";
  }
  for (const SimulatedProfile& p : report.profiles) {
    out << profile_summary(p, native_only) << "\n";
  }
  out << plural(dump.nodes, "node") << "; " << plural(dump.pods, "pod") << ": "
      << dump.bound << " bound (load on their nodes), " << pending
      << " to schedule"
      << (dump.finished ? ", " + std::to_string(dump.finished) +
                              " finished (ignored, as kube-scheduler does)"
                        : std::string())
      << "\n";
  size_t width = 0;
  for (const SimulatedPod& r : report.pods)
    width = std::max(width, r.pod->key().size());
  for (const SimulatedPod& r : report.pods) {
    out << std::left << std::setw(static_cast<int>(width)) << r.pod->key()
        << "  ";
    if (r.status == "placed") {
      print_placement(r, out);
    } else {
      out << r.status << ": " << r.reason;
      if (!r.nominated_node.empty()) {
        out << " (nominated to " << r.nominated_node << ")";
      }
    }
    out << "\n";
    if (!r.explain) continue;
    out << "  explain " << r.pod->key() << " (profile \"" << r.profile << "\", "
        << r.feasible << " of " << r.explain->rows.size() << " nodes feasible"
        << (r.status == "placed" && !r.scored
                ? "; one feasible node, so kube-scheduler does not score"
                : "")
        << "):\n";
    print_explain_rows(*r.explain, out);
  }
  for (const SimulatedEviction& e : report.evicted) {
    out << e.pod << "  evicted from " << e.node << " by preemption for " << e.by
        << "\n";
  }
  out << plural(report.pods.size(), "pod") << " to schedule: " << c.placed
      << " placed (" << plural(c.ties, "tie") << "), " << c.unschedulable
      << " unschedulable, " << plural(c.errors, "error");
  if (c.preempted) out << ", " << c.preempted << " preempted";
  if (c.skipped) out << ", " << c.skipped << " for other schedulers";
  out << "\n";
  if (native_only) {
    out << "note: --native-only: only the native plugins ran; "
           "kube-scheduler's in-tree plugins (resources, taints, affinity, "
           "spreading, ...) did not, and in a cluster they can move these "
           "pods or keep them pending\n";
  }
}

}  // namespace

int run_simulate(const SimulateOptions& options, std::ostream& out,
                 std::ostream& err) {
  // The dumps first: a bad dump is reported before any plugin code runs.
  std::vector<KubeNode> nodes;
  std::vector<KubePod> pods;
  std::vector<std::string> problems;
  try {
    nodes = read_node_dump(options.nodes);
  } catch (const DumpError& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  }
  try {
    pods = read_pod_dump(options.pods);
  } catch (const DumpError& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  }
  if (!problems.empty()) return bad_input(err, problems);
  if (nodes.empty()) {
    return bad_input(err, {options.nodes.string() +
                           ": holds no Node objects; make it with `kubectl "
                           "get nodes -o yaml`"});
  }
  const std::set<const KubePod*> explain =
      explained_pods(options, pods, problems);
  if (!problems.empty()) return bad_input(err, problems);
  if (!std::ifstream(options.config)) {
    return bad_input(err, {options.config.string() +
                           ": cannot read the scheduler configuration; "
                           "check the path"});
  }

  // kube-scheduler's queue order: higher priority first, then older.
  DumpCounts dump{.nodes = nodes.size(), .pods = pods.size()};
  std::vector<const KubePod*> pending;
  std::unordered_set<std::string> node_names;
  for (const KubeNode& n : nodes) node_names.insert(n.data.name);
  std::vector<const KubePod*> lost;
  for (const KubePod& p : pods) {
    if (p.terminal()) {
      ++dump.finished;
    } else if (!p.node_name.empty()) {
      ++dump.bound;
      if (!node_names.count(p.node_name)) lost.push_back(&p);
    } else {
      pending.push_back(&p);
    }
  }
  std::stable_sort(pending.begin(), pending.end(),
                   [](const KubePod* a, const KubePod* b) {
                     if (a->data.priority != b->data.priority)
                       return a->data.priority > b->data.priority;
                     return a->created < b->created;
                   });

  SimulationReport report;
  const int failed =
      options.native_only
          ? simulate_native(options, nodes, pods, pending, explain, report, err)
          : simulate_with_kube_scheduler(options, pending, explain, report,
                                         err);
  if (failed != 0) return failed;
  if (!lost.empty()) {
    err << "warning: " << plural(lost.size(), "bound pod") << " in "
        << options.pods.string() << " run on nodes missing from "
        << options.nodes.string() << " (e.g. " << lost.front()->key()
        << " on \"" << lost.front()->node_name
        << "\"); they add no load to any node\n";
  }

  const Counts c = count(report);
  const int code = c.unschedulable + c.errors + c.preempted > 0
                       ? kSimulateSomeNotPlaced
                       : kSimulateAllPlaced;
  if (options.json) {
    print_json(options, dump, report, c, code, out);
  } else {
    print_text(dump, pending.size(), report, c, options.native_only, out);
  }
  return code;
}

}  // namespace schedplug::tools
