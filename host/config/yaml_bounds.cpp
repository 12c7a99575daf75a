#include "host/config/yaml_bounds.hpp"

#include <vector>

namespace schedplug::host {
namespace {

// A margin over the text's size for the values yaml-cpp makes without a
// byte of their own (an empty document, a key's missing value).
constexpr std::size_t kValueMargin = 10'000;

int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

class Walk {
 public:
  explicit Walk(const YamlBounds& bounds) : bounds_(bounds) {}

  // Visits `node` and everything below it, depth first, keeping the path
  // from the root; stops at the first problem.
  void visit(const YAML::Node& node) {
    if (problem_) return;
    if (++values_ > bounds_.max_values) {
      problem_ = {line_of(node),
                  "the document expands to more than " +
                      std::to_string(bounds_.max_values) +
                      " values through its aliases (*name), far more than "
                      "its text holds; write the repeated values out, or use "
                      "fewer aliases of aliases"};
      return;
    }
    if (!node.IsSequence() && !node.IsMap()) return;
    if (path_.size() >= bounds_.max_depth) {
      problem_ = too_deep(node);
      return;
    }
    path_.push_back(node);
    for (const auto& item : node) {
      if (node.IsMap()) {
        visit(item.first);
        visit(item.second);
      } else {
        visit(item);
      }
      if (problem_) break;
    }
    path_.pop_back();
  }

  const std::optional<YamlBoundsProblem>& problem() const { return problem_; }

 private:
  // A value nested this deep is either written that way or, far more
  // likely, an anchor that contains an alias to itself: then the path
  // passes through the same node more than once.
  YamlBoundsProblem too_deep(const YAML::Node& node) const {
    for (const auto& ancestor : path_) {
      if (ancestor.is(node)) {
        return {line_of(node),
                "this value (an anchor, &name) contains an alias (*name) to "
                "itself, so it never ends; write the inner value out instead "
                "of referring to the anchor from inside it"};
      }
    }
    return {line_of(node), "values are nested more than " +
                               std::to_string(bounds_.max_depth) +
                               " levels deep; a scheduler configuration or "
                               "Kubernetes object needs far fewer"};
  }

  const YamlBounds& bounds_;
  std::vector<YAML::Node> path_;
  std::size_t values_ = 0;
  std::optional<YamlBoundsProblem> problem_;
};

}  // namespace

YamlBounds yaml_bounds_for(std::size_t text_size) {
  YamlBounds bounds;
  bounds.max_values = text_size + kValueMargin;
  return bounds;
}

std::optional<YamlBoundsProblem> yaml_bounds_problem(const YAML::Node& root,
                                                     const YamlBounds& bounds) {
  Walk walk(bounds);
  walk.visit(root);
  return walk.problem();
}

}  // namespace schedplug::host
