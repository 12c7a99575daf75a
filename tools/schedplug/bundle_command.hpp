// `schedplug bundle DIR -o OUT`: the plugins of a directory made ready to
// ship (docs/deploy.md): stripped copies, each loaded with the host's own
// checks, a manifest.json and the SHA256SUMS that schedplug-host enforces
// with --plugin-sha256, and the ConfigMap or image-volume steps for them.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>

namespace schedplug::tools {

struct BundleOptions {
  std::filesystem::path plugins;  // the .so files to bundle
  std::filesystem::path out;      // a new or empty directory
  bool strip = true;              // strip --strip-unneeded each copy
  bool json = false;
  std::string configmap_name = "schedplug-plugins";
  std::string k8s_namespace = "kube-system";
};

// Kubernetes refuses a ConfigMap whose keys and values exceed 1 MiB in all
// (binaryData counted as raw bytes).
inline constexpr uint64_t kConfigMapLimitBytes = 1024 * 1024;

// The manifest's format; schedplug-image writes the same into the bundle
// image (deploy/image).
inline constexpr int kBundleSchemaVersion = 1;

// Bundles in a child process (loading runs the plugins' constructors), so
// a plugin that crashes or hangs while loading is an error naming its file.
// Returns the exit status: 0 bundled, 1 a plugin cannot ship (then OUT is
// as it was: removed, or empty again), 2 bad arguments (DIR unreadable or
// without plugins, OUT not empty, strip missing).
int run_bundle(const BundleOptions& options, std::chrono::seconds timeout,
               std::ostream& out, std::ostream& err);

}  // namespace schedplug::tools
