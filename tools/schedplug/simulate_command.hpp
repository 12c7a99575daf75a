// `schedplug simulate --config FILE --plugins DIR --nodes NODES.yaml
//  --pods PODS.yaml [--explain POD]... [--json] [--native-only]`
//
// Predicts where kube-scheduler puts the pending pods of a `kubectl get
// pods -o yaml` dump on the nodes of a `kubectl get nodes -o yaml` dump:
// by default kube-scheduler itself decides (in-tree plugins and the
// profile's configuration, the native plugins through a schedplug-host
// started in this process: simulate_framework.hpp); with --native-only the
// native plugins alone, in this process (simulate_native.hpp)
// (docs/simulate.md).
#pragma once

#include <chrono>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace schedplug::tools {

struct SimulateOptions {
  std::filesystem::path config;
  std::filesystem::path plugins;
  std::filesystem::path nodes;
  std::filesystem::path pods;
  // Pods ("namespace/name", or "name" when unique) to explain node by node.
  std::vector<std::string> explain;
  bool json = false;
  // Only the native plugins, without kube-scheduler.
  bool native_only = false;
  // kube-scheduler-simulate; empty: find_simulator()'s search.
  std::filesystem::path simulator;
  // What the whole run may take.
  std::chrono::seconds timeout{600};
};

// Exit codes, fit for CI.
inline constexpr int kSimulateAllPlaced = 0;
// Unschedulable, error, or the simulation could not finish.
inline constexpr int kSimulateSomeNotPlaced = 1;
inline constexpr int kSimulateBadInput = 2;

// Prints one line per pending pod (or JSON) to `out`, problems with the
// input to `err`, and returns one of the exit codes above.
int run_simulate(const SimulateOptions& options, std::ostream& out,
                 std::ostream& err);

}  // namespace schedplug::tools
