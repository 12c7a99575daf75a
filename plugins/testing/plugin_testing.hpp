// Helpers for the sample plugins' tests, on top of the SDK's test kit
// (schedplug/testing.hpp, installed with the SDK): load the BUILT .so with
// the host's own rules, and make pods and nodes in one line. Nothing here
// needs the host's internals, so these tests read like an out-of-tree
// author's.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/testing.hpp"

namespace schedplug::testing {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// Loads `file` and creates an instance with `args_json`. Throws Error with
// the host's message.
inline std::unique_ptr<Plugin> create_plugin(
    const std::filesystem::path& file, const std::string& args_json = "{}") {
  return Plugin::load(file, args_json);
}

inline std::unique_ptr<Pod> make_pod(const KeyValues& annotations,
                                     const KeyValues& labels = {}) {
  auto pod = std::make_unique<Pod>("pod");
  for (const auto& [k, v] : annotations) pod->annotation(k, v);
  for (const auto& [k, v] : labels) pod->label(k, v);
  return pod;
}

inline std::unique_ptr<Node> make_node(std::string name,
                                       const KeyValues& labels = {}) {
  auto node = std::make_unique<Node>(std::move(name));
  for (const auto& [k, v] : labels) node->label(k, v);
  return node;
}

}  // namespace schedplug::testing
