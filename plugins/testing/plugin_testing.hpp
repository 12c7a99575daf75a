// Helpers for the sample plugins' tests: load the BUILT .so through the
// host's own loader and runtime (exactly as schedplug-host does), and make
// pods and nodes in one line.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "host/loader/plugin_library.hpp"
#include "host/model/records.hpp"
#include "host/runtime/plugin_instance.hpp"

namespace schedplug::testing {

// Loads `file` and creates an instance with `args_json`. Throws LoadError or
// CreateError with the host's message.
inline std::unique_ptr<host::PluginInstance> create_plugin(
    const std::filesystem::path& file, const std::string& args_json = "{}") {
  return host::PluginInstance::create(host::load_plugin_file(file), args_json);
}

inline std::unique_ptr<host::PodRecord> make_pod(host::KeyValues annotations,
                                                 host::KeyValues labels = {}) {
  host::PodData d;
  d.namespace_name = "default";
  d.name = "pod";
  d.uid = "uid-1";
  d.annotations = std::move(annotations);
  d.labels = std::move(labels);
  return std::make_unique<host::PodRecord>(std::move(d));
}

inline std::unique_ptr<host::NodeRecord> make_node(
    std::string name, host::KeyValues labels = {}) {
  host::NodeData d;
  d.name = std::move(name);
  d.labels = std::move(labels);
  return std::make_unique<host::NodeRecord>(std::move(d));
}

}  // namespace schedplug::testing
