// schedplug test kit: test a built plugin .so the way schedplug-host runs it.
//
//   #include <schedplug/testing.hpp>
//   namespace st = schedplug::testing;
//
//   auto plugin = st::Plugin::load("build/spare_cpu.so",
//   R"({"headroomMillicores": 500})"); st::Pod pod =
//   st::Pod("web").request("cpu", 250); std::vector<st::Node> nodes = {
//       st::Node("roomy").allocatable("cpu", 4000).requested("cpu", 1000),
//       st::Node("full").allocatable("cpu", 1000).requested("cpu", 700)};
//   st::Cycle cycle = plugin->run(pod, nodes);   // filter, score, normalize
//   std::string diff = st::compare(cycle, {
//       {"roomy", SCHEDPLUG_SUCCESS, "", 100},
//       {"full", SCHEDPLUG_UNSCHEDULABLE, "node(s) would keep less than 500m
//       CPU spare"}});
//   // diff is empty when the table matches; else it says which cells differ.
//
// Loading (dlopen RTLD_NOW | RTLD_LOCAL), the descriptor checks, create()
// with the host's typed-args services, the status codes and reasons, the
// per-pod begin/end and the normalization are the host's own rules
// (schedplug/runtime.hpp, which schedplug-host compiles too), so a plugin
// passes here exactly when the host would accept its answers. What the kit
// does not do: the host's file checks (owner, mode, digest), deadlines,
// refresh threads and parallel calls.
//
// Declared events (SCHEDPLUG_EVENT_*): plugin->requeue_problem(pod, before,
// after) says whether the events the plugin declared requeue a pod it
// rejected on `before` and passes on `after`; plugin->run_after(pod,
// before_nodes, nodes) checks that on every node of a cycle
// (schedplug/testing/events.hpp).
//
// Plugins that own a resource (ABI v1.6): plugin->reserve(pod, node),
// unreserve, permit (with the plugin's permit_allow / permit_reject calls
// in permit_decisions()), pre_bind (the patch as maps, checked as the host
// checks it), pre_enqueue, and unreserve_problem(pod, node), the check that
// unreserve() tolerates pods it never reserved and being called twice
// (schedplug/testing/hooks.hpp).
//
// C-callable functions for tests written in C: schedplug/testing.h.
// Header-only, C++20; needs nlohmann/json (like the C++ layer) and -ldl.
//
// This header includes the whole kit, one concern a file:
//   schedplug/testing/elements.hpp  taints, containers, node pods, terms
//   schedplug/testing/pod.hpp       Pod
//   schedplug/testing/node.hpp      Node
//   schedplug/testing/cycle.hpp     Cycle, Row, compare(): the assertions
//   schedplug/testing/plugin.hpp    Plugin, PodScope: the harness
//   schedplug/testing/checks.hpp    the checks of hints, declared keys and data
//   schedplug/testing/events.hpp    the checks of declared events
//   schedplug/testing/hooks.hpp     reserve, unreserve, permit, pre_bind,
//                                   pre_enqueue (ABI v1.6) and their checks
//   schedplug/testing/c_api.inc     the C kit's (testing.h) definitions
//   schedplug/testing/c_api_hooks.inc  ... of its calls of the v1.6 hooks
// The kit runs plugins by the host's rules (schedplug/runtime.hpp), which
// are not on a plugin's include path: link schedplug::testing, as
// schedplug_add_plugin_test() does.
#pragma once

#include "schedplug/testing/checks.hpp"
#include "schedplug/testing/cycle.hpp"
#include "schedplug/testing/elements.hpp"
#include "schedplug/testing/events.hpp"
#include "schedplug/testing/hooks.hpp"
#include "schedplug/testing/node.hpp"
#include "schedplug/testing/plugin.hpp"
#include "schedplug/testing/pod.hpp"

#ifdef SCHEDPLUG_TESTING_DEFINE_C_API
#include "schedplug/testing/c_api.inc"
#include "schedplug/testing/c_api_hooks.inc"
#endif
