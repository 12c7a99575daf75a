// `schedplug explain POD [--listen ADDR] [--json] [--timeout S]
//  [--tls-ca FILE [--tls-cert FILE --tls-key FILE]]`
//
// Asks a running schedplug-host what it kept of the pod's recent
// scheduling cycles (its Explain call) and prints them: per node, every
// native plugin's verdict with its reason, raw and normalized scores, the
// node kube-scheduler reserved, and each plugin's hook times, in the
// layout of `simulate --explain` (docs/explain.md).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

namespace schedplug::tools {

struct ExplainOptions {
  std::string pod;  // namespace/name or uid
  std::string listen = "unix:///run/schedplug/host.sock";
  bool json = false;
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
