// Simulation places the pending pods one by one, and each placement changes the
// NodeState (requests, pods) the next pod's filters and scores read. One file:
// the declared-data masking, the placement loop and the explain rows all read
// NodeState and PodResult.
#include "tools/schedplug/simulate_native.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "host/chain/filter_chain.hpp"
#include "host/chain/score_chain.hpp"
#include "host/chain/thread_pool.hpp"
#include "host/check/startup_check.hpp"
#include "host/config/resolve.hpp"
#include "host/model/models.hpp"
#include "host/plugin/created_plugins.hpp"
#include "schedplug/runtime.hpp"
#include "tools/schedplug/explain_table.hpp"

namespace schedplug::tools {
namespace {

using host::Deadline;
using host::PluginInstance;
using host::ProfilePlugins;

// The pod data plugins did not declare, cleared: the shim sends only what
// some plugin of the host declared (plugin.h's SCHEDPLUG_DATA_*), so a
// plugin that reads data it did not declare sees it empty here too.
host::PodData declared_pod_data(host::PodData d, uint64_t data) {
  if ((data & SCHEDPLUG_DATA_POD_NODE_NAME) == 0) d.node_name.clear();
  if ((data & SCHEDPLUG_DATA_POD_NOMINATED_NODE) == 0)
    d.nominated_node_name.clear();
  if ((data & SCHEDPLUG_DATA_POD_PRIORITY_CLASS) == 0)
    d.priority_class_name.clear();
  if ((data & SCHEDPLUG_DATA_POD_OWNERS) == 0) d.owners.clear();
  if ((data & SCHEDPLUG_DATA_POD_CONTAINERS) == 0) d.containers.clear();
  if ((data & SCHEDPLUG_DATA_POD_VOLUMES) == 0) d.volumes.clear();
  if ((data & SCHEDPLUG_DATA_POD_NODE_AFFINITY) == 0) {
    d.node_affinity_required.clear();
    d.node_affinity_preferred.clear();
  }
  if ((data & SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD) == 0)
    d.topology_spread.clear();
  if ((data & SCHEDPLUG_DATA_POD_AFFINITY) == 0) {
    for (auto& terms : d.pod_affinity) terms.clear();
  }
  return d;
}

// A node with the load of the pods bound to it so far.
struct NodeState {
  const KubeNode* node = nullptr;
  std::map<std::string, int64_t> requested;  // cpu, memory, ... scalars
  std::vector<const KubePod*> pods;
  std::unique_ptr<host::NodeModel> model;

  void add(const KubePod& pod) {
    for (const auto& [name, v] : pod.node_requests) requested[name] += v;
    pods.push_back(&pod);
  }
  // NodeInfo's requested as the shim sends it: cpu, memory,
  // ephemeral-storage, pods, then the scalar resources; and the declared
  // data (`data`, SCHEDPLUG_DATA_* bits) as the shim converts it.
  void rebuild(uint64_t data) {
    host::NodeData d = node->data;
    if ((data & SCHEDPLUG_DATA_NODE_UNSCHEDULABLE) == 0)
      d.unschedulable = false;
    if ((data & SCHEDPLUG_DATA_NODE_CONDITIONS) == 0) d.conditions.clear();
    if ((data & SCHEDPLUG_DATA_NODE_CAPACITY) == 0) d.capacity.clear();
    if ((data & SCHEDPLUG_DATA_NODE_IMAGES) == 0) d.images.clear();
    if ((data & SCHEDPLUG_DATA_NODE_PODS) != 0) {
      for (const KubePod* p : pods) {
        d.pods.push_back({.namespace_name = p->data.namespace_name,
                          .name = p->data.name,
                          .labels = p->data.labels,
                          .priority = p->data.priority,
                          .requests = p->data.requests,
                          .owner_kind = p->owner_kind});
      }
    }
    auto get = [&](const char* name) {
      auto it = requested.find(name);
      return it == requested.end() ? int64_t{0} : it->second;
    };
    d.requested = {{"cpu", get("cpu")},
                   {"memory", get("memory")},
                   {"ephemeral-storage", get("ephemeral-storage")},
                   {"pods", static_cast<int64_t>(pods.size())}};
    for (const auto& [name, v] : requested) {
      if (is_scalar_resource(name)) d.requested.emplace_back(name, v);
    }
    d.pod_count = static_cast<uint32_t>(pods.size());
    model = std::make_unique<host::NodeModel>(std::move(d));
  }
};

struct NodeExplain {
  size_t node = 0;  // index into the node states
  bool feasible = false;
  std::string rejected_by;
  std::vector<ExplainFilterCell> filters;  // per profile filter
  bool scored = false;
  std::vector<ExplainScoreCell> scores;  // per profile scorer
  int64_t total = 0;
};

struct PodResult {
  const KubePod* pod = nullptr;
  const ProfilePlugins* profile = nullptr;
  size_t profile_index = 0;
  std::string status;       // placed, unschedulable, error, skipped
  std::vector<size_t> top;  // nodes with the highest total; [0] is taken
  int64_t score = 0;
  bool scored = false;  // false: one feasible node, kube-scheduler skips Score
  size_t feasible = 0;
  std::string reason;
  std::optional<std::vector<NodeExplain>> explain;
};

// kube-scheduler's FitError message: "0/N nodes are available: 3 <reason>,
// 1 <reason>." with the "count reason" strings sorted.
std::string fit_error(size_t nodes, const host::FilterOutcome& outcome) {
  std::map<std::string, size_t> counts;
  for (const auto& r : outcome.rejections) ++counts[outcome.reasons[r.reason]];
  std::vector<std::string> parts;
  for (const auto& [reason, n] : counts) {
    parts.push_back(std::to_string(n) + " " + reason);
  }
  std::sort(parts.begin(), parts.end());
  std::string out = "0/" + std::to_string(nodes) + " nodes are available" +
                    (parts.empty() ? std::string() : ": ");
  for (size_t i = 0; i < parts.size(); ++i) {
    out += (i ? ", " : "") + parts[i];
  }
  return out + ".";
}

class Simulation {
 public:
  Simulation(const host::CreatedPlugins& created,
             std::vector<std::vector<int>> weights,
             const std::vector<KubeNode>& nodes, host::ThreadPool& pool)
      : plugins_(created), weights_(std::move(weights)), pool_(pool) {
    // What the Handshake tells the shim to send: every instance's data.
    for (const ProfilePlugins& p : created.profiles()) {
      for (const PluginInstance* instance : p.plugins) {
        data_ |= instance->settings().data;
      }
    }
    states_.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      states_[i].node = &nodes[i];
      by_name_[nodes[i].data.name] = i;
    }
  }

  // Bound pods: load on their nodes (those on unknown nodes add none).
  void bind_existing(const std::vector<KubePod>& pods) {
    for (const KubePod& p : pods) {
      if (p.node_name.empty() || p.terminal()) continue;
      auto it = by_name_.find(p.node_name);
      if (it != by_name_.end()) states_[it->second].add(p);
    }
    views_.resize(states_.size());
    for (size_t i = 0; i < states_.size(); ++i) {
      states_[i].rebuild(data_);
      views_[i] = &states_[i].model->view();
    }
  }

  PodResult schedule(const KubePod& pod, bool explain) {
    PodResult result;
    result.pod = &pod;
    const auto& profiles = plugins_.profiles();
    for (size_t i = 0; i < profiles.size(); ++i) {
      if (profiles[i].scheduler_name == pod.scheduler_name) {
        result.profile = &profiles[i];
        result.profile_index = i;
      }
    }
    if (result.profile == nullptr) {
      result.status = "skipped";
      result.reason = "spec.schedulerName \"" + pod.scheduler_name +
                      "\" is not a profile of the configuration; another "
                      "scheduler places this pod";
      return result;
    }
    const ProfilePlugins& profile = *result.profile;
    const std::vector<int>& weights = weights_[result.profile_index];
    const host::PodModel model(declared_pod_data(pod.data, data_));

    // As the host's PreFilter: applies() once per plugin for the cycle,
    // the answers reused by Filter and Score.
    std::unordered_map<const PluginInstance*, uint8_t> applies;
    for (const PluginInstance* plugin : profile.plugins) {
      applies[plugin] = plugin->applies(model.view()) ? 1 : 0;
    }
    std::vector<uint8_t> filter_applies, score_applies;
    for (const PluginInstance* f : profile.filters) {
      filter_applies.push_back(applies.count(f) ? applies[f] : 1);
    }
    for (const PluginInstance* s : profile.scorers) {
      score_applies.push_back(applies.count(s) ? applies[s] : 1);
    }

    const host::FilterOutcome filtered = host::run_filters(
        profile.filters, model.view(), views_, pool_, Deadline::never(),
        {.plugin_deadlines = {},
         .applies = filter_applies,
         .keep_raw_scores = false});
    std::vector<const host::FilterRejection*> rejection(states_.size());
    for (const auto& r : filtered.rejections) rejection[r.node] = &r;
    std::vector<size_t> feasible;
    for (size_t i = 0; i < states_.size(); ++i) {
      if (rejection[i] == nullptr) feasible.push_back(i);
    }
    result.feasible = feasible.size();

    std::vector<NodeExplain> details;
    if (explain) {
      details.resize(states_.size());
      for (size_t i = 0; i < states_.size(); ++i) {
        NodeExplain& d = details[i];
        d.node = i;
        d.feasible = rejection[i] == nullptr;
        std::vector<bool> skipped;
        for (uint8_t a : filter_applies) skipped.push_back(a == 0);
        const host::FilterRejection* r = rejection[i];
        d.filters = filter_cells(
            skipped, r ? std::optional<size_t>(r->plugin) : std::nullopt,
            r ? code_name(r->code) : "", r ? filtered.reasons[r->reason] : "");
        if (r) d.rejected_by = profile.filters[r->plugin]->name();
      }
    }

    // A Filter Error aborts the cycle in kube-scheduler.
    for (const auto& r : filtered.rejections) {
      if (r.code != SCHEDPLUG_ERROR) continue;
      result.status = "error";
      result.reason = "plugin \"" + profile.filters[r.plugin]->name() +
                      "\" returned Error on node \"" +
                      states_[r.node].node->data.name +
                      "\": " + filtered.reasons[r.reason] +
                      "; kube-scheduler aborts the pod's scheduling cycle "
                      "and retries it later";
      if (explain) result.explain = std::move(details);
      return result;
    }
    if (feasible.empty()) {
      result.status = "unschedulable";
      result.reason = fit_error(states_.size(), filtered);
      if (explain) result.explain = std::move(details);
      return result;
    }

    std::vector<int64_t> totals(feasible.size(), 0);
    if (feasible.size() > 1) {
      // kube-scheduler scores only when more than one node is feasible.
      result.scored = true;
      std::vector<const schedplug_node*> nodes;
      nodes.reserve(feasible.size());
      for (size_t i : feasible) nodes.push_back(views_[i]);
      const host::ScoreOutcome scored = host::run_scores(
          profile.scorers, model.view(), nodes, pool_, Deadline::never(),
          {.plugin_deadlines = {},
           .applies = score_applies,
           .keep_raw_scores = true});
      for (size_t p = 0; p < profile.scorers.size(); ++p) {
        const host::PluginScoreOutcome& o = scored.plugins[p];
        if (!o.error.empty()) {
          result.status = "error";
          result.reason = "plugin \"" + profile.scorers[p]->name() +
                          "\" failed to score: " + o.error +
                          "; kube-scheduler fails the pod's scheduling "
                          "cycle and retries it later";
          if (explain) result.explain = std::move(details);
          return result;
        }
      }
      // kube-scheduler's total, by the SDK's rule (the test kit's too):
      // weight x normalized score summed over the Score plugins; a plugin
      // that skipped the pod adds nothing.
      const std::vector<int64_t> weights64(weights.begin(), weights.end());
      std::vector<int64_t> normalized(profile.scorers.size(), 0);
      for (size_t k = 0; k < feasible.size(); ++k) {
        for (size_t p = 0; p < profile.scorers.size(); ++p) {
          const host::PluginScoreOutcome& o = scored.plugins[p];
          normalized[p] = o.skipped ? 0 : o.scores[k];
        }
        totals[k] = schedplug::runtime::weighted_sum(normalized, weights64);
      }
      if (explain) {
        for (size_t k = 0; k < feasible.size(); ++k) {
          NodeExplain& d = details[feasible[k]];
          d.scored = true;
          d.total = totals[k];
          for (size_t p = 0; p < profile.scorers.size(); ++p) {
            const host::PluginScoreOutcome& o = scored.plugins[p];
            ExplainScoreCell cell;
            cell.skipped = o.skipped;
            if (!o.skipped) {
              cell.raw = k < o.raw.size() ? o.raw[k] : 0;
              cell.normalized = o.scores[k];
            }
            d.scores.push_back(cell);
          }
        }
      }
    }
    const int64_t best = *std::max_element(totals.begin(), totals.end());
    for (size_t k = 0; k < feasible.size(); ++k) {
      if (totals[k] == best) result.top.push_back(feasible[k]);
    }
    result.score = best;
    result.status = "placed";
    // The first of a tie (in the dump's node order) takes the pod, so the
    // pods after it see its load.
    NodeState& chosen = states_[result.top.front()];
    chosen.add(pod);
    chosen.rebuild(data_);
    views_[result.top.front()] = &chosen.model->view();
    if (explain) result.explain = std::move(details);
    return result;
  }

  const std::string& node_name(size_t i) const {
    return states_[i].node->data.name;
  }
  const std::vector<int>& weights(size_t profile) const {
    return weights_[profile];
  }

 private:
  const host::CreatedPlugins& plugins_;
  std::vector<std::vector<int>> weights_;
  host::ThreadPool& pool_;
  uint64_t data_ = 0;  // SCHEDPLUG_DATA_* bits some plugin declared
  std::vector<NodeState> states_;
  std::vector<const schedplug_node*> views_;
  std::unordered_map<std::string, size_t> by_name_;
};

// The pod's rows in the layout `schedplug explain` shares.
ExplainTable explain_table(const PodResult& r, const Simulation& sim) {
  const ProfilePlugins& profile = *r.profile;
  ExplainTable table;
  for (const PluginInstance* p : profile.filters)
    table.filters.push_back(p->name());
  for (const PluginInstance* p : profile.scorers)
    table.scorers.push_back(p->name());
  table.weights = sim.weights(r.profile_index);
  for (const NodeExplain& d : *r.explain) {
    ExplainRow row;
    row.node = sim.node_name(d.node);
    row.feasible = d.feasible;
    row.rejected_by = d.rejected_by;
    row.filters = d.filters;
    row.scored = d.scored;
    row.scores = d.scores;
    row.total = d.total;
    if (!r.top.empty() && r.top.front() == d.node) {
      row.mark = ExplainRow::Mark::kChosen;
    } else if (std::find(r.top.begin(), r.top.end(), d.node) != r.top.end()) {
      row.mark = ExplainRow::Mark::kTied;
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

int bad_input(std::ostream& err, const std::vector<std::string>& problems) {
  for (const auto& p : problems) err << "error: " << p << "\n";
  return kSimulateBadInput;
}

}  // namespace

int simulate_native(const SimulateOptions& options,
                    const std::vector<KubeNode>& nodes,
                    const std::vector<KubePod>& pods,
                    const std::vector<const KubePod*>& pending,
                    const std::set<const KubePod*>& explain,
                    SimulationReport& report, std::ostream& err) {
  // The configuration and plugins exactly as schedplug-host takes them
  // (the same start-up check, the instances created with their args).
  host::StartupCheck check;
  try {
    check = host::run_startup_check(
        {.config = options.config, .plugins = options.plugins, .create = true});
  } catch (const host::LoadError& e) {
    return bad_input(err, {e.what()});
  }
  if (check.has_errors()) {
    for (const auto& d : check.diagnostics) {
      if (d.severity == host::Severity::kError)
        err << "error: " << d.message << "\n";
    }
    err << "error: schedplug-host would refuse to start with "
        << options.config.string() << " and the plugins in "
        << options.plugins.string()
        << "; fix the problems above (`schedplug check` reports the same)\n";
    return kSimulateBadInput;
  }
  const std::vector<host::ResolvedProfile>& profiles = check.profiles;
  std::unique_ptr<host::CreatedPlugins> created;
  try {
    created = host::CreatedPlugins::create(profiles, check.created.get());
  } catch (const host::CreateError& e) {
    return bad_input(err, {e.what()});
  }
  // The host calls every refresh hook once at start-up, before it serves.
  for (const ProfilePlugins& p : created->profiles()) {
    for (PluginInstance* instance : p.plugins) {
      const host::Verdict v = instance->refresh();
      if (!v.ok()) {
        err << "warning: profile \"" << p.scheduler_name << "\": plugin \""
            << instance->name() << "\" failed its first refresh: " << v.reason
            << "\n";
      }
    }
  }
  std::vector<std::vector<int>> weights;
  for (const host::ResolvedProfile& p : profiles) {
    std::vector<int> w;
    for (const host::ResolvedPlugin& s : p.scorers) w.push_back(s.weight);
    weights.push_back(std::move(w));
  }

  host::ThreadPool pool(host::ThreadPool::default_workers());
  Simulation sim(*created, weights, nodes, pool);
  sim.bind_existing(pods);
  for (size_t i = 0; i < created->profiles().size(); ++i) {
    const ProfilePlugins& p = created->profiles()[i];
    SimulatedProfile sp;
    sp.name = p.scheduler_name;
    for (const PluginInstance* f : p.filters) sp.filters.push_back(f->name());
    for (const PluginInstance* s : p.scorers) sp.scorers.push_back(s->name());
    sp.weights = weights[i];
    report.profiles.push_back(std::move(sp));
  }
  for (const KubePod* p : pending) {
    const PodResult r = sim.schedule(*p, explain.count(p) > 0);
    SimulatedPod s;
    s.pod = p;
    s.status = r.status;
    if (r.profile != nullptr) s.profile = r.profile->scheduler_name;
    for (size_t n : r.top) s.top.push_back(sim.node_name(n));
    s.score = r.score;
    s.scored = r.scored;
    s.feasible = r.feasible;
    s.reason = r.reason;
    if (r.explain) s.explain = explain_table(r, sim);
    report.pods.push_back(std::move(s));
  }
  return 0;
}

}  // namespace schedplug::tools
