// /metrics against the list in host/README.md ("Metrics"): a freshly
// started host serves every documented metric with its type and label
// names, every listed label value from start-up (at zero, so an alert sees
// 0 rather than no data), nothing undocumented, and canonical bucket
// bounds.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

// GET http://127.0.0.1:port/metrics: the status line and the body.
std::pair<std::string, std::string> scrape(int port) {
  const std::string out = http_get_metrics(port);
  const size_t head = out.find("\r\n\r\n");
  if (head == std::string::npos) return {out, ""};
  return {out.substr(0, out.find("\r\n")), out.substr(head + 4)};
}

// One row of the README's table.
struct Documented {
  std::string type;
  std::set<std::string> labels;
  std::map<std::string, std::set<std::string>> values;  // listed ones
};

// The "Metrics" table of host/README.md: | `name` | type | `label`
// (`value`, ...), ... | meaning |.
std::map<std::string, Documented> documented_metrics() {
  std::ifstream in(SCHEDPLUG_HOST_README);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const size_t section = text.find("\n## Metrics\n");
  EXPECT_NE(section, std::string::npos);
  std::istringstream lines(
      text.substr(section, text.find("\n## ", section + 1) - section));
  std::map<std::string, Documented> out;
  const std::regex row(
      R"(^\| `([a-z_]+)` \| (counter|gauge|histogram) \| ([^|]*) \|)");
  const std::regex token("`([^`]+)`|\\(|\\)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    Documented d;
    d.type = m[2];
    const std::string labels = m[3];
    std::string label;
    bool in_values = false;
    for (auto it = std::sregex_iterator(labels.begin(), labels.end(), token);
         it != std::sregex_iterator(); ++it) {
      const std::string t = (*it)[0];
      if (t == "(") {
        in_values = true;
      } else if (t == ")") {
        in_values = false;
      } else if (in_values) {
        d.values[label].insert((*it)[1]);
      } else {
        label = (*it)[1];
        d.labels.insert(label);
      }
    }
    out[m[1]] = d;
  }
  return out;
}

// One sample line: name{labels} value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

std::vector<Sample> samples(const std::string& body,
                            std::map<std::string, std::string>& types) {
  std::vector<Sample> out;
  std::istringstream in(body);
  const std::regex label(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)")re");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      types[name] = type;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    const size_t brace = line.find('{');
    const size_t space = line.rfind(' ');
    s.name = line.substr(0, std::min(brace, line.find(' ')));
    if (brace != std::string::npos) {
      const std::string labels =
          line.substr(brace + 1, line.rfind('}') - brace - 1);
      for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label);
           it != std::sregex_iterator(); ++it) {
        s.labels[(*it)[1]] = (*it)[2];
      }
    }
    s.value = std::stod(line.substr(space + 1));
    out.push_back(std::move(s));
  }
  return out;
}

// The metric a sample belongs to: a histogram's _bucket, _sum and _count
// are its own.
std::string family_of(const std::string& sample,
                      const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (sample.size() > s.size() &&
        sample.compare(sample.size() - s.size(), s.size(), s) == 0) {
      const std::string base = sample.substr(0, sample.size() - s.size());
      auto it = types.find(base);
      if (it != types.end() && it->second == "histogram") return base;
    }
  }
  return sample;
}

// The significant digits `v` needs to read back exactly: 1 for 1e-05, 2
// for 2.5e-06, 16 for 9.999999999999999e-06 (1e-6 * 10 computed).
int digits_needed(double v) {
  char text[32];
  for (int precision = 1; precision < 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, v);
    if (std::strtod(text, nullptr) == v) return precision;
  }
  return 17;
}

TEST(HostMetrics, EveryDocumentedMetricAndOnlyThose) {
  // Every kind of series the table lists: the test configuration has
  // plugins with a refresh hook and a pod_begin, a shadow candidate
  // (FreeCpu's), filters and scorers.
  RunningHost host([](HostOptions& o) { o.metrics_listen = "127.0.0.1:0"; },
                   {.shadow_free_cpu = true});
  ASSERT_GT(host.app().metrics_port(), 0);
  // Not a structured binding: the lambdas below capture the body, which
  // clang before 16 refuses for a binding.
  const auto scraped = scrape(host.app().metrics_port());
  const std::string& body = scraped.second;
  ASSERT_EQ(scraped.first, "HTTP/1.1 200 OK") << body;

  const auto documented = documented_metrics();
  ASSERT_GE(documented.size(), 30u);
  std::map<std::string, std::string> types;
  const std::vector<Sample> all = samples(body, types);

  for (const auto& [name, type] : types) {
    EXPECT_TRUE(documented.count(name))
        << name << " (" << type << ") is served but not in host/README.md";
  }
  std::map<std::string, std::map<std::string, std::set<std::string>>> seen;
  for (const Sample& s : all) {
    const std::string family = family_of(s.name, types);
    auto doc = documented.find(family);
    if (doc == documented.end()) continue;
    std::set<std::string> labels;
    for (const auto& [k, v] : s.labels) {
      if (k == "le" && s.name == family + "_bucket") {
        // Canonical bounds: 1e-05, 2.5e-06, 0.25, not 9.999999999999999e-06.
        // Every bound is 1, 2.5 or 5 times a power of ten.
        EXPECT_TRUE(v == "+Inf" || (digits_needed(std::stod(v)) <= 2 &&
                                    v.find("99999") == std::string::npos &&
                                    v.find("00000") == std::string::npos))
            << s.name << " le=\"" << v << "\"";
        continue;
      }
      labels.insert(k);
      seen[family][k].insert(v);
    }
    EXPECT_EQ(labels, doc->second.labels) << s.name;
  }
  for (const auto& [name, doc] : documented) {
    SCOPED_TRACE(name);
    auto type = types.find(name);
    ASSERT_NE(type, types.end()) << "documented but not served at start-up";
    EXPECT_EQ(type->second, doc.type);
    // Base units, Prometheus' suffixes.
    if (doc.type == "counter") {
      EXPECT_TRUE(name.ends_with("_total"));
    } else {
      EXPECT_FALSE(name.ends_with("_total"));
    }
    EXPECT_EQ(name.find("micro"), std::string::npos);
    EXPECT_EQ(name.find("milli"), std::string::npos);
    for (const auto& [label, values] : doc.values) {
      for (const std::string& v : values) {
        EXPECT_TRUE(seen[name][label].count(v))
            << "no series with " << label << "=\"" << v << "\" at start-up";
      }
    }
  }
  // The per-plugin and per-file series of counters whose label values are
  // not listed: every plugin created, its shadow candidate, its file.
  const auto has = [&](const std::string& series, bool zero = true) {
    return body.find("\n" + series + (zero ? " 0\n" : " ")) !=
           std::string::npos;
  };
  EXPECT_TRUE(
      has(R"(schedplug_deadline_exceeded_total{plugin="SleepyFilter"})"));
  EXPECT_TRUE(has(R"(schedplug_refresh_failures_total{plugin="RefreshProbe"})",
                  /*zero=*/false));
  EXPECT_TRUE(
      has(R"(schedplug_shadow_differing_verdicts_total{plugin="FreeCpu"})"));
  EXPECT_TRUE(has(
      R"(schedplug_reloads_refused_total{file="free_cpu.so",reason="load"})"));
  EXPECT_TRUE(has(
      R"(schedplug_reloads_refused_total{file="scheduler-config.yaml",reason="config"})"));
  EXPECT_NE(
      body.find(
          R"(schedplug_shadow_build_info{file="free_cpu.so",plugin="FreeCpu",)"),
      std::string::npos)
      << body;
  // The scrape times itself, in seconds: the first scrape is counted by
  // the second.
  EXPECT_NE(
      scrape(host.app().metrics_port())
          .second.find("schedplug_metrics_scrape_duration_seconds_count 1\n"),
      std::string::npos);
}

}  // namespace
}  // namespace schedplug::host::testing
