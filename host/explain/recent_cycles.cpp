// The recent cycles (recent_cycles.hpp): CycleSummary's compact form
// and its conversion to ExplainedCycle, and the RecentCycles store. One file:
// merging a cycle's parts, settling scores ahead and the byte cap all read
// CycleSummary's flat buffers, so they change together.
#include "host/explain/recent_cycles.hpp"

#include <algorithm>
#include <utility>

#include "schedplug/runtime.hpp"

namespace schedplug::host {

namespace {

// Pods remembered as dropped, per cycle the store can hold.
constexpr size_t kGonePerCycle = 4;

// kube-scheduler's message for a pod it placed nowhere lists a reason per
// kind of rejection; a longer one is cut here.
constexpr size_t kMaxMessageBytes = 4096;

// `s` cut to at most `n` bytes, not inside a UTF-8 sequence.
std::string clipped_utf8(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string pod_key(const CycleSummary& c) {
  return c.pod_namespace + "/" + c.pod_name;
}

bool same_pod(const CycleSummary& a, const CycleSummary& b) {
  return a.pod_uid == b.pod_uid && a.pod_name == b.pod_name &&
         a.pod_namespace == b.pod_namespace &&
         a.scheduler_name == b.scheduler_name;
}

size_t strings_bytes(const std::vector<std::string>& v) {
  size_t bytes = v.capacity() * sizeof(std::string);
  for (const std::string& s : v) bytes += s.capacity() > 15 ? s.capacity() : 0;
  return bytes;
}

}  // namespace

uint32_t CycleSummary::add_name(std::string_view name) {
  if (!own_names) {
    own_names = table_names ? *table_names : NodeNames();
    table_names.reset();
  }
  return own_names->add(name);
}

void CycleSummary::settle_ahead(std::span<const uint32_t> positions) {
  const size_t per_node = scorers.size();
  std::vector<uint32_t> kept;
  std::vector<int64_t> kept_raw, kept_normalized;
  kept.reserve(positions.size());
  for (uint32_t k : positions) {
    if (k >= scored.size()) continue;
    kept.push_back(scored[k]);
    for (size_t p = 0; p < per_node; ++p) {
      const size_t i = k * per_node + p;
      kept_raw.push_back(i < raw.size() ? raw[i] : 0);
      kept_normalized.push_back(i < normalized.size() ? normalized[i] : 0);
    }
  }
  std::vector<schedplug_node_score> column(kept.size());
  for (size_t p = 0; p < per_node; ++p) {
    const uint32_t policy =
        p < ahead_policy.size() ? ahead_policy[p] : kOwnNormalization;
    const bool failed = p < scorer_errors.size() && !scorer_errors[p].empty();
    if (policy == kOwnNormalization || failed ||
        (p < scorer_skipped.size() && scorer_skipped[p])) {
      continue;
    }
    for (size_t k = 0; k < kept.size(); ++k) {
      column[k].score = kept_raw[k * per_node + p];
    }
    runtime::apply_policy(policy, column);
    for (size_t k = 0; k < kept.size(); ++k) {
      kept_normalized[k * per_node + p] = column[k].score;
    }
  }
  scored = std::move(kept);
  raw = std::move(kept_raw);
  normalized = std::move(kept_normalized);
  scores_ahead = false;
}

size_t CycleSummary::bytes() const {
  return sizeof(CycleSummary) + scheduler_name.size() + pod_namespace.size() +
         pod_name.size() + pod_uid.size() + chosen_node.size() +
         unschedulable_message.size() + strings_bytes(filters) +
         strings_bytes(scorers) + strings_bytes(scorer_errors) +
         strings_bytes(reasons) + strings_bytes(unfinished) +
         (own_names ? own_names->bytes() : 0) +
         rejections.capacity() * sizeof(Rejection) +
         scored.capacity() * sizeof(uint32_t) +
         (raw.capacity() + normalized.capacity()) * sizeof(int64_t) +
         ahead_policy.capacity() * sizeof(uint32_t) +
         timings.capacity() * (sizeof(Timing) + 16);
}

void CycleSummary::to_proto(v1::ExplainedCycle& out) const {
  out.set_scheduler_name(scheduler_name);
  out.set_pod_namespace(pod_namespace);
  out.set_pod_name(pod_name);
  out.set_pod_uid(pod_uid);
  out.set_started_unix_nanos(started_unix_nanos);
  out.set_table_version(table_version);
  for (size_t i = 0; i < filters.size(); ++i) {
    out.add_filters(filters[i]);
    out.add_filter_skipped(i < filter_skipped.size() && filter_skipped[i]);
  }
  for (size_t i = 0; i < scorers.size(); ++i) {
    out.add_scorers(scorers[i]);
    out.add_scorer_skipped(i < scorer_skipped.size() && scorer_skipped[i]);
    out.add_weights(i < weights.size() ? weights[i] : 1);
    out.add_scorer_errors(i < scorer_errors.size() ? scorer_errors[i] : "");
  }
  out.set_nodes_filtered(nodes_filtered);
  out.set_nodes_left_out(nodes_left_out);
  for (const Rejection& r : rejections) {
    v1::ExplainedNode* n = out.add_nodes();
    n->set_node(std::string(name(r.node)));
    n->set_rejected(true);
    n->set_rejected_by(r.plugin);
    n->set_code(static_cast<v1::Code>(r.code));
    if (r.reason < reasons.size()) n->set_reason(reasons[r.reason]);
  }
  const size_t per_node = scorers.size();
  // Scores ahead not settled yet: kube-scheduler's choice of nodes is not
  // known, so none is shown.
  const size_t shown = scores_ahead ? 0 : scored.size();
  for (size_t k = 0; k < shown; ++k) {
    v1::ExplainedNode* n = out.add_nodes();
    n->set_node(std::string(name(scored[k])));
    n->set_scored(true);
    for (size_t p = 0; p < per_node; ++p) {
      const size_t i = k * per_node + p;
      n->add_raw(i < raw.size() ? raw[i] : 0);
      n->add_normalized(i < normalized.size() ? normalized[i] : 0);
    }
  }
  out.set_chosen_node(chosen_node);
  out.set_nodes_rejected(nodes_rejected);
  out.set_unreserved(unreserved);
  out.set_unschedulable(unschedulable);
  out.set_unschedulable_message(unschedulable_message);
  for (const Timing& t : timings) {
    v1::PluginTiming* pt = out.add_timings();
    pt->set_plugin(t.plugin);
    pt->set_hook(t.hook);
    pt->set_nanos(t.nanos);
  }
  for (const std::string& u : unfinished) out.add_unfinished(u);
}

RecentCycles::RecentCycles(RecentCyclesOptions options) : options_(options) {}

void RecentCycles::merge(CycleSummary& c, CycleSummary& part) const {
  if (part.table_version != 0) c.table_version = part.table_version;
  if (c.filters.empty() && !part.filters.empty()) {
    c.filters = std::move(part.filters);
    c.filter_skipped = std::move(part.filter_skipped);
  }
  if (!part.scorers.empty()) {
    // Scores ahead of a FilterNodes call add to those of the cycle's
    // PreFilter; any other score part (a PreScore) replaces what the cycle
    // had.
    const bool adds = part.scores_ahead && c.scores_ahead;
    c.scorers = std::move(part.scorers);
    c.scorer_skipped = std::move(part.scorer_skipped);
    c.weights = std::move(part.weights);
    c.scorer_errors = std::move(part.scorer_errors);
    c.scores_ahead = part.scores_ahead;
    c.ahead_policy = std::move(part.ahead_policy);
    if (!adds) {
      c.scored.clear();
      c.raw.clear();
      c.normalized.clear();
    }
  }
  c.nodes_filtered += part.nodes_filtered;
  c.nodes_rejected += static_cast<uint32_t>(part.rejections.size());
  c.nodes_left_out += part.nodes_left_out;
  const size_t cap = options_.max_nodes_per_cycle;
  auto room = [&] {
    const size_t listed = c.rejections.size() + c.scored.size();
    return listed < cap ? cap - listed : 0;
  };
  // The part's node indices in the cycle's names: the same when both share
  // one table's names (a cycle's parts come from one table version), else
  // appended to the cycle's own list.
  bool same_names = true;
  if (c.rejections.empty() && c.scored.empty()) {
    c.table_names = std::move(part.table_names);
    c.own_names = std::move(part.own_names);
    part.own_names.reset();
  } else {
    same_names =
        c.shared_names() != nullptr && c.shared_names() == part.shared_names();
  }
  auto node_of = [&](uint32_t node) {
    return same_names ? node : c.add_name(part.name(node));
  };
  // Reasons: the part's indices mapped to the cycle's list.
  std::vector<uint32_t> reason_of(part.reasons.size());
  for (size_t i = 0; i < part.reasons.size(); ++i) {
    auto it = std::find(c.reasons.begin(), c.reasons.end(), part.reasons[i]);
    if (it == c.reasons.end()) {
      reason_of[i] = static_cast<uint32_t>(c.reasons.size());
      c.reasons.push_back(std::move(part.reasons[i]));
    } else {
      reason_of[i] = static_cast<uint32_t>(it - c.reasons.begin());
    }
  }
  const size_t take_rejections = std::min(part.rejections.size(), room());
  const size_t part_rejections = part.rejections.size();
  if (c.rejections.empty()) {
    // The usual case, a cycle's first part: its lists become the cycle's
    // (no copy), adjusted in place.
    c.rejections = std::move(part.rejections);
    c.rejections.resize(take_rejections);
    for (CycleSummary::Rejection& r : c.rejections) {
      r.node = node_of(r.node);
      if (r.reason < reason_of.size()) r.reason = reason_of[r.reason];
    }
  } else {
    c.rejections.reserve(c.rejections.size() + take_rejections);
    for (size_t i = 0; i < take_rejections; ++i) {
      CycleSummary::Rejection r = part.rejections[i];
      r.node = node_of(r.node);
      if (r.reason < reason_of.size()) r.reason = reason_of[r.reason];
      c.rejections.push_back(r);
    }
  }
  c.nodes_left_out += static_cast<uint32_t>(part_rejections - take_rejections);
  const size_t per_node = c.scorers.size();
  const size_t take_scored = std::min(part.scored.size(), room());
  const size_t part_scored = part.scored.size();
  const size_t take_scores = take_scored * per_node;
  const size_t had_scores = c.scored.size() * per_node;
  // An empty list stands for zeros: padded when the other side has values.
  auto append_scores = [&](std::vector<int64_t>& into,
                           std::vector<int64_t>& from) {
    if (into.empty() && from.empty()) return;
    if (had_scores == 0) {
      into = std::move(from);
      into.resize(take_scores, 0);
      return;
    }
    into.resize(had_scores, 0);
    const size_t n = std::min(take_scores, from.size());
    into.insert(into.end(), from.begin(),
                from.begin() + static_cast<std::ptrdiff_t>(n));
    into.resize(had_scores + take_scores, 0);
  };
  if (take_scored > 0) {
    append_scores(c.raw, part.raw);
    append_scores(c.normalized, part.normalized);
  }
  if (c.scored.empty()) {
    c.scored = std::move(part.scored);
    c.scored.resize(take_scored);
    if (!same_names) {
      for (uint32_t& node : c.scored) node = node_of(node);
    }
  } else {
    c.scored.reserve(c.scored.size() + take_scored);
    for (size_t k = 0; k < take_scored; ++k) {
      c.scored.push_back(node_of(part.scored[k]));
    }
  }
  c.nodes_left_out += static_cast<uint32_t>(part_scored - take_scored);
  for (CycleSummary::Timing& t : part.timings) {
    auto it = std::find_if(c.timings.begin(), c.timings.end(),
                           [&](const CycleSummary::Timing& have) {
                             return have.plugin == t.plugin &&
                                    std::string_view(have.hook) == t.hook;
                           });
    if (it == c.timings.end()) {
      c.timings.push_back(std::move(t));
    } else {
      it->nanos += t.nanos;
    }
  }
  for (std::string& u : part.unfinished) c.unfinished.push_back(std::move(u));
}

void RecentCycles::hold(const CycleSummary& cycle) {
  const NodeNames* names = cycle.shared_names();
  if (names == nullptr) return;
  if (++names_held_[names] == 1) stats_.bytes += names->bytes();
}

void RecentCycles::release(const CycleSummary& cycle) {
  const NodeNames* names = cycle.shared_names();
  if (names == nullptr) return;
  auto it = names_held_.find(names);
  if (it == names_held_.end()) return;
  if (--it->second == 0) {
    stats_.bytes -= names->bytes();
    names_held_.erase(it);
  }
}

void RecentCycles::drop_oldest(const char* cause) {
  std::shared_ptr<Entry> oldest = std::move(entries_.front());
  entries_.pop_front();
  stats_.bytes -= oldest->bytes;
  release(oldest->cycle);
  if (std::string_view(cause) == "count") {
    ++stats_.dropped_count;
  } else {
    ++stats_.dropped_memory;
  }
  const CycleSummary& c = oldest->cycle;
  const size_t gone_cap =
      std::max<size_t>(options_.max_cycles, 1) * kGonePerCycle;
  for (const std::string& key : {c.pod_uid, pod_key(c)}) {
    if (key.empty()) continue;
    auto [it, added] = gone_.insert_or_assign(key, cause);
    if (added) gone_order_.push_back(key);
  }
  while (gone_order_.size() > gone_cap) {
    gone_.erase(gone_order_.front());
    gone_order_.pop_front();
  }
}

RecentCycles::Stats RecentCycles::add(const std::string& session, bool starts,
                                      CycleSummary part) {
  std::lock_guard lock(mutex_);
  if (!enabled()) return stats_;
  std::shared_ptr<Entry> entry;
  if (!starts) {
    auto it = open_.find(session);
    if (it != open_.end()) entry = it->second.lock();
    if (entry && !same_pod(entry->cycle, part)) entry.reset();
  }
  if (entry) {
    stats_.bytes -= entry->bytes;
    release(entry->cycle);
    merge(entry->cycle, part);
  } else {
    entry = std::make_shared<Entry>();
    entry->session = session;
    CycleSummary& c = entry->cycle;
    c.scheduler_name = std::move(part.scheduler_name);
    c.pod_namespace = std::move(part.pod_namespace);
    c.pod_name = std::move(part.pod_name);
    c.pod_uid = std::move(part.pod_uid);
    c.started_unix_nanos = part.started_unix_nanos;
    merge(c, part);
    entries_.push_back(entry);
    open_[session] = entry;
  }
  entry->bytes = entry->cycle.bytes();
  stats_.bytes += entry->bytes;
  hold(entry->cycle);
  while (entries_.size() > options_.max_cycles) drop_oldest("count");
  // The newest cycle stays even when it alone is over the byte cap.
  while (entries_.size() > 1 && stats_.bytes > options_.max_bytes) {
    drop_oldest("memory");
  }
  // Sessions whose open cycle was dropped.
  for (auto it = open_.begin(); it != open_.end();) {
    it = it->second.expired() ? open_.erase(it) : std::next(it);
  }
  stats_.cycles = entries_.size();
  return stats_;
}

RecentCycles::Entry* RecentCycles::latest(const std::string& pod_uid) {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if ((*it)->cycle.pod_uid == pod_uid) return it->get();
  }
  return nullptr;
}

void RecentCycles::resized(Entry& entry) {
  const size_t bytes = entry.cycle.bytes();
  stats_.bytes = stats_.bytes - entry.bytes + bytes;
  entry.bytes = bytes;
}

void RecentCycles::placed(const std::string& pod_uid, const std::string& node) {
  std::lock_guard lock(mutex_);
  Entry* e = latest(pod_uid);
  if (e == nullptr || !e->cycle.chosen_node.empty()) return;
  e->cycle.chosen_node = node;
  resized(*e);
}

void RecentCycles::unreserved(const std::string& pod_uid,
                              const std::string& node) {
  std::lock_guard lock(mutex_);
  Entry* e = latest(pod_uid);
  if (e == nullptr) return;
  CycleSummary& c = e->cycle;
  // Unreserve may come without a Reserve of the shim's (an earlier Reserve
  // plugin failed): the node was chosen all the same.
  if (c.chosen_node.empty()) c.chosen_node = node;
  if (c.chosen_node != node) return;
  c.unreserved = true;
  resized(*e);
}

void RecentCycles::unschedulable(const std::string& pod_uid,
                                 const std::string& message) {
  std::lock_guard lock(mutex_);
  Entry* e = latest(pod_uid);
  if (e == nullptr) return;
  CycleSummary& c = e->cycle;
  if (!c.chosen_node.empty() && !c.unreserved) return;
  c.unschedulable = true;
  c.unschedulable_message = clipped_utf8(message, kMaxMessageBytes);
  resized(*e);
}

void RecentCycles::scored(const std::string& pod_uid,
                          std::span<const uint32_t> positions) {
  std::lock_guard lock(mutex_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    CycleSummary& c = (*it)->cycle;
    if (c.pod_uid != pod_uid) continue;
    if (!c.scores_ahead) return;
    c.settle_ahead(positions);
    resized(**it);
    return;
  }
}

RecentCycles::Found RecentCycles::find(const std::string& pod) const {
  Found found;
  std::vector<std::shared_ptr<const Entry>> held;
  {
    std::lock_guard lock(mutex_);
    for (const auto& e : entries_) {
      if (e->cycle.pod_uid == pod || pod_key(e->cycle) == pod) {
        // A copy: the entry may still grow after the lock is released.
        held.push_back(std::make_shared<const Entry>(*e));
      }
    }
    if (held.empty()) {
      if (auto it = gone_.find(pod); it != gone_.end())
        found.dropped_by = it->second;
    }
  }
  for (const auto& e : held) e->cycle.to_proto(found.cycles.emplace_back());
  return found;
}

RecentCycles::Stats RecentCycles::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace schedplug::host
