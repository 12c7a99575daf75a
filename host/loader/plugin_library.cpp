#include "host/loader/plugin_library.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <map>
#include <system_error>

#include <boost/dll/shared_library.hpp>

#include "host/loader/plugin_file_check.hpp"

namespace schedplug::host {
namespace {

// The size of the descriptor as ABI version 1 first defined it. Later v1
// headers may append fields (the host then reads only what it knows), but a
// descriptor smaller than this lacks fields every v1 host relies on.
constexpr std::size_t kV1DescriptorSize =
    offsetof(schedplug_plugin, events) + sizeof(uint64_t);

std::string quoted(const std::filesystem::path& p) { return p.string(); }

// Boost.DLL reports dlopen's reason as
//   "... (dlerror system message: <path>: <text>): <errno text>";
// we show only dlerror's text, without the path we print anyway.
std::string dlerror_text(const std::filesystem::path& file,
                         const std::string& boost_message) {
  const std::string marker = "dlerror system message: ";
  auto at = boost_message.find(marker);
  if (at == std::string::npos) return boost_message;
  std::string text = boost_message.substr(at + marker.size());
  auto end = text.rfind("): ");
  if (end != std::string::npos) {
    text.resize(end);
  } else if (!text.empty() && text.back() == ')') {
    text.pop_back();
  }
  const std::string prefix = file.string() + ": ";
  if (text.starts_with(prefix)) text.erase(0, prefix.size());
  return text;
}

// A likely intended UpperCamelCase spelling of a bad name, e.g.
// "hw_encrypt" and "hwEncrypt" -> "HwEncrypt". Empty when none is obvious.
std::string upper_camel_case_of(const std::string& name) {
  std::string out;
  bool upper_next = true;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) {
      upper_next = true;
      continue;
    }
    if (upper_next && std::isalpha(static_cast<unsigned char>(c)) != 0) {
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    upper_next = false;
    out.push_back(c);
  }
  return is_upper_camel_case(out) ? out : std::string();
}

[[noreturn]] void fail(const std::filesystem::path& file,
                       const std::string& what) {
  throw LoadError(quoted(file) + ": " + what);
}

// The ABI checks (sdk/include/schedplug/plugin.h) on a descriptor already
// copied into a host-sized struct. The order matters only for which message a
// plugin with several problems sees first.
void validate_descriptor(const std::filesystem::path& file,
                         const schedplug_plugin& d) {
  if (d.name == nullptr || d.name[0] == '\0') {
    fail(file,
         "the plugin reports an empty name; set the descriptor's `name` to "
         "the UpperCamelCase name profiles enable, e.g. \"HwEncrypt\"");
  }
  const std::string name = d.name;
  if (!is_upper_camel_case(name)) {
    std::string hint = upper_camel_case_of(name);
    fail(file, "the plugin name \"" + name +
                   "\" is not UpperCamelCase ([A-Z][A-Za-z0-9]*, as "
                   "kube-scheduler plugin names are); rename it" +
                   (hint.empty() ? std::string() : " (e.g. \"" + hint + "\")") +
                   " and enable it under that name");
  }
  if (d.version == nullptr || d.version[0] == '\0') {
    fail(file, "plugin \"" + name +
                   "\" reports no version string; set the descriptor's "
                   "`version`, e.g. \"1.0.0\"");
  }
  if (d.create == nullptr) {
    fail(file, "plugin \"" + name +
                   "\" has no create() hook; every plugin must set `create`");
  }
  if (d.normalize_score != nullptr && d.score == nullptr) {
    fail(file, "plugin \"" + name +
                   "\" implements NormalizeScore but not Score; set `score` "
                   "too, or remove `normalize_score`");
  }
  const auto policy = static_cast<uint32_t>(d.normalize_policy);
  if (policy > SCHEDPLUG_NORMALIZE_REVERSE) {
    fail(file, "plugin \"" + name + "\" declares normalize_policy " +
                   std::to_string(policy) +
                   ", which is not one of NONE (0), LINEAR (1), REVERSE (2)");
  }
  if (d.normalize_score != nullptr &&
      d.normalize_policy != SCHEDPLUG_NORMALIZE_NONE) {
    fail(file, "plugin \"" + name +
                   "\" sets both normalize_score and a normalize_policy; "
                   "use one: drop normalize_score or set the policy to "
                   "SCHEDPLUG_NORMALIZE_NONE");
  }
  if (d.refresh != nullptr && d.refresh_period_ms == 0) {
    fail(file, "plugin \"" + name +
                   "\" has a refresh() hook but refresh_period_ms is 0; set "
                   "how often the host should call it");
  }
}

}  // namespace

struct PluginLibrary::Handle {
  boost::dll::shared_library library;
};

PluginLibrary::~PluginLibrary() = default;

bool is_upper_camel_case(const std::string& name) {
  if (name.empty() || name[0] < 'A' || name[0] > 'Z') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9');
  });
}

std::shared_ptr<PluginLibrary> load_plugin_file(
    const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    fail(file, "no such file; check the path (a plugin is a .so file)");
  }
  if (!std::filesystem::is_regular_file(file, ec)) {
    fail(file, "not a regular file; a plugin is a .so file");
  }
  // Ownership, mode and pinned digest: dlopen runs the file's code.
  if (std::string problem = check_plugin_file(file); !problem.empty()) {
    fail(file, problem);
  }
  if (plugin_file_policy().before_dlopen) {
    plugin_file_policy().before_dlopen(file);
  }

  auto handle = std::make_unique<PluginLibrary::Handle>();
  try {
    handle->library =
        boost::dll::shared_library(file, boost::dll::load_mode::rtld_now |
                                             boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    fail(file, "not a shared object the host can load (dlopen says: " +
                   dlerror_text(file, e.what()) +
                   "); build the plugin as a shared library (add_library(... "
                   "MODULE) or -shared -fPIC) for this platform, with every "
                   "symbol it needs available");
  }

  if (!handle->library.has(SCHEDPLUG_ENTRY_SYMBOL)) {
    fail(file, std::string("exports no `") + SCHEDPLUG_ENTRY_SYMBOL +
                   "` function, so it is not a schedplug plugin; define `" +
                   "SCHEDPLUG_EXPORT const schedplug_plugin* " +
                   SCHEDPLUG_ENTRY_SYMBOL +
                   "(void)` with C linkage (extern \"C\" in C++)");
  }

  const schedplug_plugin* raw = nullptr;
  try {
    auto& entry =
        handle->library.get<const schedplug_plugin*()>(SCHEDPLUG_ENTRY_SYMBOL);
    raw = entry();
  } catch (const std::exception& e) {
    fail(file, std::string("`") + SCHEDPLUG_ENTRY_SYMBOL +
                   "()` threw an exception (" + e.what() +
                   "); it must only return its static descriptor");
  } catch (...) {
    fail(file, std::string("`") + SCHEDPLUG_ENTRY_SYMBOL +
                   "()` threw an exception; it must only return its static "
                   "descriptor");
  }
  if (raw == nullptr) {
    fail(file, std::string("`") + SCHEDPLUG_ENTRY_SYMBOL +
                   "()` returned NULL; it must return a pointer to the "
                   "plugin's static descriptor");
  }

  // Version first: nothing else in the descriptor is trusted before this.
  if (raw->abi_version != SCHEDPLUG_ABI_VERSION) {
    fail(file, "built for schedplug ABI version " +
                   std::to_string(raw->abi_version) +
                   ", this host speaks version " +
                   std::to_string(SCHEDPLUG_ABI_VERSION) +
                   "; rebuild the plugin against this host's SDK");
  }
  if (raw->struct_size < kV1DescriptorSize) {
    fail(file, "the descriptor is " + std::to_string(raw->struct_size) +
                   " bytes, smaller than the " +
                   std::to_string(kV1DescriptorSize) +
                   " bytes of ABI version 1's schedplug_plugin; set "
                   "struct_size to sizeof(schedplug_plugin) and rebuild "
                   "against this host's SDK");
  }

  auto library = std::shared_ptr<PluginLibrary>(new PluginLibrary());
  // Only the fields both sides know: a newer v1 plugin may have appended
  // fields this host ignores; an older one leaves ours zero.
  std::memcpy(
      &library->descriptor_, raw,
      std::min<std::size_t>(raw->struct_size, sizeof(schedplug_plugin)));
  validate_descriptor(file, library->descriptor_);

  library->handle_ = std::move(handle);
  library->file_ = file;
  library->name_ = library->descriptor_.name;
  library->version_ = library->descriptor_.version;
  return library;
}

LoadResult load_plugin_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw LoadError(quoted(dir) +
                    ": not a readable directory; --plugins must name the "
                    "directory that holds the plugin .so files");
  }
  std::vector<std::filesystem::path> files;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    throw LoadError(quoted(dir) + ": cannot list the directory (" +
                    ec.message() + ")");
  }
  for (const auto& entry : it) {
    // is_regular_file() follows symlinks: a ConfigMap volume exposes each
    // key as a symlink into its ..data directory.
    std::error_code status_ec;
    if (entry.path().extension() == ".so" &&
        std::filesystem::is_regular_file(entry.path(), status_ec)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());

  LoadResult result;
  std::vector<std::shared_ptr<PluginLibrary>> loaded;
  for (const auto& file : files) {
    try {
      loaded.push_back(load_plugin_file(file));
    } catch (const LoadError& e) {
      result.problems.push_back({file, e.what()});
    }
  }

  // A name reported by two files is ambiguous: neither is used, so a
  // profile never silently runs the wrong one.
  std::map<std::string, std::vector<std::shared_ptr<PluginLibrary>>> by_name;
  for (const auto& lib : loaded) by_name[lib->name()].push_back(lib);
  for (const auto& lib : loaded) {
    const auto& same = by_name[lib->name()];
    if (same.size() == 1) {
      result.plugins.push_back(lib);
    } else if (same.front() == lib) {
      std::vector<std::string> others;
      for (std::size_t i = 1; i < same.size(); ++i) {
        others.push_back(quoted(same[i]->file()));
      }
      std::string others_list;
      for (std::size_t i = 0; i < others.size(); ++i) {
        if (i > 0) others_list += i + 1 == others.size() ? " and " : ", ";
        others_list += others[i];
      }
      result.problems.push_back(
          {lib->file(), quoted(lib->file()) + ": plugin name \"" + lib->name() +
                            "\" is also reported by " + others_list +
                            "; names must be unique, so none of these files "
                            "is used; remove or rename all but one"});
    }
  }
  return result;
}

}  // namespace schedplug::host
