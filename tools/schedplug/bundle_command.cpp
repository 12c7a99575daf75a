#include "tools/schedplug/bundle_command.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "host/loader/plugin_file_check.hpp"
#include "host/loader/plugin_library.hpp"
#include "tools/schedplug/child_process.hpp"
#include "tools/schedplug/elf_sections.hpp"

extern char** environ;

namespace schedplug::tools {
namespace {

namespace fs = std::filesystem;

// A failure of the command as a whole: its message and exit status.
struct BundleFailure {
  int exit_code;
  std::string message;
};

std::vector<fs::path> plugin_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw BundleFailure{2, dir.string() +
                               " is not a readable directory: name the "
                               "directory that holds the plugin .so files"};
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code status_ec;
    // is_regular_file() follows symlinks, as the host's loader does.
    if (entry.path().extension() == ".so" &&
        fs::is_regular_file(entry.path(), status_ec)) {
      files.push_back(entry.path());
    }
  }
  if (ec) {
    throw BundleFailure{2, "cannot list " + dir.string() + ": " + ec.message()};
  }
  if (files.empty()) {
    throw BundleFailure{2, "no .so files in " + dir.string() +
                               ": build the plugins first, or name the "
                               "directory that holds them"};
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Kubernetes' rule for ConfigMap keys (IsConfigMapKey).
std::string configmap_key_problem(const std::string& key) {
  static const std::regex valid("[-._a-zA-Z0-9]+");
  if (key.size() > 253 || !std::regex_match(key, valid)) {
    return key +
           " cannot be a ConfigMap key (letters, digits, '-', '_' and '.', "
           "at most 253): rename the file, or ship the bundle as an image "
           "volume";
  }
  return {};
}

// Creates `out`, or checks that it is an empty directory: the bundle is
// the whole directory, so nothing else may be in it.
void prepare_out(const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec)) {
      throw BundleFailure{2, out.string() +
                                 " exists and is not a directory: name a new "
                                 "or empty directory with -o"};
    }
    if (!fs::is_empty(out, ec)) {
      throw BundleFailure{
          2, out.string() +
                 " is not empty: a bundle is the whole directory, so name a "
                 "new or empty one with -o (or remove this one first)"};
    }
    return;
  }
  fs::create_directories(out, ec);
  if (ec) {
    throw BundleFailure{2,
                        "cannot create " + out.string() + ": " + ec.message()};
  }
}

// `strip --strip-unneeded -o DST SRC`, the same command the image build
// used before this one existed, so digests stay comparable.
void strip_copy(const fs::path& src, const fs::path& dst) {
  std::vector<std::string> args = {"strip", "--strip-unneeded", "-o",
                                   dst.string(), src.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc =
      ::posix_spawnp(&pid, "strip", nullptr, nullptr, argv.data(), environ);
  if (rc != 0) {
    throw BundleFailure{
        2, std::string("cannot run strip (") + std::strerror(rc) +
               "): install binutils, or pass --no-strip to bundle the files "
               "as they are"};
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw BundleFailure{1, "strip failed on " + src.string() +
                               " (see its message above): is it an ELF "
                               "shared object?"};
  }
  fs::permissions(dst, fs::perms::owner_read | fs::perms::owner_write |
                           fs::perms::group_read | fs::perms::others_read);
}

void write_file(const fs::path& file, const std::string& text) {
  std::ofstream o(file, std::ios::binary | std::ios::trunc);
  o << text;
  if (!o.flush()) {
    throw BundleFailure{2, "cannot write " + file.string()};
  }
}

std::string human_size(uint64_t bytes) {
  std::ostringstream s;
  if (bytes < 1024) {
    s << bytes << " B";
  } else if (bytes < 1024 * 1024) {
    s << std::fixed << std::setprecision(1) << double(bytes) / 1024 << " KiB";
  } else {
    s << std::fixed << std::setprecision(1) << double(bytes) / (1024 * 1024)
      << " MiB";
  }
  return s.str();
}

struct Entry {
  std::string file;
  std::shared_ptr<host::PluginLibrary> lib;
  uint64_t size = 0;
  std::string sha256;
};

int bundle(const BundleOptions& options, std::ostream& out, std::ostream& err) {
  const std::vector<fs::path> sources = plugin_files(options.plugins);
  std::vector<std::string> problems;
  std::vector<std::string> not_configmap;  // why it cannot be a ConfigMap
  for (const fs::path& src : sources) {
    std::string p = configmap_key_problem(src.filename().string());
    if (!p.empty()) not_configmap.push_back(std::move(p));
  }
  prepare_out(options.out);

  std::vector<std::string> warnings;
  for (const fs::path& src : sources) {
    const fs::path dst = options.out / src.filename();
    if (options.strip) {
      strip_copy(src, dst);
    } else {
      fs::copy_file(src, dst);
    }
    std::vector<std::string> extra;
    try {
      extra = unstripped_sections(dst);
    } catch (const std::exception& e) {
      problems.emplace_back(e.what());
      continue;
    }
    if (!extra.empty()) {
      std::string names;
      for (const auto& n : extra) names += (names.empty() ? "" : ", ") + n;
      warnings.push_back(src.filename().string() + " is not stripped (" +
                         names + "): it ships bytes the host never reads; " +
                         "drop --no-strip");
    }
  }
  // The host's own loader and checks, on the very files that ship.
  const host::LoadResult loaded = host::load_plugin_directory(options.out);
  // The messages name the copies, which go: name the files bundled.
  const std::string copies = (options.out / "").string();
  const std::string originals = (options.plugins / "").string();
  for (const auto& p : loaded.problems) {
    std::string message = p.message;
    for (size_t at = message.find(copies); at != std::string::npos;
         at = message.find(copies, at + originals.size())) {
      message.replace(at, copies.size(), originals);
    }
    problems.push_back(std::move(message));
  }
  for (const auto& w : warnings) err << "warning: " << w << "\n";
  if (!problems.empty()) {
    for (const auto& p : problems) err << "error: " << p << "\n";
    throw BundleFailure{1, std::to_string(problems.size()) +
                               " plugin file(s) cannot ship (see above); "
                               "nothing was written"};
  }

  std::vector<Entry> entries;
  for (const auto& lib : loaded.plugins) {
    Entry e;
    e.file = lib->file().filename().string();
    e.lib = lib;
    e.size = fs::file_size(lib->file());
    e.sha256 = host::file_sha256(lib->file());
    entries.push_back(std::move(e));
  }
  nlohmann::ordered_json manifest;
  manifest["schemaVersion"] = kBundleSchemaVersion;
  manifest["plugins"] = nlohmann::ordered_json::array();
  std::string sums;
  for (const Entry& e : entries) {
    nlohmann::ordered_json p;
    p["file"] = e.file;
    p["name"] = e.lib->name();
    p["version"] = e.lib->version();
    p["abiVersion"] = e.lib->abi_version();
    p["size"] = e.size;
    p["sha256"] = e.sha256;
    manifest["plugins"].push_back(std::move(p));
    sums += e.sha256 + "  " + e.file + "\n";
  }
  const std::string manifest_text =
      manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
      "\n";
  write_file(options.out / "manifest.json", manifest_text);
  write_file(options.out / "SHA256SUMS", sums);

  uint64_t configmap_bytes = std::string("manifest.json").size() +
                             manifest_text.size() +
                             std::string("SHA256SUMS").size() + sums.size();
  for (const Entry& e : entries) configmap_bytes += e.file.size() + e.size;
  if (configmap_bytes > kConfigMapLimitBytes) {
    not_configmap.push_back("its files take " + human_size(configmap_bytes) +
                            " and a ConfigMap holds at most 1 MiB");
  }
  const bool fits = not_configmap.empty();

  if (options.json) {
    nlohmann::ordered_json j;
    j["out"] = options.out.string();
    j["stripped"] = options.strip;
    j["manifest"] = manifest;
    j["configMapBytes"] = configmap_bytes;
    j["fitsConfigMap"] = fits;
    j["notConfigMap"] = not_configmap;
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return 0;
  }

  const std::string dir = options.out.string();
  out << "bundled " << entries.size() << " plugin(s) from "
      << options.plugins.string() << " into " << dir
      << (options.strip ? " (stripped)" : "") << ":\n";
  out << "  " << std::left << std::setw(24) << "FILE" << std::setw(20) << "NAME"
      << std::setw(10) << "VERSION" << std::setw(5) << "ABI"
      << "SIZE\n";
  for (const Entry& e : entries) {
    out << "  " << std::left << std::setw(24) << e.file << std::setw(20)
        << e.lib->name() << std::setw(10) << e.lib->version() << std::setw(5)
        << e.lib->abi_version() << human_size(e.size) << "\n";
  }
  out << "  and manifest.json (names, versions, sizes, SHA-256s) and "
         "SHA256SUMS (for schedplug-host --plugin-sha256)\n\n";
  const std::string cm =
      "kubectl create configmap " + options.configmap_name + " -n " +
      options.k8s_namespace + " --from-file=" + dir +
      "/ --dry-run=client -o yaml > " + "plugins-configmap.yaml";
  if (fits) {
    out << "As a ConfigMap (" << human_size(configmap_bytes)
        << " of the 1 MiB a ConfigMap holds):\n"
        << "  " << cm << "\n"
        // Server-side: a client-side apply keeps the whole ConfigMap in an
        // annotation, which may hold only 256 KiB.
        << "  kubectl apply --server-side -f plugins-configmap.yaml\n"
        << "  chart values: plugins.source=configMap, plugins.configMap.name="
        << options.configmap_name << "\n\n";
  } else {
    out << "Not as a ConfigMap:\n";
    for (const auto& why : not_configmap) out << "  " << why << "\n";
    out << "so ship it as an image volume.\n\n";
  }
  out << "As an image volume (Kubernetes 1.35 or later, or the ImageVolume "
         "feature gate on 1.33 and 1.34):\n"
      << "  SCHEDPLUG_PLUGIN_DIR=" << dir << " deploy/build-images.sh\n"
      << "  push build/images/schedplug-plugins.oci.tar to your registry\n"
      << "  chart values: plugins.source=image, plugins.image.reference="
         "REGISTRY/schedplug-plugins@sha256:DIGEST\n";
  return 0;
}

}  // namespace

int run_bundle(const BundleOptions& options, std::chrono::seconds timeout,
               std::ostream& out, std::ostream& err) {
  std::error_code ec;
  const bool out_existed = fs::exists(options.out, ec);
  const bool out_was_empty = out_existed && fs::is_directory(options.out, ec) &&
                             fs::is_empty(options.out, ec);
  // Plugins run code when loaded: in a child process, which may die.
  const int code = run_in_child(
      [&] {
        try {
          return bundle(options, out, err);
        } catch (const BundleFailure& f) {
          err << "error: " << f.message << "\n";
          return f.exit_code;
        } catch (const std::exception& e) {
          err << "error: bundling " << options.plugins.string() << " into "
              << options.out.string() << ": " << e.what() << "\n";
          return 2;
        }
      },
      timeout, err);
  // A half bundle must not be shipped by mistake: what the run wrote goes
  // (a directory that was not empty was refused before any write).
  if (code != 0) {
    if (!out_existed) {
      fs::remove_all(options.out, ec);
    } else if (out_was_empty) {
      for (const auto& entry : fs::directory_iterator(options.out, ec)) {
        fs::remove_all(entry.path(), ec);
      }
    }
  }
  return code;
}

}  // namespace schedplug::tools
