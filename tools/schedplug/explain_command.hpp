// `schedplug explain POD [--listen ADDR] [--nodes] [--json] [--timeout S]
//  [--tls-ca FILE [--tls-cert FILE --tls-key FILE]]`
//
// Asks a running schedplug-host what it kept of the pod's recent
// scheduling cycles (its Explain call) and prints each: what became of it
// (the node kube-scheduler reserved, or that it found none and what its
// filters said), the native filters' verdicts counted by reason, the best
// native scores, and each plugin's hook times; with --nodes also the nodes
// of each reason and every node's verdicts and scores, in the layout of
// `simulate --explain` (docs/explain.md).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

namespace schedplug::tools {

struct ExplainOptions {
  std::string pod;  // namespace/name or uid
  std::string listen = "unix:///run/schedplug/host.sock";
  bool json = false;
  // List the nodes of each reason, and every node's verdicts and scores.
  bool nodes = false;
  double timeout_seconds = 5;
  std::filesystem::path tls_ca;
  std::filesystem::path tls_cert;
  std::filesystem::path tls_key;
};

inline constexpr int kExplainFound = 0;
inline constexpr int kExplainNotHeld = 1;  // the host holds no cycle of it
inline constexpr int kExplainFailed = 2;   // bad arguments, host unreachable

int run_explain(const ExplainOptions& options, std::ostream& out,
                std::ostream& err);

}  // namespace schedplug::tools
