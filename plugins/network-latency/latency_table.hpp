// The per-node latency figures NetworkLatency scores with, and the reader of
// the file a node agent writes them to.
//
// File format, one node per line (a small agent can write it with printf):
//
//   # comments start with '#', anywhere on a line; blank lines are fine
//   node-a 12.5
//   node-b 3        # milliseconds, decimal, >= 0
//
// A table is immutable once read; refresh publishes a whole new one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace network_latency {

// The file could not be read or a line is malformed. what() names the file
// and, for a bad line, its number.
class LatencyFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LatencyTable {
 public:
  // Parses `text`; `source` names it in errors ("<source>:<line>: ...").
  static LatencyTable parse(std::string_view text, const std::string& source);
  // Reads and parses `file`.
  static LatencyTable read(const std::filesystem::path& file);

  // The node's latency in microseconds, or nullopt when the file has no
  // figure for it.
  std::optional<int64_t> micros(std::string_view node) const {
    auto it = micros_.find(node);
    if (it == micros_.end()) return std::nullopt;
    return it->second;
  }
  size_t size() const { return micros_.size(); }

 private:
  // Heterogeneous lookup: Score looks nodes up by string_view, no copy.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> micros_;
};

// Longest latency a file may state: one hour. Anything above is a unit
// mistake (micro- or nanoseconds written as milliseconds).
inline constexpr double kMaxLatencyMs = 3'600'000.0;

}  // namespace network_latency
