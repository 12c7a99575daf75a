// The observers the app registers on the call pipeline
// (host/pipeline/call_observer.hpp): each turns what the pipeline tells
// into what one feature keeps. Metrics count calls, chains and refusals;
// the recorder (--record) writes every pod call; the recent
// cycles answer Explain; the shadow runner compares candidates with the
// live plugins.
#pragma once

#include "host/explain/recent_cycles.hpp"
#include "host/metrics/host_metrics.hpp"
#include "host/pipeline/call_observer.hpp"
#include "host/record/cycle_recorder.hpp"
#include "host/session/sessions.hpp"
#include "host/shadow/shadow_runner.hpp"

namespace schedplug::host {

class MetricsObserver final : public CallObserver {
 public:
  MetricsObserver(HostMetrics& metrics, const SessionRegistry& sessions)
      : metrics_(metrics), sessions_(sessions) {}
  void session_closed(const Session&, const Session::Released&) override;
  void table_changed(const Session&, const TableDelta&,
                     const AppliedDelta&) override;
  void refused(std::string_view reason) override;
  void handshake_refused(std::string_view reason) override;
  void cycle_began(const PodCycle& cycle) override;
  void chain_ran(const ChainRuns& runs,
                 std::string_view extension_point) override;
  void plugin_unfinished(const std::string& plugin) override;
  void call_ended(const CallEnded& call) override;

 private:
  HostMetrics& metrics_;
  const SessionRegistry& sessions_;
};

class RecordObserver final : public CallObserver {
 public:
  // Tells `recorder` the plugin set serving now (`plugins`, `identity`).
  RecordObserver(CycleRecorder& recorder, const PluginGeneration& plugins,
                 const HostIdentity& identity);
  void plugins_swapped(const PluginGeneration& plugins,
                       const HostIdentity& identity) override;
  void session_opened(const Session& session,
                      const v1::HandshakeRequest& request) override;
  void session_closed(const Session& session,
                      const Session::Released&) override;
  void call_ended(const CallEnded& call) override;

 private:
  CycleRecorder& recorder_;
};

class ExplainObserver final : public CallObserver {
 public:
  // `metrics` may be null.
  ExplainObserver(RecentCycles& recent, HostMetrics* metrics)
      : recent_(recent), metrics_(metrics) {}
  void filters_ran(const FiltersRan& ran) override;
  void scores_ran(const ScoresRan& ran) override;
  void placed(
      const google::protobuf::RepeatedPtrField<v1::Placement>& placed) override;
  bool keeps_raw_scores() const override { return recent_.enabled(); }

 private:
  void store(const Session& session, bool starts, CycleSummary part);

  RecentCycles& recent_;
  HostMetrics* metrics_;
};

class ShadowObserver final : public CallObserver {
 public:
  explicit ShadowObserver(ShadowRunner& runner) : runner_(runner) {}
  void filters_ran(const FiltersRan& ran) override;
  void scores_ran(const ScoresRan& ran) override;
  bool needs_normalized_scores(const ProfilePlugins& profile) const override;

 private:
  ShadowRunner& runner_;
};

}  // namespace schedplug::host
