// schedplug C++ layer: write a plugin as a class, export it with one macro.
//
//   #include <schedplug/plugin.hpp>
//
//   class HwEncrypt {
//    public:
//     explicit HwEncrypt(const schedplug::Args& args);
//     bool Applies(const schedplug::Pod& pod) const;
//     schedplug::Status Filter(const schedplug::Pod& pod,
//                              const schedplug::Node& node) const;
//   };
//   SCHEDPLUG_PLUGIN(HwEncrypt, "HwEncrypt", "1.0.0")
//
// Header-only, on top of the C ABI in plugin.h; the only other dependency is
// nlohmann/json (header-only) for the args. The macro builds a static
// descriptor whose hooks are the member functions the class has (detected at
// compile time), and every exception that escapes the class becomes an ERROR
// status carrying the exception's message: nothing ever unwinds into the
// host.
//
// Hooks a class may have (all optional; the ones it lacks stay NULL):
//
//   T(const Args&, const Host&) / T(const Args&) / T()   construction
//   bool     Applies(const Pod&) const                   per-pod gate
//   Status   Filter(const Pod&, const Node&) const
//   Status   Score(const Pod&, const Node&, int64_t& score) const
//   Status   NormalizeScore(const Pod&, std::span<schedplug_node_score>) const
//   static constexpr schedplug_normalize_policy kNormalize   (with Score)
//   Status   Refresh()                                   background thread
//   static constexpr uint32_t kRefreshPeriodMs           (with Refresh)
//   static constexpr uint64_t kEvents                    SCHEDPLUG_EVENT_*
//   static constexpr uint64_t kData                      SCHEDPLUG_DATA_*
//   static constexpr uint64_t kHints                     SCHEDPLUG_HINT_*
//   void     Configure(Settings&) const     per-instance settings from args
//   std::vector<std::string> PodLabelKeys() const        the pod label and
//   std::vector<std::string> PodAnnotationKeys() const   annotation keys the
//       instance reads, for SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS
//       (called once, after Configure; absent: none)
//
// Hooks for plugins that own a resource (devices, quotas, gates; ABI v1.6;
// a v1.5 host never calls them). They may be non-const: they change the
// plugin's own state, under the class's own lock, since they run
// concurrently for different pods and with Filter / Score:
//
//   Status   Reserve(const Pod&, const Node&)      take what the pod needs
//   void     Unreserve(const Pod&, const Node&)    give it back (needs Reserve
//       or Permit; must tolerate pods never reserved; an exception is
//       logged through the host's log and ignored)
//   Status   Permit(const Pod&, const Node&)       Success, Unschedulable
//       (reject), or Status::Wait(timeout) until Host::PermitAllow /
//       PermitReject names the pod's uid
//   Status   PreBind(const Pod&, const Node&, PodPatch& patch)   labels and
//       annotations the scheduler writes on the pod before binding it
//   Status   PreEnqueue(const Pod&)                Success admits the pod
//       to the queue; UnschedulableAndUnresolvable keeps it out
//
// Per-pod state (plugin.h's pod_begin): a class that declares a type
// `PodState` and BeginPod gets it built once per pod and passed to every
// Filter / Score call for that pod, instead of Applies:
//
//   Status   BeginPod(const Pod&, PodState& state, Gates& gates) const
//   Status   Filter(const Pod&, const Node&, const PodState&) const
//   Status   Score(const Pod&, const Node&, const PodState&, int64_t&) const
//
// BeginPod may clear gates.filter / gates.score to skip those hooks for the
// pod, or return an Error to fail the pod. On a host older than ABI v1.1
// BeginPod runs inside every Filter / Score call instead (correct, slower).
//
// Applies, BeginPod, Filter, Score and NormalizeScore run concurrently on one
// object, which is why they must be const. Refresh runs on one background
// thread at a time, concurrently with them: publish what it computes through
// schedplug::Published<T> (below) and read it from the const hooks.
//
// The layer is split by concern, each part readable on its own:
//   schedplug/cpp/views.hpp      Pod, Node, KeyValues, Resources
//   schedplug/cpp/status.hpp     Status, Reason
//   schedplug/cpp/args.hpp       Args, ArgsError
//   schedplug/cpp/host.hpp       Host, Settings, Gates
//   schedplug/cpp/pod_patch.hpp  PodPatch
//   schedplug/cpp/published.hpp  Published<T>
//   schedplug/cpp/export.hpp     SCHEDPLUG_PLUGIN and its trampolines
// Include this header, not the parts.
#pragma once

#include "schedplug/cpp/args.hpp"
#include "schedplug/cpp/export.hpp"
#include "schedplug/cpp/host.hpp"
#include "schedplug/cpp/pod_patch.hpp"
#include "schedplug/cpp/published.hpp"
#include "schedplug/cpp/status.hpp"
#include "schedplug/cpp/views.hpp"
#include "schedplug/plugin.h"
