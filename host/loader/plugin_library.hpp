// Loading plugin shared objects and validating their descriptors.
//
// Every .so is opened with RTLD_NOW | RTLD_LOCAL (through Boost.DLL), so a
// missing symbol fails here rather than on the hot path, and two plugins
// cannot clash. The descriptor is checked (ABI version first, then size,
// name, capabilities) before any hook is called.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "schedplug/plugin.h"

namespace schedplug::host {

// A loaded, validated plugin library. Keeps the .so loaded while any
// reference exists. Thread-safe to share.
class PluginLibrary {
 public:
  ~PluginLibrary();
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const std::filesystem::path& file() const { return file_; }
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  uint32_t abi_version() const { return descriptor_.abi_version; }
  // Lowercase hex SHA-256 of the file as loaded (the host's identity and
  // the Handshake's PluginInfo.sha256 name the build by it).
  const std::string& sha256() const { return sha256_; }

  // The plugin's descriptor, copied into a zero-filled struct of this
  // host's size: fields the plugin's (older) header lacks read as 0/NULL.
  const schedplug_plugin& descriptor() const { return descriptor_; }

  bool has_filter() const { return descriptor_.filter != nullptr; }
  bool has_score() const { return descriptor_.score != nullptr; }
  bool has_refresh() const { return descriptor_.refresh != nullptr; }
  // Its own normalize_score: only the host can normalize its scores.
  bool has_normalize_score() const {
    return descriptor_.normalize_score != nullptr;
  }
  // The v1.6 hooks (zero for a descriptor too small to hold them).
  // Reserve: kube-scheduler's Reserve and Unreserve go together.
  bool has_reserve() const {
    return descriptor_.reserve != nullptr || descriptor_.unreserve != nullptr;
  }
  bool has_permit() const { return descriptor_.permit != nullptr; }
  bool has_pre_bind() const { return descriptor_.pre_bind != nullptr; }
  bool has_pre_enqueue() const { return descriptor_.pre_enqueue != nullptr; }
  // A per-pod gate of its own (pod_begin or applies); without one the
  // host's begin_pod calls nothing of the plugin.
  bool has_gate() const {
    return descriptor_.pod_begin != nullptr || descriptor_.applies != nullptr;
  }

 private:
  friend std::shared_ptr<PluginLibrary> load_plugin_file(
      const std::filesystem::path& file,
      std::span<const std::shared_ptr<PluginLibrary>> loaded_before);
  PluginLibrary() = default;

  struct Handle;
  std::unique_ptr<Handle> handle_;  // the Boost.DLL shared_library
  std::filesystem::path file_;
  std::string name_;
  std::string version_;
  std::string sha256_;
  schedplug_plugin descriptor_{};
};

// Why one file could not be loaded. what() is a full sentence naming the
// file and what to do.
class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads and validates one file. Throws LoadError.
//
// What gets loaded is a sealed in-memory copy of the file (memfd), so a
// file replaced or rewritten later never changes or aliases loaded code.
// With `loaded_before` (a reload), a file whose path and digest are those
// of one of these libraries is not loaded again: that library is
// returned (after the same file checks).
std::shared_ptr<PluginLibrary> load_plugin_file(
    const std::filesystem::path& file,
    std::span<const std::shared_ptr<PluginLibrary>> loaded_before = {});

struct LoadProblem {
  std::filesystem::path file;
  std::string message;  // the LoadError text
};

struct LoadResult {
  std::vector<std::shared_ptr<PluginLibrary>> plugins;  // sorted by file
  std::vector<LoadProblem> problems;  // one per bad file; includes duplicate
                                      // names (both files named)
};

// Loads every regular file ending in ".so" in `dir` (not recursive,
// following symlinks, as a ConfigMap volume lays them out). A bad file never
// stops the others from loading. Throws LoadError only when `dir` itself
// cannot be read.
LoadResult load_plugin_directory(
    const std::filesystem::path& dir,
    std::span<const std::shared_ptr<PluginLibrary>> loaded_before = {});

// True when `name` is UpperCamelCase: [A-Z][A-Za-z0-9]*.
bool is_upper_camel_case(const std::string& name);

}  // namespace schedplug::host
