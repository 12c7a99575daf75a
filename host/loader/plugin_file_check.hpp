// Checks on a plugin file before it is opened with dlopen (which runs the
// library's constructors, so nothing after it can undo loading code that
// someone else could have planted):
//  - the file and every directory above it, up to `/`, belong to root or
//    to this process's user, and no one else can write them (unless they
//    sit on a read-only mount, as a Kubernetes ConfigMap volume does, or
//    are sticky directories such as /tmp);
//  - the checks read the file through the descriptor the host then loads
//    (/proc/self/fd/N), so a path swapped after the check loads nothing
//    else;
//  - when a pin list is set (--plugin-sha256), the file's SHA-256 is the
//    one listed for its name;
//  - when the configuration pins plugins by name (args.schedplug.sha256),
//    the file's SHA-256 is one of those pins (the host learns which plugin
//    a file holds only by loading it), and once loaded, the plugin's name
//    is the one its digest is pinned for.
// docs/security.md explains the rules and how to make the pin list.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace schedplug::host {

// "NAME.so" (the file name in the plugin directory) -> lowercase hex
// SHA-256.
struct PluginPins {
  std::filesystem::path source;  // the list's file, for messages
  std::map<std::string, std::string> sha256;
};

// Reads a sha256sum-style list ("HEX  NAME.so" or "HEX *NAME.so" per line;
// blank lines and lines starting with '#' are skipped; a NAME with
// directories counts by its file name). Throws std::runtime_error naming
// the file and line.
PluginPins read_plugin_pins(const std::filesystem::path& file);

// Lowercase hex SHA-256 of a file's bytes. Throws std::runtime_error.
std::string file_sha256(const std::filesystem::path& file);
// Lowercase hex SHA-256 of `bytes`.
std::string bytes_sha256(std::string_view bytes);

struct PluginFilePolicy {
  // Ownership and mode checks (on by default).
  bool check_permissions = true;
  // When set, every plugin file must be listed with its digest.
  std::optional<PluginPins> pins;
  // Pins by plugin name from the configuration's args.schedplug.sha256:
  // plugin name -> lowercase hex SHA-256. When not empty, a file must
  // match one of these digests (or be listed in `pins`) to be opened.
  std::map<std::string, std::string> name_pins;
  std::filesystem::path name_pins_source;  // the config file, for messages
  // Told the file about to be dlopen()ed (the CLI's child process reports
  // it to its parent, so a crash names the file).
  std::function<void(const std::filesystem::path&)> before_dlopen;
};

// The policy load_plugin_file() applies; set once at start-up.
PluginFilePolicy& plugin_file_policy();

// Applies plugin_file_policy() to `file`, opened as `fd` (the descriptor
// the host then loads from, so that the file checked and hashed is the
// file loaded, whatever happens to the path meanwhile). Returns "" when it
// may be loaded, else the reason as a sentence (without the file name
// prefix): who owns what with which mode and what to change. When
// `sha256` is set, it receives the file's digest.
std::string check_plugin_file(const std::filesystem::path& file, int fd,
                              std::string* sha256 = nullptr);

// Lowercase hex SHA-256 of what `fd` holds (read with pread from offset
// 0; `file` names it in errors). Throws std::runtime_error.
std::string fd_sha256(int fd, const std::filesystem::path& file);

// After dlopen, once the plugin's name is known: "" when the name is not
// pinned in name_pins or `sha256` (the loaded file's digest) is its pin,
// else the reason.
std::string check_plugin_name_pin(const std::filesystem::path& file,
                                  const std::string& name,
                                  const std::string& sha256);

// Whether a loaded plugin (`file` holding plugin `name`, of digest
// `sha256`) may serve under a configuration's pins (`pins`, plugin name ->
// digest, read from `source`): a pin of its name must be its digest;
// without one, its digest must be one of the pins or its file listed in
// --plugin-sha256. A reload loads files under the pins of the changed
// configuration; when that configuration is then refused, the one that
// stays must allow what serves, and a changed configuration must allow
// the files that keep serving. "" when it may, else the reason.
std::string check_served_pins(const std::filesystem::path& file,
                              const std::string& name,
                              const std::string& sha256,
                              const std::map<std::string, std::string>& pins,
                              const std::filesystem::path& source);

}  // namespace schedplug::host
