// "Did you mean ...?" — finding the name a user most likely meant.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace schedplug::host {

// Levenshtein distance (insert, delete, substitute; byte-wise).
std::size_t edit_distance(const std::string& a, const std::string& b);

// True when a and b are equal ignoring ASCII case.
bool equals_ignoring_case(const std::string& a, const std::string& b);

// The candidate `typed` most likely meant: a case-insensitive match first,
// otherwise the nearest candidate within a small edit distance (at most 2,
// or a third of the length for long names). nullopt when nothing is close.
std::optional<std::string> closest_name(
    const std::string& typed, const std::vector<std::string>& candidates);

}  // namespace schedplug::host
