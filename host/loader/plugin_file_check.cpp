#include "host/loader/plugin_file_check.hpp"

#include <openssl/evp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace schedplug::host {
namespace {

std::string user_name(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 &&
      found != nullptr) {
    return fmt::format("uid {} ({})", uid, found->pw_name);
  }
  return fmt::format("uid {}", uid);
}

bool on_read_only_mount(const std::filesystem::path& p) {
  struct statvfs fs {};
  return ::statvfs(p.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
}

// "" or what is wrong with one file or directory (`st` its stat) and what
// to change. A sticky directory (such as /tmp) that others may write is
// fine when root or the host owns it: others cannot rename or remove what
// they do not own in it.
std::string check_object(const std::filesystem::path& p, const char* kind,
                         const struct stat& st) {
  const uid_t self = ::geteuid();
  const mode_t mode = st.st_mode & 07777;
  const bool trusted_owner = st.st_uid == 0 || st.st_uid == self;
  const bool sticky_dir = S_ISDIR(st.st_mode) && (mode & S_ISVTX) != 0;
  std::vector<std::string> wrong;
  std::vector<std::string> fixes;
  if (!trusted_owner) {
    wrong.push_back(
        fmt::format("it must belong to root or to the host's own user ({})",
                    user_name(self)));
    fixes.push_back("chown root " + p.string());
  }
  if ((mode & (S_IWGRP | S_IWOTH)) != 0 && !(sticky_dir && trusted_owner) &&
      !on_read_only_mount(p)) {
    wrong.push_back(
        "group or others may write it, so someone else could replace the "
        "code the host runs");
    fixes.push_back("chmod go-w " + p.string());
  }
  if (wrong.empty()) return {};
  std::string out = fmt::format("{} {} is owned by {} with mode {:04o}: ", kind,
                                p.string(), user_name(st.st_uid), mode);
  for (size_t i = 0; i < wrong.size(); ++i) {
    out += (i > 0 ? ", and " : "") + wrong[i];
  }
  out += "; run `";
  for (size_t i = 0; i < fixes.size(); ++i) {
    out += (i > 0 ? " && " : "") + fixes[i];
  }
  return out + "`";
}

std::string check_path(const std::filesystem::path& p, const char* kind) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) {
    return fmt::format("cannot read the owner and mode of {} {}", kind,
                       p.string());
  }
  return check_object(p, kind, st);
}

// The file (`fd`, the one opened and later loaded) and every directory
// that leads to it, up to `/`: the one that lists it (--plugins) and its
// parents, and those on the way to the real file (a ConfigMap volume's
// ..2026_..._... directory behind the ..data symlink). Whoever may write
// any of them could have put another file there.
std::string permission_problems(const std::filesystem::path& file, int fd) {
  std::error_code ec;
  const auto dir =
      file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  const auto real = std::filesystem::canonical(file, ec);
  if (ec) return "cannot resolve the file's real path (" + ec.message() + ")";
  const auto real_plugin_dir = std::filesystem::canonical(dir, ec);
  if (ec) return "cannot resolve the directory " + dir.string();

  std::string out;
  auto note = [&](std::string problem) {
    if (!problem.empty()) out += (out.empty() ? "" : "; and ") + problem;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    note("cannot read the owner and mode of the plugin file " + real.string());
  } else {
    note(check_object(real, "the plugin file", st));
  }
  std::vector<std::filesystem::path> seen;
  auto walk_up = [&](std::filesystem::path d, const char* first_kind) {
    const char* kind = first_kind;
    for (;; d = d.parent_path()) {
      if (std::find(seen.begin(), seen.end(), d) != seen.end()) return;
      seen.push_back(d);
      note(check_path(d, kind));
      kind = "the directory";
      if (!d.has_relative_path()) return;  // reached "/"
    }
  };
  walk_up(real_plugin_dir, "the plugin directory");
  walk_up(real.parent_path(), "the directory");
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start])))
    ++start;
  return s.substr(start);
}

}  // namespace

PluginPins read_plugin_pins(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    throw std::runtime_error(
        file.string() +
        ": cannot read the --plugin-sha256 list; check the path");
  }
  PluginPins pins;
  pins.source = file;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.find_first_of(" \t");
    std::string digest = line.substr(0, space);
    std::string name =
        space == std::string::npos ? std::string() : trim(line.substr(space));
    if (!name.empty() && name[0] == '*') name.erase(0, 1);  // binary mode
    std::transform(digest.begin(), digest.end(), digest.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    const bool hex = digest.size() == 64 &&
                     std::all_of(digest.begin(), digest.end(), [](char c) {
                       return std::isxdigit(static_cast<unsigned char>(c));
                     });
    if (!hex || name.empty()) {
      throw std::runtime_error(fmt::format(
          "{}:{}: expected `SHA256  NAME.so` (64 hex digits, two spaces, the "
          "file name), as `sha256sum *.so` prints it",
          file.string(), number));
    }
    name = std::filesystem::path(name).filename().string();
    auto [it, inserted] = pins.sha256.emplace(name, digest);
    if (!inserted && it->second != digest) {
      throw std::runtime_error(fmt::format(
          "{}:{}: {} is listed twice with different digests; keep one line",
          file.string(), number, name));
    }
  }
  return pins;
}

namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext sha256_context() {
  DigestContext ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("cannot start a SHA-256 digest (OpenSSL)");
  }
  return ctx;
}

std::string hex_digest(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx, digest, &size);
  std::string out;
  for (unsigned int i = 0; i < size; ++i)
    out += fmt::format("{:02x}", digest[i]);
  return out;
}

}  // namespace

std::string file_sha256(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  DigestContext ctx = sha256_context();
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto n = in.gcount();
    if (n > 0)
      EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(n));
  }
  if (in.bad()) throw std::runtime_error("error reading " + file.string());
  return hex_digest(ctx.get());
}

std::string fd_sha256(int fd, const std::filesystem::path& file) {
  DigestContext ctx = sha256_context();
  std::vector<char> buffer(1 << 16);
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), offset);
    if (n < 0) throw std::runtime_error("error reading " + file.string());
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(n));
    offset += n;
  }
  return hex_digest(ctx.get());
}

std::string bytes_sha256(std::string_view bytes) {
  DigestContext ctx = sha256_context();
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  return hex_digest(ctx.get());
}

PluginFilePolicy& plugin_file_policy() {
  static PluginFilePolicy policy;
  return policy;
}

std::string check_plugin_file(const std::filesystem::path& file, int fd,
                              std::string* sha256) {
  const PluginFilePolicy& policy = plugin_file_policy();
  if (policy.check_permissions) {
    std::string problem = permission_problems(file, fd);
    if (!problem.empty()) return "refused before loading: " + problem;
  }
  std::string actual;  // the file's digest, once computed
  auto digest = [&]() -> const std::string& {
    if (actual.empty()) actual = fd_sha256(fd, file);
    return actual;
  };
  if (policy.pins) {
    const std::string name = file.filename().string();
    const auto it = policy.pins->sha256.find(name);
    if (it == policy.pins->sha256.end()) {
      return "refused before loading: " + name + " is not listed in " +
             policy.pins->source.string() +
             " (--plugin-sha256); add its `sha256sum` line from the trusted "
             "build, or remove the file";
    }
    try {
      digest();
    } catch (const std::exception& e) {
      return std::string("refused before loading: ") + e.what();
    }
    if (actual != it->second) {
      return "refused before loading: its SHA-256 is " + actual + " but " +
             policy.pins->source.string() + " (--plugin-sha256) pins " +
             it->second + " for " + name +
             "; the file is not the one the list was made from: restore the "
             "trusted build, or regenerate the list from it";
    }
  }
  if (!policy.name_pins.empty()) {
    try {
      digest();
    } catch (const std::exception& e) {
      return std::string("refused before loading: ") + e.what();
    }
    std::string pinned_names;
    bool matches = false;
    for (const auto& [name, pin] : policy.name_pins) {
      matches = matches || pin == actual;
      pinned_names += (pinned_names.empty() ? "" : ", ") + name;
    }
    // A file the --plugin-sha256 list pins (checked above) may hold an
    // unpinned plugin; its name is checked after loading.
    const bool listed =
        policy.pins && policy.pins->sha256.contains(file.filename().string());
    if (!matches && !listed) {
      return "refused before loading: its SHA-256 is " + actual +
             ", which matches none of the args.schedplug.sha256 pins in " +
             policy.name_pins_source.string() + " (pinned: " + pinned_names +
             "); the host learns which plugin a file holds only by loading "
             "it, so once the configuration pins a plugin, every .so in "
             "--plugins must match one of its pins or be listed in "
             "--plugin-sha256: restore the trusted build, correct the pin, "
             "or pin the other plugins too";
    }
  }
  if (sha256 != nullptr) {
    try {
      *sha256 = digest();
    } catch (const std::exception& e) {
      return std::string("refused before loading: ") + e.what();
    }
  }
  return {};
}

namespace {

std::string name_pin_problem(const std::string& name, const std::string& actual,
                             const std::map<std::string, std::string>& pins,
                             const std::filesystem::path& source) {
  const auto it = pins.find(name);
  if (it == pins.end() || actual == it->second) return {};
  return "refused: it holds plugin \"" + name + "\" and its SHA-256 is " +
         actual + ", but args.schedplug.sha256 of \"" + name + "\" in " +
         source.string() + " pins " + it->second +
         " (the file was opened because --plugin-sha256 or another "
         "plugin's pin allows its digest); restore the trusted build of \"" +
         name + "\" or correct the pin";
}

}  // namespace

std::string check_plugin_name_pin(const std::filesystem::path& file,
                                  const std::string& name,
                                  const std::string& actual) {
  (void)file;
  const PluginFilePolicy& policy = plugin_file_policy();
  return name_pin_problem(name, actual, policy.name_pins,
                          policy.name_pins_source);
}

std::string check_served_pins(const std::filesystem::path& file,
                              const std::string& name,
                              const std::string& sha256,
                              const std::map<std::string, std::string>& pins,
                              const std::filesystem::path& source) {
  if (pins.empty()) return {};
  const auto& list = plugin_file_policy().pins;
  const bool listed = list && list->sha256.contains(file.filename().string());
  const auto own = pins.find(name);
  const bool matches = own != pins.end() ? own->second == sha256
                       : listed          ? true
                                         : std::any_of(pins.begin(), pins.end(),
                                                       [&sha256](const auto& p) {
                                                return p.second == sha256;
                                              });
  if (matches) return {};
  return "plugin \"" + name + "\" (SHA-256 " + sha256 +
         ") may not serve under " + source.string() + ", which " +
         (own != pins.end() ? "pins " + own->second + " for it"
                            : "pins other plugins and none to this digest") +
         " in args.schedplug.sha256; ship the build the pin names together "
         "with the configuration, or correct the pin";
}

}  // namespace schedplug::host
