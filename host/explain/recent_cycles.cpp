#include "host/explain/recent_cycles.hpp"

#include <algorithm>
#include <utility>

namespace schedplug::host {

namespace {

// Pods remembered as dropped, per cycle the store can hold.
constexpr size_t kGonePerCycle = 4;

std::string pod_key(const v1::ExplainedCycle& c) {
  return c.pod_namespace() + "/" + c.pod_name();
}

bool same_pod(const v1::ExplainedCycle& a, const v1::ExplainedCycle& b) {
  return a.pod_uid() == b.pod_uid() && a.pod_name() == b.pod_name() &&
         a.pod_namespace() == b.pod_namespace() &&
         a.scheduler_name() == b.scheduler_name();
}

}  // namespace

size_t record_bytes(const v1::ExplainedCycle& c) {
  size_t bytes = sizeof(v1::ExplainedCycle) + c.pod_namespace().size() +
                 c.pod_name().size() + c.pod_uid().size() +
                 c.scheduler_name().size() + c.chosen_node().size();
  for (const auto& s : c.filters()) bytes += sizeof(std::string) + s.size();
  for (const auto& s : c.scorers()) bytes += sizeof(std::string) + s.size();
  for (const auto& s : c.scorer_errors())
    bytes += sizeof(std::string) + s.size();
  for (const auto& s : c.unfinished()) bytes += sizeof(std::string) + s.size();
  for (const v1::ExplainedNode& n : c.nodes()) {
    bytes += sizeof(v1::ExplainedNode) + n.node().size() + n.reason().size() +
             sizeof(int64_t) *
                 static_cast<size_t>(n.raw_size() + n.normalized_size());
  }
  bytes +=
      static_cast<size_t>(c.timings_size()) * (sizeof(v1::PluginTiming) + 32);
  return bytes;
}

RecentCycles::RecentCycles(RecentCyclesOptions options) : options_(options) {}

void RecentCycles::merge(Entry& entry, v1::ExplainedCycle& part) {
  v1::ExplainedCycle& c = entry.cycle;
  if (part.table_version() != 0) c.set_table_version(part.table_version());
  if (c.filters().empty() && !part.filters().empty()) {
    c.mutable_filters()->Swap(part.mutable_filters());
    c.mutable_filter_skipped()->Swap(part.mutable_filter_skipped());
  }
  if (!part.scorers().empty()) {
    c.mutable_scorers()->Swap(part.mutable_scorers());
    c.mutable_scorer_skipped()->Swap(part.mutable_scorer_skipped());
    c.mutable_weights()->Swap(part.mutable_weights());
    c.mutable_scorer_errors()->Swap(part.mutable_scorer_errors());
  }
  c.set_nodes_filtered(c.nodes_filtered() + part.nodes_filtered());
  c.set_nodes_left_out(c.nodes_left_out() + part.nodes_left_out());
  for (v1::ExplainedNode& n : *part.mutable_nodes()) {
    if (static_cast<size_t>(c.nodes_size()) >= options_.max_nodes_per_cycle) {
      c.set_nodes_left_out(c.nodes_left_out() + 1);
      continue;
    }
    *c.add_nodes() = std::move(n);
  }
  for (v1::PluginTiming& t : *part.mutable_timings()) {
    auto same = [&](const v1::PluginTiming& have) {
      return have.plugin() == t.plugin() && have.hook() == t.hook();
    };
    auto it = std::find_if(c.mutable_timings()->begin(),
                           c.mutable_timings()->end(), same);
    if (it == c.mutable_timings()->end()) {
      *c.add_timings() = std::move(t);
    } else {
      it->set_nanos(it->nanos() + t.nanos());
    }
  }
  for (std::string& u : *part.mutable_unfinished()) {
    c.add_unfinished(std::move(u));
  }
}

void RecentCycles::drop_oldest(const char* cause) {
  std::shared_ptr<Entry> oldest = std::move(entries_.front());
  entries_.pop_front();
  stats_.bytes -= oldest->bytes;
  if (std::string(cause) == "count") {
    ++stats_.dropped_count;
  } else {
    ++stats_.dropped_memory;
  }
  const v1::ExplainedCycle& c = oldest->cycle;
  const size_t gone_cap =
      std::max<size_t>(options_.max_cycles, 1) * kGonePerCycle;
  for (const std::string& key : {c.pod_uid(), pod_key(c)}) {
    if (key.empty()) continue;
    auto [it, added] = gone_.insert_or_assign(key, cause);
    if (added) gone_order_.push_back(key);
  }
  while (gone_order_.size() > gone_cap) {
    gone_.erase(gone_order_.front());
    gone_order_.pop_front();
  }
}

RecentCycles::Stats RecentCycles::record(const std::string& session,
                                         bool starts, v1::ExplainedCycle part) {
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
    merge(*entry, part);
  } else {
    entry = std::make_shared<Entry>();
    entry->session = session;
    entry->cycle.set_scheduler_name(part.scheduler_name());
    entry->cycle.set_pod_namespace(part.pod_namespace());
    entry->cycle.set_pod_name(part.pod_name());
    entry->cycle.set_pod_uid(part.pod_uid());
    entry->cycle.set_started_unix_nanos(part.started_unix_nanos());
    merge(*entry, part);
    entries_.push_back(entry);
    open_[session] = entry;
  }
  entry->bytes = record_bytes(entry->cycle);
  stats_.bytes += entry->bytes;
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

void RecentCycles::placed(const std::string& pod_uid, const std::string& node) {
  std::lock_guard lock(mutex_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    v1::ExplainedCycle& c = (*it)->cycle;
    if (c.pod_uid() != pod_uid) continue;
    if (c.chosen_node().empty()) {
      stats_.bytes += node.size();
      (*it)->bytes += node.size();
      c.set_chosen_node(node);
    }
    return;
  }
}

RecentCycles::Found RecentCycles::find(const std::string& pod) const {
  std::lock_guard lock(mutex_);
  Found found;
  for (const auto& e : entries_) {
    const v1::ExplainedCycle& c = e->cycle;
    if (c.pod_uid() == pod || pod_key(c) == pod) found.cycles.push_back(c);
  }
  if (found.cycles.empty()) {
    if (auto it = gone_.find(pod); it != gone_.end()) {
      found.dropped_by = it->second;
    }
  }
  return found;
}

RecentCycles::Stats RecentCycles::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace schedplug::host
