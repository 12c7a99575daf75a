#include "latency_table.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace network_latency {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Quotes a line for an error message, cut so the message stays short.
std::string quoted(std::string_view s) {
  constexpr size_t kMax = 40;
  if (s.size() > kMax) return "\"" + std::string(s.substr(0, kMax)) + "...\"";
  return "\"" + std::string(s) + "\"";
}

}  // namespace

LatencyTable LatencyTable::parse(std::string_view text,
                                 const std::string& source) {
  LatencyTable table;
  std::unordered_map<std::string_view, size_t> first_line;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);

    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = trim(line);
    if (line.empty()) continue;

    const auto where = [&] {
      return source + ":" + std::to_string(line_no) + ": ";
    };
    size_t split = 0;
    while (split < line.size() && !is_space(line[split])) ++split;
    const std::string_view node = line.substr(0, split);
    const std::string_view figure = trim(line.substr(split));
    if (figure.empty() ||
        figure.find_first_of(" \t") != std::string_view::npos) {
      throw LatencyFileError(where() +
                             "expected \"<node-name> <milliseconds>\", got " +
                             quoted(line));
    }
    double ms = 0;
    const auto [end, ec] =
        std::from_chars(figure.data(), figure.data() + figure.size(), ms);
    if (ec != std::errc{} || end != figure.data() + figure.size() ||
        !std::isfinite(ms) || ms < 0 || ms > kMaxLatencyMs) {
      throw LatencyFileError(
          where() + "latency of node " + quoted(node) +
          " must be a number of milliseconds from 0 to 3600000, got " +
          quoted(figure));
    }
    if (auto [it, fresh] = first_line.emplace(node, line_no); !fresh) {
      throw LatencyFileError(where() + "node " + quoted(node) +
                             " is listed twice (first on line " +
                             std::to_string(it->second) + ")");
    }
    table.micros_.emplace(std::string(node), std::llround(ms * 1000.0));
  }
  return table;
}

LatencyTable LatencyTable::read(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw LatencyFileError("cannot read latency file " + file.string() + ": " +
                           std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw LatencyFileError("error reading latency file " + file.string() +
                           ": " + std::strerror(errno));
  }
  return parse(text.str(), file.string());
}

}  // namespace network_latency
