#include "host/check/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace schedplug::host {
namespace {

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

bool equals_ignoring_case(const std::string& a, const std::string& b) {
  return a.size() == b.size() && lower(a) == lower(b);
}

std::optional<std::string> closest_name(
    const std::string& typed, const std::vector<std::string>& candidates) {
  for (const auto& c : candidates) {
    if (c != typed && equals_ignoring_case(c, typed)) return c;
  }
  // Compared case-insensitively: "hwEncrypts" is one edit from "HwEncrypt".
  const std::size_t limit = std::max<std::size_t>(2, typed.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    if (c == typed) continue;
    const std::size_t d = edit_distance(lower(typed), lower(c));
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace schedplug::host
