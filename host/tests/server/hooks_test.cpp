// The ABI v1.6 hooks (reserve, unreserve, permit, pre_bind, pre_enqueue)
// through the call pipeline and the gRPC service, with the test plugins of
// hook_plugins/: HookA and HookB log every call and act on the pod's
// labels, ThrowingHooks throws from every hook.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>

#include <google/protobuf/util/message_differencer.h>

#include "host/loader/plugin_library.hpp"
#include "host/pipeline/call_context.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kProfile = "hooks-scheduler";

std::string hooks_config(const std::filesystem::path& log) {
  return R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: hooks-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: HookA
          - name: HookB
          - name: ThrowingHooks
    pluginConfig:
      - name: HookA
        args:
          log_file: ")" +
         log.string() + R"("
      - name: HookB
        args:
          log_file: ")" +
         log.string() + R"("
          schedplug:
            timeout: 200ms
)";
}

class Hooks : public ::testing::Test {
 protected:
  Hooks() {
    const auto config = dir_.path() / "config.yaml";
    std::ofstream(config) << hooks_config(log_);
    host_ = std::make_unique<RunningHost>([&](HostOptions& o) {
      o.config = config;
      o.plugins = SCHEDPLUG_HOOK_PLUGIN_DIR;
      o.watch = false;
    });
    v1::HandshakeRequest request;
    request.set_protocol_version(v1::PROTOCOL_VERSION_1);
    request.set_client_id("hooks-test");
    v1::ProfilePlugins* p = request.add_profiles();
    p->set_scheduler_name(kProfile);
    for (const char* name : {"HookA", "HookB", "ThrowingHooks"})
      p->add_plugins(name);
    grpc::ClientContext c;
    const grpc::Status s = host_->stub().Handshake(&c, request, &handshake_);
    EXPECT_TRUE(s.ok()) << s.error_message();
    // One node in the table: n1 in zone z1.
    v1::PreFilterRequest pf;
    pf.set_session_id(handshake_.session_id());
    pf.set_scheduler_name(kProfile);
    *pf.mutable_pod() = labelled_pod("setup");
    v1::NodeTableDelta* d = pf.mutable_delta();
    d->set_full(true);
    d->set_new_version(1);
    v1::Node* n = d->add_upserts();
    n->set_index(0);
    n->set_name("n1");
    n->set_generation(1);
    v1::KeyValue* zone = n->add_labels();
    zone->set_key("zone");
    zone->set_value("z1");
    v1::PreFilterResponse r;
    grpc::ClientContext pc;
    const grpc::Status ps = host_->stub().PreFilter(&pc, pf, &r);
    EXPECT_TRUE(ps.ok()) << ps.error_message();
  }

  v1::PodAtNodeRequest at(const v1::Pod& p, const std::string& node,
                          std::vector<std::string> plugins = {"HookA",
                                                              "HookB"}) {
    v1::PodAtNodeRequest r;
    r.set_session_id(handshake_.session_id());
    r.set_scheduler_name(kProfile);
    for (const std::string& name : plugins) r.add_plugins(name);
    *r.mutable_pod() = p;
    r.set_node_name(node);
    return r;
  }

  v1::PreEnqueueRequest enqueue(const v1::Pod& p,
                                std::vector<std::string> plugins) {
    v1::PreEnqueueRequest r;
    r.set_session_id(handshake_.session_id());
    r.set_scheduler_name(kProfile);
    for (const std::string& name : plugins) r.add_plugins(name);
    *r.mutable_pod() = p;
    return r;
  }

  // The calls the plugins logged since the last look.
  std::vector<std::string> calls() {
    std::ifstream in(log_);
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);) all.push_back(line);
    std::vector<std::string> out(all.begin() + static_cast<long>(seen_),
                                 all.end());
    seen_ = all.size();
    return out;
  }

  // One call of the service, expected to be answered (not refused).
  template <class Request, class Response>
  Response rpc(grpc::Status (v1::Host::Stub::*method)(grpc::ClientContext*,
                                                      const Request&,
                                                      Response*),
               const Request& request) {
    Response response;
    grpc::ClientContext c;
    const grpc::Status s = (stub().*method)(&c, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }
  v1::ReserveResponse reserve(const v1::PodAtNodeRequest& r) {
    return rpc(&v1::Host::Stub::Reserve, r);
  }
  v1::UnreserveResponse unreserve(const v1::PodAtNodeRequest& r) {
    return rpc(&v1::Host::Stub::Unreserve, r);
  }
  v1::PermitResponse permit(const v1::PodAtNodeRequest& r) {
    return rpc(&v1::Host::Stub::Permit, r);
  }
  v1::PreBindResponse pre_bind(const v1::PodAtNodeRequest& r) {
    return rpc(&v1::Host::Stub::PreBind, r);
  }
  v1::PreEnqueueResponse pre_enqueue(const v1::PreEnqueueRequest& r) {
    return rpc(&v1::Host::Stub::PreEnqueue, r);
  }

  v1::Host::Stub& stub() { return host_->stub(); }
  CallPipeline& pipeline() { return host_->app().pipeline(); }

  TempDir dir_;
  std::filesystem::path log_ = dir_.path() / "hooks.log";
  size_t seen_ = 0;
  std::unique_ptr<RunningHost> host_;
  v1::HandshakeResponse handshake_;
};

using Strings = std::vector<std::string>;

TEST_F(Hooks, HandshakeTellsWhichHooksEachPluginHas) {
  std::map<std::string, v1::PluginInfo> by_name;
  for (const v1::PluginInfo& p : handshake_.plugins()) by_name[p.name()] = p;
  ASSERT_EQ(by_name.size(), 3u);
  for (const char* name : {"HookA", "HookB", "ThrowingHooks"}) {
    const v1::PluginInfo& p = by_name[name];
    EXPECT_TRUE(p.has_reserve()) << name;
    EXPECT_TRUE(p.has_permit()) << name;
    EXPECT_TRUE(p.has_pre_bind()) << name;
    EXPECT_TRUE(p.has_pre_enqueue()) << name;
  }
  EXPECT_TRUE(by_name["HookA"].has_filter());
}

TEST_F(Hooks, ReserveRunsInOrderOnTheTablesNodeAndStopsAtTheFirstFailure) {
  v1::ReserveResponse r = reserve(at(labelled_pod("u1"), "n1"));
  EXPECT_FALSE(r.has_failed());
  EXPECT_EQ(r.identity().build(), handshake_.identity().build());
  EXPECT_EQ(calls(),
            (Strings{"HookA reserve u1 n1 z1", "HookB reserve u1 n1 z1"}));

  // The other order, and a node the table lacks: its name alone.
  r = reserve(at(labelled_pod("u2"), "gone", {"HookB", "HookA"}));
  EXPECT_FALSE(r.has_failed());
  EXPECT_EQ(calls(),
            (Strings{"HookB reserve u2 gone -", "HookA reserve u2 gone -"}));

  // HookA refuses: HookB is not called.
  r = reserve(at(labelled_pod("u3", {{"fail-HookA", "reserve"}}), "n1"));
  ASSERT_TRUE(r.has_failed());
  EXPECT_EQ(r.failed().plugin(), "HookA");
  EXPECT_EQ(r.failed().code(), SCHEDPLUG_UNSCHEDULABLE);
  EXPECT_EQ(r.failed().reason(), "HookA refuses reserve");
  EXPECT_EQ(calls(), (Strings{"HookA reserve u3 n1 z1"}));
}

TEST_F(Hooks, UnreserveRunsEveryPluginInReverseOrder) {
  // Even for a pod whose reserve() failed: unreserve cannot fail.
  const v1::UnreserveResponse r =
      unreserve(at(labelled_pod("u1", {{"fail-HookB", "reserve"}}), "n1"));
  EXPECT_EQ(r.identity().build(), handshake_.identity().build());
  EXPECT_EQ(calls(),
            (Strings{"HookB unreserve u1 n1 z1", "HookA unreserve u1 n1 z1"}));
}

TEST_F(Hooks, TheSameCallsRunInProcessThroughThePipeline) {
  InProcessCallContext context;
  v1::ReserveResponse reserved;
  ASSERT_TRUE(
      pipeline().reserve(context, at(labelled_pod("p1"), "n1"), reserved).ok());
  EXPECT_FALSE(reserved.has_failed());
  v1::UnreserveResponse unreserved;
  ASSERT_TRUE(pipeline()
                  .unreserve(context, at(labelled_pod("p1"), "n1"), unreserved)
                  .ok());
  v1::PermitResponse permitted;
  ASSERT_TRUE(
      pipeline().permit(context, at(labelled_pod("p1"), "n1"), permitted).ok());
  v1::PreBindResponse bound;
  ASSERT_TRUE(
      pipeline().pre_bind(context, at(labelled_pod("p1"), "n1"), bound).ok());
  v1::PreEnqueueResponse enqueued;
  ASSERT_TRUE(pipeline()
                  .pre_enqueue(context, enqueue(labelled_pod("p1"), {"HookA"}),
                               enqueued)
                  .ok());
  EXPECT_FALSE(enqueued.has_gated());
  EXPECT_EQ(calls(),
            (Strings{"HookA reserve p1 n1 z1", "HookB reserve p1 n1 z1",
                     "HookB unreserve p1 n1 z1", "HookA unreserve p1 n1 z1",
                     "HookA permit p1 n1 z1", "HookB permit p1 n1 z1",
                     "HookA pre_bind p1 n1 z1", "HookB pre_bind p1 n1 z1",
                     "HookA pre_enqueue p1 - -"}));
}

TEST_F(Hooks, RequestsTheHostCannotServeAreInvalidArguments) {
  const auto refused = [&](v1::PodAtNodeRequest request) {
    v1::ReserveResponse r;
    grpc::ClientContext c;
    const grpc::Status s = stub().Reserve(&c, request, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return s.error_message();
  };
  v1::PodAtNodeRequest unknown_profile = at(labelled_pod("u1"), "n1");
  unknown_profile.set_scheduler_name("nope");
  EXPECT_NE(refused(unknown_profile).find("unknown profile \"nope\""),
            std::string::npos);
  EXPECT_NE(refused(at(labelled_pod("u1"), "n1", {"HookA", "Missing"}))
                .find("enables no native plugin \"Missing\""),
            std::string::npos);
  EXPECT_NE(refused(at(labelled_pod(""), "n1")).find("the pod has no uid"),
            std::string::npos);
  EXPECT_EQ(calls(), Strings{});
}

using Entries = std::vector<std::pair<std::string, std::string>>;

Entries entries(const google::protobuf::RepeatedPtrField<v1::KeyValue>& kvs) {
  Entries out;
  for (const auto& kv : kvs) out.emplace_back(kv.key(), kv.value());
  return out;
}

TEST_F(Hooks, PreBindMergesThePatchesNamingWhoSetEachKey) {
  const v1::PreBindResponse r = pre_bind(
      at(labelled_pod("u1", {{"patch-HookA", "good"}, {"patch-HookB", "good"}}),
         "n1"));
  EXPECT_FALSE(r.has_failed()) << r.failed().reason();
  // Sorted by key; a key both set to the same value is the first's.
  EXPECT_EQ(entries(r.annotations()),
            (Entries{{"example.com/HookA", "n1"},
                     {"example.com/HookB", "n1"},
                     {"example.com/shared", "agreed"}}));
  EXPECT_EQ(
      Strings(r.annotations_set_by().begin(), r.annotations_set_by().end()),
      (Strings{"HookA", "HookB", "HookA"}));
  EXPECT_EQ(entries(r.labels()), (Entries{{"example.com/assigned", "n1"}}));
  EXPECT_EQ(Strings(r.labels_set_by().begin(), r.labels_set_by().end()),
            Strings{"HookA"});
}

TEST_F(Hooks, PreBindFailsWhenTwoPluginsSetOneKeyApart) {
  const v1::PreBindResponse r =
      pre_bind(at(labelled_pod("u1", {{"patch-HookA", "good"},
                                      {"patch-HookB", "conflict"}}),
                  "n1"));
  ASSERT_TRUE(r.has_failed());
  EXPECT_EQ(r.failed().plugin(), "HookB");
  EXPECT_EQ(r.failed().code(), SCHEDPLUG_ERROR);
  EXPECT_EQ(r.failed().reason(),
            "plugin HookB's pre_bind() set the label \"example.com/assigned\" "
            "to \"HookB\", which plugin HookA's pre_bind() set to \"n1\" for "
            "the same pod: two plugins may not write one key; give each "
            "plugin its own key, or make them agree");
  EXPECT_EQ(r.annotations_size(), 0);
  EXPECT_EQ(r.labels_size(), 0);
}

TEST_F(Hooks, PreBindRefusesEachInvalidEntryAndWritesNothing) {
  const std::map<std::string, std::string> refusals = {
      {"bad-key",
       "the annotation key \"Bad_Prefix.com/x\" was refused: its prefix "
       "\"Bad_Prefix.com\" is not a DNS subdomain"},
      {"bad-label-value",
       "the label \"example.com/l\" was refused: its value \"0,3,5\" is not "
       "valid"},
      {"long-annotation",
       "the annotation \"big\" was refused: its value is 4097 bytes, more "
       "than SCHEDPLUG_POD_PATCH_VALUE_MAX (4096)"},
      {"too-many",
       "the label \"example.com/k16\" was refused: the patch already holds "
       "16 labels and annotations"},
      // A plugin that returns SUCCESS after a refusal fails all the same.
      {"ignore-refusal", "the annotation key \"Bad_Prefix.com/x\" was refused"},
  };
  for (const auto& [kind, message] : refusals) {
    const v1::PreBindResponse r =
        pre_bind(at(labelled_pod("u-" + kind, {{"patch-HookA", "good"},
                                               {"patch-HookB", kind}}),
                    "n1"));
    ASSERT_TRUE(r.has_failed()) << kind;
    EXPECT_EQ(r.failed().plugin(), "HookB");
    EXPECT_EQ(r.failed().code(), SCHEDPLUG_ERROR);
    EXPECT_NE(r.failed().reason().find("plugin HookB's pre_bind(): " + message),
              std::string::npos)
        << kind << ": " << r.failed().reason();
    EXPECT_EQ(r.annotations_size(), 0) << kind;
    EXPECT_EQ(r.labels_size(), 0) << kind;
  }
}

TEST_F(Hooks, PreEnqueueStopsAtTheFirstGate) {
  v1::PreEnqueueResponse r = pre_enqueue(enqueue(
      labelled_pod("u1", {{"fail-HookA", "pre_enqueue"}}), {"HookA", "HookB"}));
  ASSERT_TRUE(r.has_gated());
  EXPECT_EQ(r.gated().plugin(), "HookA");
  EXPECT_EQ(r.gated().code(), SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE);
  EXPECT_EQ(r.gated().reason(), "HookA refuses pre_enqueue");
  EXPECT_EQ(calls(), (Strings{"HookA pre_enqueue u1 - -"}));

  r = pre_enqueue(enqueue(labelled_pod("u2"), {"HookA", "HookB"}));
  EXPECT_FALSE(r.has_gated());
  EXPECT_EQ(calls(),
            (Strings{"HookA pre_enqueue u2 - -", "HookB pre_enqueue u2 - -"}));
}

TEST_F(Hooks, AThrowingHookIsAnErrorNamingThePlugin) {
  const v1::PodAtNodeRequest request =
      at(labelled_pod("u1"), "n1", {"ThrowingHooks", "HookA"});
  const auto threw = [](const v1::HookStatus& failed, const char* hook) {
    EXPECT_EQ(failed.plugin(), "ThrowingHooks");
    EXPECT_EQ(failed.code(), SCHEDPLUG_ERROR);
    EXPECT_NE(failed.reason().find(std::string("threw through the C ABI: ") +
                                   hook + " failed (from " + hook + "()"),
              std::string::npos)
        << failed.reason();
  };
  threw(reserve(request).failed(), "reserve");
  // unreserve()'s exception is logged; the others still run.
  unreserve(request);
  threw(permit(request).failed(), "permit");
  threw(pre_bind(request).failed(), "pre_bind");
  threw(pre_enqueue(enqueue(labelled_pod("u1"), {"ThrowingHooks"})).gated(),
        "pre_enqueue");
  EXPECT_EQ(calls(), (Strings{"HookA unreserve u1 n1 z1"}));
}

TEST_F(Hooks, AHookOverItsTimeoutIsAnError) {
  // HookB's timeout is 200 ms; it sleeps 400 ms, and HookA after it is
  // not called.
  const v1::ReserveResponse r = reserve(at(
      labelled_pod("u1", {{"sleep-HookB", "400"}}), "n1", {"HookB", "HookA"}));
  ASSERT_TRUE(r.has_failed());
  EXPECT_EQ(r.failed().plugin(), "HookB");
  EXPECT_EQ(r.failed().code(), SCHEDPLUG_ERROR);
  EXPECT_NE(r.failed().reason().find("plugin HookB's reserve() took"),
            std::string::npos)
      << r.failed().reason();
  EXPECT_NE(r.failed().reason().find("more than its timeout of 200 ms"),
            std::string::npos)
      << r.failed().reason();
  EXPECT_EQ(calls(), (Strings{"HookB reserve u1 n1 z1"}));
}

// One WatchSession stream read on the test's thread.
struct Watch {
  Watch(v1::Host::Stub& stub, const std::string& session) {
    v1::WatchSessionRequest request;
    request.set_session_id(session);
    context.set_deadline(std::chrono::system_clock::now() + 20s);
    reader = stub.WatchSession(&context, request);
    v1::SessionEvent first;
    EXPECT_TRUE(reader->Read(&first));
  }
  ~Watch() { context.TryCancel(); }
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::SessionEvent>> reader;
};

TEST_F(Hooks, PermitWaitThenAllowAndRejectGoOutOnTheWatchAtOnce) {
  Watch watch(stub(), handshake_.session_id());
  // Two pods wait on HookB (one for at most 60 s, one for the most).
  for (const auto& [uid, ms, timeout] :
       {std::tuple<const char*, const char*, uint64_t>{"w1", "60000", 60000},
        {"w2", "0", SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS}}) {
    const v1::PermitResponse r =
        permit(at(labelled_pod(uid, {{"wait-HookB", ms}}), "n1"));
    EXPECT_FALSE(r.has_failed());
    ASSERT_EQ(r.waits_size(), 1);
    EXPECT_EQ(r.waits(0).plugin(), "HookB");
    EXPECT_EQ(r.waits(0).timeout_ms(), timeout);
  }
  // A third pod's permit() in HookB allows w1 and rejects w2; a fourth's
  // allows a uid that never waited (SKIP).
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(permit(at(labelled_pod("w3", {{"allow-HookB", "w1"},
                                             {"reject-HookB", "w2"}}),
                         "n1"))
                   .has_failed());
  permit(at(labelled_pod("w4", {{"allow-HookB", "never"}}), "n1"));
  std::vector<v1::WaitingPodDecision> decisions;
  while (decisions.size() < 2) {
    v1::SessionEvent event;
    ASSERT_TRUE(watch.reader->Read(&event));
    for (const auto& d : event.waiting_pods()) decisions.push_back(d);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s)
      << "sooner than the 2 s heartbeat";
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0].scheduler_name(), kProfile);
  EXPECT_EQ(decisions[0].plugin(), "HookB");
  EXPECT_EQ(decisions[0].pod_uid(), "w1");
  EXPECT_TRUE(decisions[0].allow());
  EXPECT_EQ(decisions[1].pod_uid(), "w2");
  EXPECT_FALSE(decisions[1].allow());
  EXPECT_EQ(decisions[1].reason(), "no room left");
  EXPECT_THAT(calls(),
              ::testing::IsSupersetOf({"HookB allow w1 0",  // SUCCESS
                                       "HookB reject w2 0",
                                       "HookB allow never 5"}));  // SKIP
}

TEST_F(Hooks, AWaitLongerThanKubeSchedulerAllowsIsAnErrorNamingThePlugin) {
  const v1::PermitResponse r = permit(
      at(labelled_pod("long",
                      {{"wait-HookB",
                        std::to_string(SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS + 1)}}),
         "n1"));
  ASSERT_TRUE(r.has_failed());
  EXPECT_EQ(r.failed().plugin(), "HookB");
  EXPECT_EQ(r.failed().code(), SCHEDPLUG_ERROR);
  EXPECT_THAT(r.failed().reason(),
              ::testing::HasSubstr("longer than the 900000 ms (15 minutes) "
                                   "kube-scheduler allows"));
  EXPECT_EQ(r.waits_size(), 0);
}

TEST_F(Hooks, AWaitingPodIsForgottenOnUnreserveAndUnheardWithoutAWatch) {
  ASSERT_EQ(permit(at(labelled_pod("w1", {{"wait-HookA", "60000"}}), "n1"))
                .waits_size(),
            1);
  // No watch is open: the decision is unheard (ERROR) and w1 still waits.
  permit(at(labelled_pod("w2", {{"allow-HookA", "w1"}}), "n1"));
  EXPECT_THAT(calls(), ::testing::Contains("HookA allow w1 1"));
  // Its Unreserve forgets it: an allow is then a SKIP.
  unreserve(at(labelled_pod("w1"), "n1"));
  Watch watch(stub(), handshake_.session_id());
  permit(at(labelled_pod("w3", {{"allow-HookA", "w1"}}), "n1"));
  EXPECT_THAT(calls(), ::testing::Contains("HookA allow w1 5"));
}

// Reserve, Unreserve and Permit on the fast-path socket: the answers the
// same calls get over gRPC, errors as codes with gRPC's messages, and the
// request's timeout_micros as the call's deadline.
TEST_F(Hooks, ReserveUnreserveAndPermitAnswerOnTheFastPathAsOverGrpc) {
  ASSERT_TRUE(handshake_.fast_hooks());
  ASSERT_FALSE(handshake_.fast_path_socket().empty());
  FastClient client(host_->dir() / handshake_.fast_path_socket());
  ASSERT_TRUE(client.connected());
  const auto fast = [&](auto set, const v1::PodAtNodeRequest& r,
                        int64_t timeout_micros = 5'000'000) {
    v1::FastRequest request;
    *(request.*set)() = r;
    request.set_timeout_micros(timeout_micros);
    std::optional<v1::FastResponse> answer = client.call(request);
    EXPECT_TRUE(answer.has_value());
    return answer.value_or(v1::FastResponse());
  };
  const auto same = [](const google::protobuf::Message& grpc_answer,
                       const google::protobuf::Message& fast_answer) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(grpc_answer,
                                                                   fast_answer))
        << grpc_answer.ShortDebugString() << "\nvs\n"
        << fast_answer.ShortDebugString();
  };

  // Reserve, reserved and refused by a plugin.
  for (const v1::Pod& p :
       {labelled_pod("u1"), labelled_pod("u2", {{"fail-HookB", "reserve"}})}) {
    const v1::FastResponse answer =
        fast(&v1::FastRequest::mutable_reserve, at(p, "n1"));
    ASSERT_EQ(answer.code(), 0) << answer.message();
    ASSERT_TRUE(answer.has_reserve());
    same(reserve(at(p, "n1")), answer.reserve());
  }
  const v1::FastResponse refused =
      fast(&v1::FastRequest::mutable_reserve,
           at(labelled_pod("u2", {{"fail-HookB", "reserve"}}), "n1"));
  EXPECT_EQ(refused.reserve().failed().plugin(), "HookB");
  EXPECT_EQ(refused.reserve().failed().reason(), "HookB refuses reserve");
  calls();

  // Unreserve, every plugin in reverse order.
  const v1::FastResponse unreserved =
      fast(&v1::FastRequest::mutable_unreserve, at(labelled_pod("u1"), "n1"));
  ASSERT_EQ(unreserved.code(), 0) << unreserved.message();
  ASSERT_TRUE(unreserved.has_unreserve());
  EXPECT_EQ(calls(),
            (Strings{"HookB unreserve u1 n1 z1", "HookA unreserve u1 n1 z1"}));
  same(unreserve(at(labelled_pod("u1"), "n1")), unreserved.unreserve());

  // Permit, a wait and a rejection.
  for (const v1::Pod& p : {labelled_pod("w1", {{"wait-HookA", "60000"}}),
                           labelled_pod("u3", {{"fail-HookA", "permit"}})}) {
    const v1::FastResponse answer =
        fast(&v1::FastRequest::mutable_permit, at(p, "n1"));
    ASSERT_EQ(answer.code(), 0) << answer.message();
    ASSERT_TRUE(answer.has_permit());
    same(permit(at(p, "n1")), answer.permit());
  }

  // Errors: the code and message of the same call over gRPC, no answer.
  v1::PodAtNodeRequest lost = at(labelled_pod("u4"), "n1");
  lost.set_session_id("no-such-session");
  v1::PodAtNodeRequest invalid =
      at(labelled_pod("u4"), "n1", {"HookA", "Missing"});
  for (const v1::PodAtNodeRequest& r : {lost, invalid}) {
    v1::ReserveResponse ignored;
    grpc::ClientContext c;
    const grpc::Status over_grpc = stub().Reserve(&c, r, &ignored);
    ASSERT_FALSE(over_grpc.ok());
    const v1::FastResponse answer = fast(&v1::FastRequest::mutable_reserve, r);
    EXPECT_EQ(answer.code(), static_cast<int>(over_grpc.error_code()));
    EXPECT_EQ(answer.message(), over_grpc.error_message());
    EXPECT_FALSE(answer.has_reserve());
  }
  calls();

  // The deadline: HookA (no timeout of its own) sleeps 100 ms, past the
  // call's 30 ms, and HookB after it, whose own timeout has not run out,
  // is not called.
  const v1::FastResponse late =
      fast(&v1::FastRequest::mutable_reserve,
           at(labelled_pod("u5", {{"sleep-HookA", "100"}}), "n1"), 30'000);
  ASSERT_EQ(late.code(), 0) << late.message();
  EXPECT_EQ(late.reserve().failed().plugin(), "HookB");
  EXPECT_THAT(late.reserve().failed().reason(),
              ::testing::HasSubstr("the call's time ran out"));
  EXPECT_EQ(calls(), (Strings{"HookA reserve u5 n1 z1"}));
}

// A v1.5-sized descriptor: the hooks set past its end are not read.
TEST(HookDescriptors, AnOldDescriptorLoadsUnchangedWithoutHooks) {
  const auto lib = load_plugin_file(
      std::filesystem::path(SCHEDPLUG_HOOK_OTHER_DIR) / "HookOld.so");
  EXPECT_EQ(lib->name(), "HookOld");
  EXPECT_TRUE(lib->has_filter());
  EXPECT_FALSE(lib->has_reserve());
  EXPECT_FALSE(lib->has_permit());
  EXPECT_FALSE(lib->has_pre_bind());
  EXPECT_FALSE(lib->has_pre_enqueue());
  EXPECT_EQ(lib->descriptor().unreserve, nullptr);
}

TEST(HookDescriptors, UnreserveWithoutReserveOrPermitIsRefusedAtLoad) {
  try {
    load_plugin_file(std::filesystem::path(SCHEDPLUG_HOOK_OTHER_DIR) /
                     "HookUnreserveOnly.so");
    FAIL() << "loaded";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "plugin \"HookUnreserveOnly\" implements unreserve() but "
                  "neither reserve() nor permit()"),
              std::string::npos)
        << e.what();
  }
}

// A reload that would change the hooks of an enabled plugin is refused:
// kube-scheduler registered its extension points at start.
TEST(HookReload, ChangingTheHooksOfAnEnabledPluginIsRefused) {
  TempDir dir;
  const auto plugins = dir.path() / "plugins";
  std::filesystem::create_directory(plugins);
  const auto install = [&](const std::filesystem::path& from) {
    const auto tmp = dir.path() / "HookA.so.tmp";
    std::filesystem::copy_file(
        from, tmp, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::permissions(tmp, std::filesystem::perms(0755));
    std::filesystem::rename(tmp, plugins / "HookA.so");
  };
  install(std::filesystem::path(SCHEDPLUG_HOOK_PLUGIN_DIR) / "HookA.so");
  const auto config = dir.path() / "config.yaml";
  std::ofstream(config) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: hooks-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: HookA
    pluginConfig:
      - name: HookA
        args:
          log_file: ")" << (dir.path() / "log").string()
                        << R"("
)";
  RunningHost host([&](HostOptions& o) {
    o.config = config;
    o.plugins = plugins;
    o.watch = false;
  });
  install(std::filesystem::path(SCHEDPLUG_HOOK_OTHER_DIR) /
          "HookAFilterOnly.so");
  const ReloadOutcome outcome = host.app().reload();
  EXPECT_FALSE(outcome.swapped);
  std::string all;
  for (const ReloadRefusal& r : outcome.refused) all += r.message + "\n";
  EXPECT_NE(all.find("implements none of Reserve, Permit, PreBind, PreEnqueue "
                     "where the running version 0.0.1 implements Reserve, "
                     "Permit, PreBind, PreEnqueue"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("takes a restart of the scheduler"), std::string::npos)
      << all;
  // Status reports it as the other refused changes.
  grpc::ClientContext context;
  v1::StatusResponse status;
  ASSERT_TRUE(host.stub().Status(&context, v1::StatusRequest(), &status).ok());
  ASSERT_EQ(status.refused_size(), 1);
  EXPECT_EQ(status.refused(0).reason(), "restart_needed");
  EXPECT_EQ(status.refused(0).file(), "HookA.so");
}

}  // namespace
}  // namespace schedplug::host::testing
