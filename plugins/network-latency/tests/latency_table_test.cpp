// The latency file reader.
#include "latency_table.hpp"

#include <gtest/gtest.h>

#include <string>

namespace network_latency {
namespace {

TEST(LatencyTable, ReadsFiguresCommentsAndBlankLines) {
  const LatencyTable t = LatencyTable::parse(
      "# written by the latency agent\n"
      "\n"
      "node-a 12.5\n"
      "  node-b\t3   # trailing comment\r\n"
      "node-c 0\n"
      "node-d 1e2",  // no final newline
      "mem");
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.micros("node-a"), 12500);
  EXPECT_EQ(t.micros("node-b"), 3000);
  EXPECT_EQ(t.micros("node-c"), 0);
  EXPECT_EQ(t.micros("node-d"), 100000);
  EXPECT_EQ(t.micros("node-e"), std::nullopt);
  EXPECT_EQ(t.micros("NODE-A"), std::nullopt);  // names are exact
}

TEST(LatencyTable, EmptyTextIsAnEmptyTable) {
  EXPECT_EQ(LatencyTable::parse("", "mem").size(), 0u);
  EXPECT_EQ(LatencyTable::parse("# nothing yet\n\n", "mem").size(), 0u);
}

TEST(LatencyTable, ErrorsNameTheSourceAndLine) {
  const struct {
    const char* text;
    const char* expect;
  } cases[] = {
      {"a 1\nb\n",
       "f.txt:2: expected \"<node-name> <milliseconds>\", got \"b\""},
      {"a 1 2\n", "f.txt:1: expected \"<node-name> <milliseconds>\""},
      {"\n\na fast\n",
       "f.txt:3: latency of node \"a\" must be a number of milliseconds"},
      {"a -1\n", "f.txt:1: latency of node \"a\""},
      {"a 12ms\n", "got \"12ms\""},
      {"a nan\n", "f.txt:1:"},
      {"a inf\n", "f.txt:1:"},
      {"a 3600001\n", "from 0 to 3600000"},
      {"a 1\nb 2\na 3\n",
       "f.txt:3: node \"a\" is listed twice (first on line 1)"},
  };
  for (const auto& c : cases) {
    try {
      LatencyTable::parse(c.text, "f.txt");
      ADD_FAILURE() << "accepted " << c.text;
    } catch (const LatencyFileError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
          << c.text << " -> " << e.what();
    }
  }
}

TEST(LatencyTable, MissingFileSaysWhichAndWhy) {
  try {
    LatencyTable::read("/nonexistent/latency.txt");
    ADD_FAILURE() << "read a missing file";
  } catch (const LatencyFileError& e) {
    EXPECT_STREQ(e.what(),
                 "cannot read latency file /nonexistent/latency.txt: No such "
                 "file or directory");
  }
}

}  // namespace
}  // namespace network_latency
