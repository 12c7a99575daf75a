// The C++ layer (plugin.hpp) without a host: build descriptors from test
// classes and call their trampolines as the host would.
// One file: the cases call descriptors made from test classes as the host does,
// with the Fixture's pod and node and the Reason buffer below.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <schedplug/plugin.hpp>
#include <schedplug/runtime.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using schedplug::Args;
using schedplug::Host;
using schedplug::Node;
using schedplug::Pod;
using schedplug::Status;
using schedplug::detail::make_descriptor;

schedplug_str S(const char* s) { return schedplug_str_of(s); }

// A reason buffer like the host's.
struct Reason {
  std::array<char, SCHEDPLUG_REASON_MAX> buf{};
  schedplug_reason r{buf.data(), buf.size()};
  std::string text() const { return buf.data(); }
};

// A pod and a node with a few sorted labels, annotations and resources.
struct Fixture {
  std::array<schedplug_kv, 2> pod_annotations{
      {{S("a.io/x"), S("1")}, {S("b.io/y"), S("true")}}};
  std::array<schedplug_resource, 2> pod_requests{
      {{S("cpu"), 250}, {S("memory"), 1 << 20}}};
  std::array<schedplug_kv, 3> node_labels{
      {{S("kubernetes.io/arch"), S("amd64")},
       {S("zone"), S("z1")},
       {S("zz"), S("")}}};
  std::array<schedplug_taint, 1> taints{
      {{S("dedicated"), S("gpu"), S("NoSchedule")}}};
  std::array<schedplug_resource, 3> allocatable{
      {{S("cpu"), 4000}, {S("memory"), 8 << 20}, {S("nvidia.com/gpu"), 2}}};
  std::array<schedplug_resource, 1> requested{{{S("cpu"), 1000}}};
  schedplug_pod pod{};
  schedplug_node node{};
  Fixture() {
    pod.struct_size = sizeof pod;
    pod.namespace_name = S("ns");
    pod.name = S("web-1");
    pod.priority = 7;
    pod.annotations = {pod_annotations.data(), pod_annotations.size()};
    pod.requests = {pod_requests.data(), pod_requests.size()};
    node.struct_size = sizeof node;
    node.name = S("node-1");
    node.labels = {node_labels.data(), node_labels.size()};
    node.taints = taints.data();
    node.taint_count = taints.size();
    node.allocatable = {allocatable.data(), allocatable.size()};
    node.requested = {requested.data(), requested.size()};
    node.pod_count = 3;
  }
};

void* create_ok(const schedplug_plugin& d, const char* args = "{}",
                const schedplug_host* host = nullptr) {
  void* inst = nullptr;
  Reason err;
  EXPECT_EQ(d.create(args, std::strlen(args), host, &inst, &err.r),
            SCHEDPLUG_SUCCESS)
      << err.text();
  return inst;
}

std::string create_error(const schedplug_plugin& d, const char* args) {
  void* inst = reinterpret_cast<void*>(0x1);
  Reason err;
  EXPECT_EQ(d.create(args, std::strlen(args), nullptr, &inst, &err.r),
            SCHEDPLUG_ERROR);
  EXPECT_EQ(inst, nullptr);
  return err.text();
}

// --- hooks present / absent --------------------------------------------------

struct FilterOnly {
  Status Filter(const Pod&, const Node&) const { return Status::Success(); }
};

struct ScoreWithPolicy {
  static constexpr schedplug_normalize_policy kNormalize =
      SCHEDPLUG_NORMALIZE_REVERSE;
  Status Score(const Pod&, const Node& n, int64_t& s) const {
    s = static_cast<int64_t>(n.pod_count());
    return Status::Success();
  }
};

struct ScoreNoPolicy {
  Status Score(const Pod&, const Node&, int64_t& s) const {
    s = 42;
    return Status::Success();
  }
};

struct Everything {
  static constexpr schedplug_normalize_policy kNormalize =
      SCHEDPLUG_NORMALIZE_LINEAR;
  static constexpr uint32_t kRefreshPeriodMs = 250;
  static constexpr uint64_t kEvents =
      SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_POD_DELETE;
  bool Applies(const Pod&) const { return true; }
  Status Filter(const Pod&, const Node&) const { return Status::Success(); }
  Status Score(const Pod&, const Node&, int64_t& s) const {
    s = 1;
    return Status::Success();
  }
  Status Refresh() { return Status::Success(); }
};

struct OwnNormalize {
  Status Score(const Pod&, const Node&, int64_t& s) const {
    s = 7;
    return Status::Success();
  }
  Status NormalizeScore(const Pod&,
                        std::span<schedplug_node_score> scores) const {
    for (auto& s : scores) s.score = 100 - s.score;
    return Status::Success();
  }
};

TEST(Descriptor, HeaderFieldsAndName) {
  constexpr schedplug_plugin d =
      make_descriptor<FilterOnly>("FilterOnly", "2.3.4");
  EXPECT_EQ(d.abi_version, SCHEDPLUG_ABI_VERSION);
  EXPECT_EQ(d.struct_size, sizeof(schedplug_plugin));
  EXPECT_STREQ(d.name, "FilterOnly");
  EXPECT_STREQ(d.version, "2.3.4");
  EXPECT_NE(d.create, nullptr);
  EXPECT_NE(d.destroy, nullptr);
}

TEST(Descriptor, OnlyImplementedHooksAreSet) {
  constexpr schedplug_plugin d = make_descriptor<FilterOnly>("FilterOnly", "1");
  EXPECT_NE(d.filter, nullptr);
  EXPECT_EQ(d.applies, nullptr);
  EXPECT_EQ(d.score, nullptr);
  EXPECT_EQ(d.normalize_score, nullptr);
  EXPECT_EQ(d.refresh, nullptr);
  EXPECT_EQ(d.refresh_period_ms, 0u);
  EXPECT_EQ(d.events, 0u);

  constexpr schedplug_plugin e = make_descriptor<Everything>("Everything", "1");
  EXPECT_NE(e.applies, nullptr);
  EXPECT_NE(e.filter, nullptr);
  EXPECT_NE(e.score, nullptr);
  EXPECT_EQ(e.normalize_score, nullptr);
  EXPECT_NE(e.refresh, nullptr);
  EXPECT_EQ(e.refresh_period_ms, 250u);
  EXPECT_EQ(e.events, SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_POD_DELETE);
  EXPECT_EQ(e.normalize_policy, SCHEDPLUG_NORMALIZE_LINEAR);
}

TEST(Descriptor, ScoreWithoutNormalizeScoreGetsTheDeclaredPolicy) {
  constexpr schedplug_plugin d = make_descriptor<ScoreWithPolicy>("S", "1");
  EXPECT_NE(d.score, nullptr);
  EXPECT_EQ(d.normalize_score, nullptr);
  EXPECT_EQ(d.normalize_policy, SCHEDPLUG_NORMALIZE_REVERSE);
  EXPECT_EQ(d.filter, nullptr);

  constexpr schedplug_plugin n = make_descriptor<ScoreNoPolicy>("N", "1");
  EXPECT_EQ(n.normalize_policy, SCHEDPLUG_NORMALIZE_NONE);
}

TEST(Descriptor, OwnNormalizeScoreIsCalledInPlace) {
  constexpr schedplug_plugin d = make_descriptor<OwnNormalize>("O", "1");
  ASSERT_NE(d.normalize_score, nullptr);
  EXPECT_EQ(d.normalize_policy, SCHEDPLUG_NORMALIZE_NONE);
  Fixture f;
  void* inst = create_ok(d);
  std::array<schedplug_node_score, 2> scores{{{S("a"), 30}, {S("b"), 90}}};
  Reason r;
  EXPECT_EQ(d.normalize_score(inst, &f.pod, scores.data(), scores.size(), &r.r),
            SCHEDPLUG_SUCCESS);
  EXPECT_EQ(scores[0].score, 70);
  EXPECT_EQ(scores[1].score, 10);
  d.destroy(inst);
}

TEST(Descriptor, ScoreValueAndStatusPassThrough) {
  constexpr schedplug_plugin d = make_descriptor<ScoreWithPolicy>("S", "1");
  Fixture f;
  void* inst = create_ok(d);
  int64_t score = -1;
  Reason r;
  EXPECT_EQ(d.score(inst, &f.pod, &f.node, &score, &r.r), SCHEDPLUG_SUCCESS);
  EXPECT_EQ(score, 3);
  EXPECT_EQ(r.text(), "");
  d.destroy(inst);
}

// --- exceptions become ERROR with their message
// --------------------------------

struct NotAStdException {};

struct Thrower {
  static constexpr uint32_t kRefreshPeriodMs = 1000;
  explicit Thrower(const Args& args) : mode_(args.string("mode", "std")) {}
  bool Applies(const Pod&) const { throw std::runtime_error("applies broke"); }
  Status Filter(const Pod&, const Node& n) const {
    if (mode_ == "std")
      throw std::runtime_error("no label cache for " + std::string(n.name()));
    throw NotAStdException{};
  }
  Status Score(const Pod&, const Node&, int64_t&) const {
    throw std::out_of_range("score table");
  }
  Status NormalizeScore(const Pod&, std::span<schedplug_node_score>) const {
    throw std::logic_error("normalize broke");
  }
  Status Refresh() { throw std::runtime_error("refresh broke"); }
  std::string mode_;
};

TEST(Exceptions, BecomeErrorWithTheirMessage) {
  constexpr schedplug_plugin d = make_descriptor<Thrower>("Thrower", "1");
  Fixture f;
  void* inst = create_ok(d);
  {
    Reason r;
    EXPECT_EQ(d.filter(inst, &f.pod, &f.node, &r.r), SCHEDPLUG_ERROR);
    EXPECT_EQ(r.text(), "exception in Filter: no label cache for node-1");
  }
  {
    Reason r;
    int64_t s = 0;
    EXPECT_EQ(d.score(inst, &f.pod, &f.node, &s, &r.r), SCHEDPLUG_ERROR);
    EXPECT_EQ(r.text(), "exception in Score: score table");
  }
  {
    Reason r;
    std::array<schedplug_node_score, 1> scores{{{S("a"), 1}}};
    EXPECT_EQ(d.normalize_score(inst, &f.pod, scores.data(), 1, &r.r),
              SCHEDPLUG_ERROR);
    EXPECT_EQ(r.text(), "exception in NormalizeScore: normalize broke");
  }
  {
    Reason r;
    EXPECT_EQ(d.refresh(inst, &r.r), SCHEDPLUG_ERROR);
    EXPECT_EQ(r.text(), "exception in Refresh: refresh broke");
  }
  d.destroy(inst);
}

TEST(Exceptions, NonStdExceptionIsUnknown) {
  constexpr schedplug_plugin d = make_descriptor<Thrower>("Thrower", "1");
  Fixture f;
  void* inst = create_ok(d, R"({"mode": "other"})");
  Reason r;
  EXPECT_EQ(d.filter(inst, &f.pod, &f.node, &r.r), SCHEDPLUG_ERROR);
  EXPECT_EQ(r.text(), "unknown exception in Filter");
  d.destroy(inst);
}

struct LogLine {
  schedplug_log_level level;
  std::string text;
};
struct LogSink {
  std::mutex mu;
  std::vector<LogLine> lines;
  schedplug_host host = host_for(this);
  static schedplug_host host_for(LogSink* self) {
    schedplug_host h{};
    h.struct_size = sizeof h;
    h.context = self;
    h.log = &LogSink::log;
    return h;
  }
  static void log(void* ctx, schedplug_log_level level, schedplug_str msg) {
    auto* self = static_cast<LogSink*>(ctx);
    std::lock_guard lock(self->mu);
    self->lines.push_back({level, std::string(msg.data, msg.len)});
  }
};

TEST(Exceptions, ApplyingThrowsMeansAppliesAndIsLogged) {
  constexpr schedplug_plugin d = make_descriptor<Thrower>("Thrower", "1");
  Fixture f;
  LogSink sink;
  void* inst = create_ok(d, "{}", &sink.host);
  EXPECT_EQ(d.applies(inst, &f.pod), 1);
  ASSERT_EQ(sink.lines.size(), 1u);
  EXPECT_EQ(sink.lines[0].level, SCHEDPLUG_LOG_ERROR);
  EXPECT_NE(sink.lines[0].text.find("applies broke"), std::string::npos);
  d.destroy(inst);
}

TEST(Exceptions, LongMessagesAreCutToTheBuffer) {
  struct Long {
    Status Filter(const Pod&, const Node&) const {
      throw std::runtime_error(std::string(1000, 'x'));
    }
  };
  constexpr schedplug_plugin d = make_descriptor<Long>("Long", "1");
  Fixture f;
  void* inst = create_ok(d);
  std::array<char, 16> small{};
  schedplug_reason r{small.data(), small.size()};
  EXPECT_EQ(d.filter(inst, &f.pod, &f.node, &r), SCHEDPLUG_ERROR);
  EXPECT_EQ(std::string(small.data()), "exception in Fi");
  d.destroy(inst);
}

// --- create() and args
// ---------------------------------------------------------

struct NeedsPort {
  explicit NeedsPort(const Args& args) {
    args.allow_only({"port", "name"});
    port = args.integer("port", 80, 1, 65535);
  }
  Status Filter(const Pod&, const Node&) const { return Status::Success(); }
  int64_t port;
};

TEST(Create, ConstructorThrowingOnBadArgsIsCreateError) {
  constexpr schedplug_plugin d = make_descriptor<NeedsPort>("NeedsPort", "1");
  EXPECT_EQ(create_error(d, R"({"port": 70000})"),
            "arg \"port\" must be an integer from 1 to 65535, got 70000");
  EXPECT_EQ(create_error(d, R"({"port": "80"})"),
            "arg \"port\" must be an integer from 1 to 65535, got \"80\"");
  EXPECT_EQ(create_error(d, R"({"Port": 1})"),
            "unknown arg \"Port\"; did you mean \"port\"? arg names are "
            "case-sensitive");
  EXPECT_EQ(create_error(d, R"({"host": 1})"),
            "unknown arg \"host\"; known args: port, name");
  EXPECT_EQ(create_error(d, R"("port")"),
            "args must be an object of named values, got string");
  EXPECT_NE(create_error(d, R"({"port": )").find("args are not valid JSON"),
            std::string::npos);
}

TEST(Create, GoodArgsReachTheConstructor) {
  constexpr schedplug_plugin d = make_descriptor<NeedsPort>("NeedsPort", "1");
  void* inst = create_ok(d, R"({"port": 8080})");
  EXPECT_EQ(
      static_cast<schedplug::detail::Holder<NeedsPort>*>(inst)->plugin.port,
      8080);
  d.destroy(inst);
  // Empty args text counts as "{}".
  void* inst2 = nullptr;
  Reason err;
  EXPECT_EQ(d.create("", 0, nullptr, &inst2, &err.r), SCHEDPLUG_SUCCESS)
      << err.text();
  EXPECT_EQ(
      static_cast<schedplug::detail::Holder<NeedsPort>*>(inst2)->plugin.port,
      80);
  d.destroy(inst2);
}

TEST(Create, ClassWithoutArgsRejectsArgs) {
  constexpr schedplug_plugin d = make_descriptor<FilterOnly>("FilterOnly", "1");
  EXPECT_EQ(create_error(d, R"({"x": 1})"),
            "unknown arg \"x\"; this plugin takes no args");
  d.destroy(create_ok(d, "{}"));
}

struct Logs {
  Logs(const Args&, const Host& host) { host.info("hello from create"); }
  Status Filter(const Pod&, const Node&) const { return Status::Success(); }
};

TEST(Create, HostIsHandedToTheConstructor) {
  constexpr schedplug_plugin d = make_descriptor<Logs>("Logs", "1");
  LogSink sink;
  void* inst = create_ok(d, "{}", &sink.host);
  ASSERT_EQ(sink.lines.size(), 1u);
  EXPECT_EQ(sink.lines[0].level, SCHEDPLUG_LOG_INFO);
  EXPECT_EQ(sink.lines[0].text, "hello from create");
  d.destroy(inst);
}

// A plugin with a mutex and a Published<T> is neither copyable nor movable;
// create() must still build it in place.
struct Pinned {
  explicit Pinned(const Args&) {}
  Status Filter(const Pod&, const Node&) const { return Status::Success(); }
  std::mutex mu;
  schedplug::Published<int> value;
};

TEST(Create, NonMovablePluginIsBuiltInPlace) {
  constexpr schedplug_plugin d = make_descriptor<Pinned>("Pinned", "1");
  d.destroy(create_ok(d));
}

TEST(ArgsGetters, MessagesNameTheArgAndTheAllowedRange) {
  const Args a = Args::parse(
      R"({"ratio": 2, "frac": 0.1, "flag": "yes", "name": "x", "big": 18446744073709551615})");
  auto message = [](auto&& get) {
    try {
      get();
    } catch (const schedplug::ArgsError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(message([&] { a.number("ratio", 1, 0.25, 1.5); }),
            "arg \"ratio\" must be a number from 0.25 to 1.5, got 2");
  EXPECT_EQ(message([&] { a.number("frac", 1, 1, 100); }),
            "arg \"frac\" must be a number from 1 to 100, got 0.1");
  EXPECT_EQ(message([&] { a.boolean("flag", false); }),
            "arg \"flag\" must be true or false, got \"yes\"");
  EXPECT_EQ(message([&] { a.integer("big", 0, 0, INT64_MAX); }),
            "arg \"big\" must be an integer from 0 to 9223372036854775807, got "
            "18446744073709551615");
  EXPECT_EQ(message([&] { a.required_string("missing"); }),
            "missing arg \"missing\" (a non-empty string)");
  EXPECT_EQ(a.string("name", "d"), "x");
  EXPECT_EQ(a.string("absent", "d"), "d");
  EXPECT_DOUBLE_EQ(a.number("frac", 1, 0, 1), 0.1);
  EXPECT_EQ(a.integer("absent", 7, 0, 10), 7);
}

// --- Status
// ----------------------------------------------------------------------

struct Statuses {
  schedplug::Reason kept{"node(s) were kept"};
  Status Filter(const Pod&, const Node& n) const {
    if (n.name() == "f") return Status::Unschedulable(kept);
    if (n.name() == "g") return Status::UnschedulableAndUnresolvable(kept);
    if (n.name() == "a") return Status::Unschedulable("node(s) are full");
    if (n.name() == "b")
      return Status::UnschedulableAndUnresolvable("node(s) are wrong");
    if (n.name() == "c") return Status::Error("cache not ready");
    if (n.name() == "d") return Status::Skip();
    return Status::Success();
  }
};

TEST(StatusCodes, ReachTheHostWithTheirReasons) {
  constexpr schedplug_plugin d = make_descriptor<Statuses>("Statuses", "1");
  Fixture f;
  void* inst = create_ok(d);
  const struct {
    const char* node;
    schedplug_code code;
    const char* reason;
  } cases[] = {
      {"a", SCHEDPLUG_UNSCHEDULABLE, "node(s) are full"},
      {"b", SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) are wrong"},
      {"c", SCHEDPLUG_ERROR, "cache not ready"},
      {"d", SCHEDPLUG_SKIP, ""},
      {"e", SCHEDPLUG_SUCCESS, ""},
      {"f", SCHEDPLUG_UNSCHEDULABLE, "node(s) were kept"},
      {"g", SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) were kept"}};
  for (const auto& c : cases) {
    f.node.name = S(c.node);
    Reason r;
    EXPECT_EQ(d.filter(inst, &f.pod, &f.node, &r.r), c.code) << c.node;
    EXPECT_EQ(r.text(), c.reason) << c.node;
  }
  d.destroy(inst);
}

// A reason longer than the buffer is cut before the character the limit
// falls in, never inside it: kube-scheduler shows reasons to users, and
// the host would have to replace a half character.
TEST(StatusCodes, LongReasonsAreCutOnACharacterBoundary) {
  std::string two = "x";  // "x" then 2-byte characters: the limit splits one
  for (int i = 0; i < 200; ++i) two += "\u00e9";
  std::string four = "xyz";  // then 4-byte characters
  for (int i = 0; i < 100; ++i) four += "\U0001F600";
  for (const std::string& text : {two, four}) {
    Reason c;
    schedplug_reason_set(&c.r, text.c_str());
    Reason cpp;
    schedplug::detail::set_reason(&cpp.r, text);
    for (const std::string& got : {c.text(), cpp.text()}) {
      EXPECT_LE(got.size(), SCHEDPLUG_REASON_MAX - 1);
      EXPECT_GT(got.size(), SCHEDPLUG_REASON_MAX - 5);
      EXPECT_TRUE(schedplug::runtime::is_valid_utf8(got)) << got;
      EXPECT_EQ(text.substr(0, got.size()), got);
    }
  }
  // Short text is copied whole; a 1-byte buffer holds only the NUL.
  Reason whole;
  schedplug_reason_set(&whole.r, "caf\u00e9");
  EXPECT_EQ(whole.text(), "caf\u00e9");
  char one = 'z';
  schedplug_reason tiny{&one, 1};
  schedplug_reason_set(&tiny, "\u00e9");
  EXPECT_EQ(one, '\0');
}

TEST(StatusCodes, BorrowedReasonSurvivesMovingTheStatus) {
  const schedplug::Reason kept(
      "node(s) had a reason longer than the small buffer");
  Status a = Status::Unschedulable(kept);
  Status b = std::move(a);
  EXPECT_EQ(b.reason(), "node(s) had a reason longer than the small buffer");
  EXPECT_EQ(b.reason().data(), kept.view().data()) << "no copy";
  Status c = Status::Unschedulable(std::string("short"));
  Status d = std::move(c);
  EXPECT_EQ(d.reason(), "short");
  EXPECT_EQ(Status::Success().reason(), "");
}

// --- views
// -------------------------------------------------------------------------

TEST(Views, PodAccessors) {
  Fixture f;
  const Pod pod(f.pod);
  EXPECT_EQ(pod.namespace_name(), "ns");
  EXPECT_EQ(pod.name(), "web-1");
  EXPECT_EQ(pod.priority(), 7);
  EXPECT_EQ(pod.annotation("b.io/y"), "true");
  EXPECT_EQ(pod.annotation("a.io/x"), "1");
  EXPECT_EQ(pod.annotation("B.io/y"), std::nullopt);  // case-sensitive
  EXPECT_EQ(pod.annotation("b.io/"), std::nullopt);   // exact, not prefix
  EXPECT_EQ(pod.label("anything"), std::nullopt);     // empty list
  EXPECT_EQ(pod.request("cpu"), 250);
  EXPECT_EQ(pod.request("memory"), 1 << 20);
  EXPECT_EQ(pod.request("nvidia.com/gpu"), 0);
  EXPECT_EQ(pod.toleration_count(), 0u);
}

TEST(Views, NodeAccessors) {
  Fixture f;
  const Node node(f.node);
  EXPECT_EQ(node.name(), "node-1");
  EXPECT_EQ(node.label("zone"), "z1");
  EXPECT_EQ(node.label("zz"), "");  // present but empty
  EXPECT_TRUE(node.labels().contains("zz"));
  EXPECT_EQ(node.label("Zone"), std::nullopt);
  EXPECT_EQ(node.label("kubernetes.io/arch"), "amd64");
  EXPECT_EQ(node.annotation("zone"), std::nullopt);
  ASSERT_EQ(node.taint_count(), 1u);
  EXPECT_EQ(node.taint(0).key, "dedicated");
  EXPECT_EQ(node.taint(0).effect, "NoSchedule");
  EXPECT_EQ(node.allocatable("cpu"), 4000);
  EXPECT_EQ(node.requested("cpu"), 1000);
  EXPECT_EQ(node.free("cpu"), 3000);
  EXPECT_EQ(node.free("memory"), 8 << 20);
  EXPECT_EQ(node.allocatable("nvidia.com/gpu"), 2);
  EXPECT_EQ(node.pod_count(), 3u);

  std::vector<std::string> keys;
  for (auto [k, v] : node.labels()) keys.emplace_back(k);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"kubernetes.io/arch", "zone", "zz"}));
}

TEST(Published, ReadersKeepTheirSnapshot) {
  schedplug::Published<int> p(std::make_shared<const int>(1));
  auto before = p.load();
  p.publish(std::make_shared<const int>(2));
  EXPECT_EQ(*before, 1);
  EXPECT_EQ(*p.load(), 2);
}

TEST(Names, UpperCamelCaseCheck) {
  static_assert(schedplug::detail::is_upper_camel_case("HwEncrypt"));
  static_assert(schedplug::detail::is_upper_camel_case("A1"));
  static_assert(!schedplug::detail::is_upper_camel_case("hwEncrypt"));
  static_assert(!schedplug::detail::is_upper_camel_case("Hw-Encrypt"));
  static_assert(!schedplug::detail::is_upper_camel_case(""));
  SUCCEED();
}

}  // namespace

// --- ABI v1.1: settings, per-pod state, element sizes, more args -------------

namespace v1_1 {

struct Configured {
  static constexpr uint32_t kRefreshPeriodMs = 5000;
  explicit Configured(const Args& args)
      : period_(args.duration("period", std::chrono::seconds(5))) {}
  void Configure(schedplug::Settings& s) const {
    s.refresh_period_ms = static_cast<uint32_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(period_).count());
    s.normalize = SCHEDPLUG_NORMALIZE_LINEAR;
  }
  Status Score(const Pod&, const Node&, int64_t& s) const {
    s = 1;
    return Status::Success();
  }
  Status Refresh() { return Status::Success(); }
  std::chrono::nanoseconds period_;
};

TEST(Settings, ConfigureWritesTheHostsSettings) {
  constexpr schedplug_plugin d = make_descriptor<Configured>("Configured", "1");
  schedplug_settings settings{sizeof settings,
                              d.refresh_period_ms,
                              d.events,
                              d.normalize_policy,
                              0,
                              0,
                              0,
                              nullptr,
                              0,
                              nullptr,
                              0};
  schedplug_host host{};
  host.struct_size = sizeof host;
  host.settings = &settings;
  void* inst = create_ok(d, R"({"period": "1m"})", &host);
  EXPECT_EQ(settings.refresh_period_ms, 60000u);
  EXPECT_EQ(settings.normalize_policy, SCHEDPLUG_NORMALIZE_LINEAR);
  d.destroy(inst);
  // A host without settings (older than v1.1): create still works.
  d.destroy(create_ok(d, R"({"period": "1m"})"));
}

// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (ABI v1.4): the keys a
// class declares reach the host's settings and stay valid after create()
// returns (the host copies them then).
struct DeclaresKeys {
  static constexpr uint64_t kHints =
      SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;
  explicit DeclaresKeys(const Args& args)
      : annotation_(args.string("annotation", "team.io/tier")) {}
  std::vector<std::string> PodAnnotationKeys() const {
    return {annotation_, "team.io/owner"};
  }
  Status Filter(const Pod& pod, const Node&) const {
    return pod.annotation(annotation_) ? Status::Success()
                                       : Status::Unschedulable("no tier");
  }
  std::string annotation_;
};

TEST(Settings, PodKeysReachTheHostAndOutliveCreate) {
  constexpr schedplug_plugin d =
      make_descriptor<DeclaresKeys>("DeclaresKeys", "1");
  schedplug_settings settings{};
  settings.struct_size = sizeof settings;
  schedplug_host host{};
  host.struct_size = sizeof host;
  host.settings = &settings;
  void* inst = create_ok(d, R"({"annotation": "a.io/b"})", &host);
  EXPECT_EQ(settings.hints, SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS);
  EXPECT_EQ(settings.pod_label_key_count, 0u);
  ASSERT_EQ(settings.pod_annotation_key_count, 2u);
  EXPECT_EQ(schedplug::runtime::str_of(settings.pod_annotation_keys[0]),
            "a.io/b");
  EXPECT_EQ(schedplug::runtime::str_of(settings.pod_annotation_keys[1]),
            "team.io/owner");
  EXPECT_EQ(schedplug::runtime::settings_problem(d, settings), "");
  d.destroy(inst);
  // A host whose settings end before the keys (v1.3) gets none written.
  schedplug_settings old{};
  old.struct_size = offsetof(schedplug_settings, pod_label_keys);
  host.settings = &old;
  d.destroy(create_ok(d, "{}", &host));
  EXPECT_EQ(old.pod_annotation_keys, nullptr);
  EXPECT_EQ(old.pod_annotation_key_count, 0u);
}

struct Stateful {
  struct PodState {
    int64_t weight = 0;
  };
  Status BeginPod(const Pod& pod, PodState& state,
                  schedplug::Gates& gates) const {
    if (pod.annotation("skip-filter")) gates.filter = false;
    if (pod.annotation("fail")) return Status::Error("cannot begin");
    if (pod.annotation("skip")) return Status::Skip();
    ++begun;
    state.weight = pod.priority();
    return Status::Success();
  }
  Status Filter(const Pod&, const Node&, const PodState& s) const {
    return s.weight > 0 ? Status::Success()
                        : Status::Unschedulable("node(s) dislike priority 0");
  }
  Status Score(const Pod&, const Node& n, const PodState& s,
               int64_t& score) const {
    score = s.weight * n.pod_count();
    return Status::Success();
  }
  mutable std::atomic<int> begun{0};
};

TEST(PodState, BeginPodStateReachesFilterAndScoreAndIsFreed) {
  constexpr schedplug_plugin d = make_descriptor<Stateful>("Stateful", "1");
  ASSERT_NE(d.pod_begin, nullptr);
  ASSERT_NE(d.pod_end, nullptr);
  ASSERT_NE(d.applies, nullptr) << "for hosts older than v1.1";
  Fixture f;
  void* inst = create_ok(d);
  auto& plugin =
      static_cast<schedplug::detail::Holder<Stateful>*>(inst)->plugin;
  schedplug_pod_begin_result out{sizeof out, 0, nullptr};
  Reason r;
  ASSERT_EQ(d.pod_begin(inst, &f.pod, &out, &r.r), SCHEDPLUG_SUCCESS)
      << r.text();
  EXPECT_EQ(out.skip, 0u);
  ASSERT_NE(out.state, nullptr);
  schedplug_pod with_state = f.pod;
  with_state.state = out.state;
  int64_t score = 0;
  EXPECT_EQ(d.score(inst, &with_state, &f.node, &score, &r.r),
            SCHEDPLUG_SUCCESS);
  EXPECT_EQ(score, 7 * 3);
  EXPECT_EQ(d.filter(inst, &with_state, &f.node, &r.r), SCHEDPLUG_SUCCESS);
  EXPECT_EQ(plugin.begun.load(), 1);
  d.pod_end(inst, out.state);  // ASan/valgrind would see a leak otherwise

  // Without state (a host older than v1.1) BeginPod runs inside the call.
  EXPECT_EQ(d.score(inst, &f.pod, &f.node, &score, &r.r), SCHEDPLUG_SUCCESS);
  EXPECT_EQ(score, 21);
  EXPECT_EQ(plugin.begun.load(), 2);
  d.destroy(inst);
}

TEST(PodState, GatesSkipAndErrors) {
  constexpr schedplug_plugin d = make_descriptor<Stateful>("Stateful", "1");
  void* inst = create_ok(d);
  const struct {
    const char* annotation;
    schedplug_code code;
    uint32_t skip;
    const char* reason;
  } cases[] = {
      {"skip-filter", SCHEDPLUG_SUCCESS, SCHEDPLUG_SKIP_FILTER, ""},
      {"skip", SCHEDPLUG_SUCCESS, SCHEDPLUG_SKIP_FILTER | SCHEDPLUG_SKIP_SCORE,
       ""},
      {"fail", SCHEDPLUG_ERROR, 0, "cannot begin"},
  };
  for (const auto& c : cases) {
    Fixture f;
    std::array<schedplug_kv, 1> ann{{{S(c.annotation), S("")}}};
    f.pod.annotations = {ann.data(), ann.size()};
    schedplug_pod_begin_result out{sizeof out, 0, nullptr};
    Reason r;
    EXPECT_EQ(d.pod_begin(inst, &f.pod, &out, &r.r), c.code) << c.annotation;
    EXPECT_EQ(out.skip, c.skip) << c.annotation;
    EXPECT_EQ(r.text(), c.reason);
    if (out.state != nullptr) d.pod_end(inst, out.state);
    // applies() for older hosts: Skip and a closed pair of gates say no.
    EXPECT_EQ(d.applies(inst, &f.pod),
              std::string(c.annotation) == "skip" ? 0 : 1)
        << c.annotation;
  }
  d.destroy(inst);
}

TEST(Views, ElementSizesFromTheViewAreUsed) {
  // A host with larger kv entries (a later v1 header): labels are found by
  // stride, not by sizeof(schedplug_kv).
  struct WideKv {
    schedplug_kv kv;
    uint64_t extra;
  };
  std::array<WideKv, 3> wide{{{{S("a"), S("1")}, 0xffff},
                              {{S("m"), S("2")}, 0xffff},
                              {{S("z"), S("3")}, 0xffff}}};
  Fixture f;
  f.node.labels = {&wide[0].kv, wide.size()};
  f.node.kv_size = sizeof(WideKv);
  const Node n(f.node);
  EXPECT_EQ(n.label("m"), "2");
  EXPECT_EQ(n.label("z"), "3");
  std::string keys;
  for (const auto& e : n.labels()) keys += std::string(e.key);
  EXPECT_EQ(keys, "amz");
  EXPECT_NE(schedplug_node_label(&f.node, "z"), nullptr);
  // A view of v1.0 size: element sizes are not read.
  f.node.struct_size = offsetof(schedplug_node, kv_size);
  f.node.labels = {f.node_labels.data(), f.node_labels.size()};
  EXPECT_EQ(Node(f.node).label("zone"), "z1");
}

TEST(ArgsGetters, DurationsListsAndNestedObjects) {
  const Args a = Args::parse(R"({
      "period": "1m30s", "short": "250ms", "frac": "1.5h", "bad": "5",
      "zones": ["a", "b"], "mixed": ["a", ""],
      "limits": {"cpu": 4, "mem": "x"}})");
  EXPECT_EQ(a.duration("period", {}), std::chrono::seconds(90));
  EXPECT_EQ(a.duration("short", {}), std::chrono::milliseconds(250));
  EXPECT_EQ(a.duration("frac", {}), std::chrono::minutes(90));
  EXPECT_EQ(a.duration("absent", std::chrono::seconds(5)),
            std::chrono::seconds(5));
  EXPECT_EQ(a.string_list("zones"), (std::vector<std::string>{"a", "b"}));
  const Args limits = a.object("limits");
  EXPECT_EQ(limits.integer("cpu", 0, 0, 64), 4);
  auto message = [](auto&& get) {
    try {
      get();
    } catch (const schedplug::ArgsError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(message([&] { a.duration("bad", {}); }),
            "arg \"bad\" must be a duration such as \"5s\", \"250ms\" or "
            "\"1m30s\" (units ns, us, ms, s, m, h), greater than 0, got \"5\"");
  EXPECT_EQ(message([&] { a.string_list("mixed"); }),
            "arg \"mixed[1]\" must be a non-empty string, got \"\"");
  EXPECT_EQ(message([&] { limits.string("mem2", "d"); }), "<no error>");
  EXPECT_EQ(message([&] { limits.integer("mem", 0, 0, 1); }),
            "arg \"limits.mem\" must be an integer from 0 to 1, got \"x\"");
  EXPECT_EQ(message([&] {
              limits.allow_only({"cpu", "memory"});
            }),
            "unknown arg \"limits.mem\"; known args: limits.cpu, "
            "limits.memory");
  EXPECT_EQ(message([&] {
              a.allow_only({"period", "short", "frac", "bad", "zones", "mixed",
                            "limit"});
            }),
            "unknown arg \"limits\"; did you mean \"limit\"? known args: "
            "period, short, frac, bad, zones, mixed, limit");
}

}  // namespace v1_1

// kube-scheduler's node total, the one rule schedplug simulate and the test
// kit use: the sum of weight x normalized score; a missing weight is 1.
TEST(Runtime, WeightedSumIsTheSumOfWeightTimesNormalizedScore) {
  const std::array<int64_t, 3> normalized = {100, 40, 0};
  const std::array<int64_t, 3> weights = {3, 1, 7};
  EXPECT_EQ(schedplug::runtime::weighted_sum(normalized, weights),
            3 * 100 + 1 * 40 + 7 * 0);
  EXPECT_EQ(schedplug::runtime::weighted_sum(
                normalized, std::span<const int64_t>(weights).first(1)),
            3 * 100 + 40 + 0);
  EXPECT_EQ(schedplug::runtime::weighted_sum({}, weights), 0);
}
