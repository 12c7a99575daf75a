// The C args reader of DedicatedNodes.
#include "string_args.h"

#include <gtest/gtest.h>

#include <string>

namespace {

struct Parsed {
  int rc;
  std::string a, b, err;
};

Parsed parse(const std::string& json) {
  string_arg args[2] = {{"alpha", nullptr}, {"beta", nullptr}};
  char err[256] = "";
  Parsed p;
  p.rc = string_args_parse(json.data(), json.size(), args, 2, err, sizeof err);
  p.a = args[0].value ? args[0].value : "<unset>";
  p.b = args[1].value ? args[1].value : "<unset>";
  p.err = err;
  string_args_free(args, 2);
  return p;
}

TEST(StringArgs, EmptyObjectLeavesDefaults) {
  Parsed p = parse(" { } ");
  EXPECT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(p.a, "<unset>");
  EXPECT_EQ(p.b, "<unset>");
}

TEST(StringArgs, ReadsBothInAnyOrder) {
  Parsed p = parse("{\"beta\":\"B\",\n\t\"alpha\" : \"A\"}");
  EXPECT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(p.a, "A");
  EXPECT_EQ(p.b, "B");
}

TEST(StringArgs, DecodesEscapes) {
  Parsed p = parse(R"({"alpha": "q\"b\\s\/n\n\u00e9\ud83d\ude00"})");
  EXPECT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(p.a, "q\"b\\s/n\n\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(StringArgs, RejectsWithMessages) {
  const struct {
    const char* json;
    const char* expect;
  } cases[] = {
      {"", "args must be a JSON object, got the end of the text"},
      {"null", "args must be a JSON object, got null"},
      {R"({"alpha": true})",
       "arg \"alpha\" must be a non-empty string, got a boolean"},
      {R"({"alpha": {"x": 1}})", "got an object"},
      {R"({"alpha": "unterminated)",
       "string starting at byte 10 is not closed"},
      {R"({"alpha": "a\qb"})", "unknown escape \\q at byte 12"},
      {R"({"alpha": "\ud800"})", "unpaired surrogate"},
      {R"({"alpha": "\u0000"})", "must not contain NUL"},
      {R"({"alpha": "\u12"})", "bad \\u escape"},
      {"{\"alpha\": \"a\tb\"}", "control character in string at byte 12"},
      {R"({alpha: "x"})", "expected an arg name in quotes at byte 1"},
      {R"({"alpha" "x"})", "expected ':' after arg \"alpha\" at byte 9"},
      {R"({"alpha": "x",})", "expected an arg name in quotes at byte 14"},
      {R"({"ALPHA": "x"})", "did you mean \"alpha\"?"},
  };
  for (const auto& c : cases) {
    Parsed p = parse(c.json);
    EXPECT_EQ(p.rc, -1) << c.json;
    EXPECT_NE(p.err.find(c.expect), std::string::npos)
        << c.json << " -> " << p.err;
    EXPECT_EQ(p.a, "<unset>") << "values are freed on error";
  }
}

}  // namespace
