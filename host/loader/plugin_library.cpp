#include "host/loader/plugin_library.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <system_error>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "host/loader/elf_image.hpp"
#include "host/loader/plugin_file_check.hpp"
#include "schedplug/runtime.hpp"

namespace schedplug::host {
namespace {

// A plugin file opened read-only; dlopen loads it as /proc/self/fd/N.
struct OpenFile {
  explicit OpenFile(const std::filesystem::path& file)
      : fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC)),
        error(fd < 0 ? errno : 0) {}
  explicit OpenFile(int owned) : fd(owned), error(0) {}
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  std::filesystem::path proc_path() const {
    return "/proc/self/fd/" + std::to_string(fd);
  }
  int fd;
  int error;
};

// A private, sealed in-memory copy of `source`'s bytes (memfd), which is
// what dlopen loads: a plugin file replaced in place (same inode) or by
// rename (same path) cannot change or alias code that is already loaded,
// and each load of a file gets its own copy of the library's globals.
// Returns -1 with errno set when the kernel offers no memfd.
int private_copy(int source, const std::string& name) {
  struct stat st {};
  if (::fstat(source, &st) != 0) return -1;
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
  const std::string label = "schedplug:" + name;
  int copy =
      ::memfd_create(label.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (copy < 0 && errno == EINVAL) {  // a kernel before MFD_EXEC (6.3)
    copy = ::memfd_create(label.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  }
  if (copy < 0) return -1;
  off_t offset = 0;
  while (offset < st.st_size) {
    const ssize_t n = ::sendfile(copy, source, &offset,
                                 static_cast<size_t>(st.st_size - offset));
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(copy);
      errno = error;
      return -1;
    }
  }
  ::fcntl(copy, F_ADD_SEALS,
          F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return copy;
}

std::string quoted(const std::filesystem::path& p) { return p.string(); }

// Boost.DLL reports dlopen's reason as
//   "... (dlerror system message: <path>: <text>): <errno text>";
// we show only dlerror's text, without the path we print anyway.
std::string dlerror_text(const std::filesystem::path& file,
                         const std::string& loaded_as,
                         std::string boost_message) {
  // dlopen names the descriptor's path; the user knows the file's.
  for (size_t at = boost_message.find(loaded_as); at != std::string::npos;
       at = boost_message.find(loaded_as, at + file.string().size())) {
    boost_message.replace(at, loaded_as.size(), file.string());
  }
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

[[noreturn]] void fail(const std::filesystem::path& file,
                       const std::string& what) {
  throw LoadError(quoted(file) + ": " + what);
}

}  // namespace

namespace {

// dlopen matches a path against every name a loaded library was opened by,
// before it compares files: a file loaded twice keeps the second
// /proc/self/fd/N as an alias while it stays loaded. A descriptor number
// that still names a loaded library is therefore kept, on /dev/null, so
// that no other plugin file is opened on it and handed that library; it is
// closed once no loaded library answers to it.
class ReservedDescriptors {
 public:
  // Takes `fd` (a closed library's) over if a loaded library still answers
  // to its path, else closes it; then lets go of numbers no longer named.
  void release(int fd) {
    const std::lock_guard lock(mutex_);
    if (named(fd)) {
      const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null >= 0 && ::dup3(null, fd, O_CLOEXEC) == fd) {
        reserved_.push_back(fd);
      } else {
        ::close(fd);
      }
      if (null >= 0) ::close(null);
    } else {
      ::close(fd);
    }
    std::erase_if(reserved_, [](int r) {
      if (named(r)) return false;
      ::close(r);
      return true;
    });
  }

 private:
  static bool named(int fd) {
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    void* loaded = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (loaded == nullptr) return false;
    ::dlclose(loaded);
    return true;
  }

  std::mutex mutex_;
  std::vector<int> reserved_;
};

ReservedDescriptors& reserved_descriptors() {
  static ReservedDescriptors* reserved = new ReservedDescriptors();
  return *reserved;
}

}  // namespace

struct PluginLibrary::Handle {
  ~Handle() {
    library.unload();
    if (file && file->fd >= 0) {
      reserved_descriptors().release(file->fd);
      file->fd = -1;
    }
  }
  // Kept open while the library is loaded: its l_name is /proc/self/fd/N,
  // which symbolizers and dladdr() read.
  std::unique_ptr<OpenFile> file;
  boost::dll::shared_library library;  // unloaded before `file` closes
};

PluginLibrary::~PluginLibrary() = default;

bool is_upper_camel_case(const std::string& name) {
  return runtime::is_upper_camel_case(name);
}

std::shared_ptr<PluginLibrary> load_plugin_file(
    const std::filesystem::path& file,
    std::span<const std::shared_ptr<PluginLibrary>> loaded_before) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    fail(file, "no such file; check the path (a plugin is a .so file)");
  }
  if (!std::filesystem::is_regular_file(file, ec)) {
    fail(file, "not a regular file; a plugin is a .so file");
  }
  // Opened once: the checks, the digest and dlopen all read this
  // descriptor, so the file checked is the file loaded.
  auto handle = std::make_unique<PluginLibrary::Handle>();
  handle->file = std::make_unique<OpenFile>(file);
  const OpenFile& opened = *handle->file;
  if (opened.fd < 0) {
    fail(file, std::string("cannot open it (") + std::strerror(opened.error) +
                   "); make it readable by the host's user");
  }
  // Ownership, mode and pinned digest: dlopen runs the file's code.
  std::string sha256;
  if (std::string problem = check_plugin_file(file, opened.fd, &sha256);
      !problem.empty()) {
    fail(file, problem);
  }
  for (const auto& before : loaded_before) {
    if (before->file() == file && before->sha256() == sha256) {
      if (std::string problem =
              check_plugin_name_pin(file, before->name(), sha256);
          !problem.empty()) {
        fail(file, problem);
      }
      return before;
    }
  }
  // The copy is what gets loaded; its digest must be the one checked (the
  // file could have changed between the check and the copy).
  if (const int copy = private_copy(opened.fd, file.filename().string());
      copy >= 0) {
    auto loaded = std::make_unique<OpenFile>(copy);
    std::string copied;
    try {
      copied = fd_sha256(copy, file);
    } catch (const std::exception& e) {
      fail(file, e.what());
    }
    if (copied != sha256) {
      fail(file,
           "the file changed while the host was loading it; write plugin "
           "files elsewhere and rename them into the directory (a ConfigMap "
           "volume does), and the host loads the finished file");
    }
    handle->file = std::move(loaded);
  }
  const OpenFile& loaded = *handle->file;
  // dlopen maps segments past the end of a short file, and the process
  // dies of SIGBUS when it touches them.
  struct stat loaded_stat {};
  if (::fstat(loaded.fd, &loaded_stat) != 0) {
    fail(file, std::string("cannot read its size (") + std::strerror(errno) +
                   "); check the file");
  }
  if (std::string problem = elf_image_problem(
          loaded.fd, static_cast<unsigned long long>(loaded_stat.st_size));
      !problem.empty()) {
    fail(file, problem);
  }
  if (plugin_file_policy().before_dlopen) {
    plugin_file_policy().before_dlopen(file);
  }

  try {
    handle->library = boost::dll::shared_library(
        loaded.proc_path(),
        boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    fail(file, "not a shared object the host can load (dlopen says: " +
                   dlerror_text(file, loaded.proc_path().string(), e.what()) +
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
  // The ABI checks (sdk/internal/schedplug/runtime.hpp, shared with the
  // test kit): version first, then size, name and capabilities.
  auto library = std::shared_ptr<PluginLibrary>(new PluginLibrary());
  if (std::string problem =
          runtime::accept_descriptor(raw, library->descriptor_);
      !problem.empty()) {
    fail(file, problem);
  }

  library->handle_ = std::move(handle);
  library->file_ = file;
  library->name_ = library->descriptor_.name;
  if (std::string problem = check_plugin_name_pin(file, library->name_, sha256);
      !problem.empty()) {
    fail(file, problem);
  }
  library->version_ = library->descriptor_.version;
  library->sha256_ = std::move(sha256);
  return library;
}

LoadResult load_plugin_directory(
    const std::filesystem::path& dir,
    std::span<const std::shared_ptr<PluginLibrary>> loaded_before) {
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
  // A pin list is a bundle's inventory (schedplug bundle writes it): a file
  // it lists that is not here means the bundle arrived incomplete.
  if (const auto& pins = plugin_file_policy().pins) {
    for (const auto& pin : pins->sha256) {
      const std::string& name = pin.first;
      const bool present =
          std::any_of(files.begin(), files.end(),
                      [&name](const auto& f) { return f.filename() == name; });
      if (!present) {
        result.problems.push_back(
            {dir / name,
             quoted(dir / name) + ": listed in " + quoted(pins->source) +
                 " (--plugin-sha256) but not in the plugin directory, so the "
                 "bundle does not match its list; ship the whole bundle that "
                 "`schedplug bundle` wrote, or remove the line"});
      }
    }
  }
  std::vector<std::shared_ptr<PluginLibrary>> loaded;
  for (const auto& file : files) {
    try {
      loaded.push_back(load_plugin_file(file, loaded_before));
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
