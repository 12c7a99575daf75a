// Limits on a parsed YAML document that yaml-cpp does not enforce. An
// anchor whose value holds an alias to itself (`args: &a {loop: *a}`) is a
// cycle: every reader that walks the value recurses until the stack runs
// out. Aliases of aliases (`&b [*a, *a, *a]`, nine levels deep: "a billion
// laughs") expand to more values than memory holds. Both come back as a
// sentence before anything reads the document.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

namespace schedplug::host {

struct YamlBounds {
  // Deeper nesting than any Kubernetes object or plugin args need; also
  // far below what the readers' recursion can take.
  std::size_t max_depth = 256;
  // The most values (scalars, sequences, mappings, keys included) the
  // document may expand to through its aliases. Without aliases every
  // value takes at least one byte of the text, so the text's size plus a
  // margin never refuses a document that writes its values out.
  std::size_t max_values = 0;
};

// The bounds for a document parsed from `text_size` bytes.
YamlBounds yaml_bounds_for(std::size_t text_size);

// Where a document leaves its bounds: the line (1-based; 0 when unknown)
// and a sentence saying what is wrong and what to write instead.
struct YamlBoundsProblem {
  int line = 0;
  std::string message;
};

// Nothing when `root` stays within `bounds`.
std::optional<YamlBoundsProblem> yaml_bounds_problem(const YAML::Node& root,
                                                     const YamlBounds& bounds);

}  // namespace schedplug::host
