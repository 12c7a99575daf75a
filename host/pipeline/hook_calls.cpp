// Reserve, Unreserve, Permit, PreBind and PreEnqueue (plugin.h v1.6): the
// named plugins of a profile, in the order the request gives, each hook
// guarded as filter() is (exceptions, unknown codes and the plugin's own
// timeout become an ERROR naming it; the hook watchdog bounds a hang).
// These calls hold the session's call lock only to copy the node out of
// its table: the binding cycle's PreBind runs beside the next pod's
// scheduling cycle.
#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "host/pipeline/pod_call.hpp"
#include "host/table/compact_node.hpp"

namespace schedplug::host {

using namespace call_support;

// One of the v1.6 extension points.
struct HookPoint {
  const char* method;  // "Reserve"
  const char* hook;    // "reserve"
  bool (PluginLibrary::*has)() const;
  // What --record keeps of it.
  v1::RecordedMethod recorded;
  // Takes the node from the session's table (PreEnqueue has none).
  bool at_node = true;
};

namespace {

const HookPoint kReservePoint{"Reserve", "reserve", &PluginLibrary::has_reserve,
                              v1::RECORDED_METHOD_RESERVE};
const HookPoint kUnreservePoint{"Unreserve", "unreserve",
                                &PluginLibrary::has_reserve,
                                v1::RECORDED_METHOD_UNRESERVE};
const HookPoint kPermitPoint{"Permit", "permit", &PluginLibrary::has_permit,
                             v1::RECORDED_METHOD_PERMIT};
const HookPoint kPreBindPoint{"PreBind", "pre_bind",
                              &PluginLibrary::has_pre_bind,
                              v1::RECORDED_METHOD_PRE_BIND};
const HookPoint kPreEnqueuePoint{"PreEnqueue", "pre_enqueue",
                                 &PluginLibrary::has_pre_enqueue,
                                 v1::RECORDED_METHOD_PRE_ENQUEUE, false};

void set_failed(v1::HookStatus& out, const PluginInstance& plugin,
                Verdict verdict) {
  out.set_plugin(plugin.name());
  out.set_code(verdict.code);
  out.set_reason(std::move(verdict.reason));
}

// One key of the merged patch: its value and the plugin that set it.
struct PatchEntry {
  std::string value;
  const PluginInstance* plugin = nullptr;
};

// Entries sorted by key.
using PatchEntries = std::map<std::string, PatchEntry>;

// Adds the entries `plugin` set to `into`. A key an earlier plugin set to
// another value is a conflict: the pod would carry one plugin's choice
// while the other believes its own was written (two device plugins
// naming one annotation), so the PreBind fails with the reason, naming
// both; the same value from both is no conflict.
std::optional<runtime::Verdict> merge_entries(
    PatchEntries& into, const std::map<std::string, std::string>& from,
    const PluginInstance& plugin, std::string_view kind) {
  for (const auto& [key, value] : from) {
    auto [it, added] = into.try_emplace(key, PatchEntry{value, &plugin});
    if (added || it->second.value == value) continue;
    return runtime::Verdict{
        SCHEDPLUG_ERROR,
        fmt::format(
            "plugin {}'s pre_bind() set the {} \"{}\" to \"{}\", which plugin "
            "{}'s pre_bind() set to \"{}\" for the same pod: two plugins "
            "may not write one key; give each plugin its own key, or make "
            "them agree",
            plugin.name(), kind, runtime::shown(key), runtime::shown(value),
            it->second.plugin->name(), runtime::shown(it->second.value))};
  }
  return std::nullopt;
}

void add_entries(const PatchEntries& entries,
                 google::protobuf::RepeatedPtrField<v1::KeyValue>& out,
                 google::protobuf::RepeatedPtrField<std::string>& set_by) {
  for (const auto& [key, entry] : entries) {
    v1::KeyValue* kv = out.Add();
    kv->set_key(key);
    kv->set_value(entry.value);
    set_by.Add(std::string(entry.plugin->name()));
  }
}

}  // namespace

// What a hook call's steps work on.
struct CallPipeline::HookCallState {
  const ProfilePlugins& profile;
  // The request's plugins, in its order, with their deadlines.
  std::vector<const PluginInstance*> plugins;
  std::vector<Deadline> deadlines;
  std::vector<int> timeouts_ms;
  const PodModel& pod;
  const schedplug_node* node = nullptr;  // nullptr for PreEnqueue

  // Runs `hook` of plugin `i` unless its time is up; a run longer than the
  // plugin's timeout is an ERROR (what it did stands: an Unreserve
  // follows a failed Reserve, nothing of a failed PreBind is written).
  template <class Hook>
  Verdict run(size_t i, const HookPoint& point, Hook&& hook) const {
    const PluginInstance& plugin = *plugins[i];
    if (deadlines[i].expired()) {
      return {SCHEDPLUG_ERROR,
              fmt::format("plugin {}'s {}() was not called: the call's time "
                          "ran out before it (a plugin before it was slow)",
                          plugin.name(), point.hook)};
    }
    const auto start = Clock::now();
    Verdict v = hook(plugin);
    const auto took = Clock::now() - start;
    if (timeouts_ms[i] > 0 && took > milliseconds(timeouts_ms[i])) {
      return {SCHEDPLUG_ERROR,
              fmt::format("plugin {}'s {}() took {:.1f} ms, more than its "
                          "timeout of {} ms (args.schedplug.timeout){}",
                          plugin.name(), point.hook, ms(took), timeouts_ms[i],
                          v.ok() ? "" : ", and answered: " + v.reason)};
    }
    return v;
  }
};

template <class Request, class Response, class Steps>
grpc::Status CallPipeline::run_hook_call(const HookPoint& point,
                                         CallContext& context,
                                         const Request& request,
                                         Response& response, Steps&& steps) {
  Call call = begin_call(point.method, context);
  call.record_as(point.recorded, request, response);
  const std::string* node_name = nullptr;
  if constexpr (requires { request.node_name(); })
    node_name = &request.node_name();
  call.what = pod_call_what(request.pod(), node_name, request.scheduler_name());
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s =
          find_session_and_profile(call, request.session_id(),
                                   request.scheduler_name(), session, profile);
      !s.ok())
    return finish(call, s);
  if (request.pod().uid().empty()) {
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT,
                         fmt::format("{}: the pod has no uid; send the pod's "
                                     "metadata.uid (plugins key what they "
                                     "hold by it)",
                                     point.method)});
  }
  std::vector<const PluginInstance*> plugins;
  std::vector<int> timeouts;
  for (const std::string& name : request.plugins()) {
    const auto it = std::find_if(
        profile->plugins.begin(), profile->plugins.end(),
        [&](const PluginInstance* p) { return p->name() == name; });
    if (it == profile->plugins.end()) {
      return finish(call,
                    {grpc::StatusCode::INVALID_ARGUMENT,
                     fmt::format("{}: profile \"{}\" enables no native plugin "
                                 "\"{}\"; send the profile's plugins that "
                                 "implement {}() (the Handshake's PluginInfo "
                                 "says which)",
                                 point.method, profile->scheduler_name,
                                 clipped(name), point.hook)});
    }
    if (!((*it)->library().*point.has)()) {
      return finish(call,
                    {grpc::StatusCode::INVALID_ARGUMENT,
                     fmt::format("{}: plugin {} of profile \"{}\" does not "
                                 "implement {}(); send only the plugins whose "
                                 "PluginInfo says they do",
                                 point.method, name, profile->scheduler_name,
                                 point.hook)});
    }
    plugins.push_back(*it);
    const size_t i = static_cast<size_t>(it - profile->plugins.begin());
    timeouts.push_back(i < profile->plugin_timeout_ms.size()
                           ? profile->plugin_timeout_ms[i]
                           : 0);
  }
  std::optional<PodModel> pod;
  try {
    pod.emplace(pod_from_proto(request.pod()));
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  // The node as the table holds it now, copied out under the call lock so
  // that the hooks run without it; a node the table lacks has its name.
  std::shared_ptr<const CompactNode> from_table;
  std::optional<NodeModel> name_only;
  const schedplug_node* node = nullptr;
  if (node_name != nullptr) {
    {
      const SessionCall lock(*session, call.deadline,
                             std::string(point.method) + " " + call.what);
      if (!lock.owns()) return finish(call, busy_status(call, lock));
      if (auto slot = session->table.find(*node_name))
        from_table = session->table.shared(*slot);
    }
    if (from_table != nullptr) {
      node = &from_table->view();
    } else {
      NodeData data;
      data.name = *node_name;
      name_only.emplace(std::move(data));
      node = &name_only->view();
    }
  }
  identity_of(call).to_proto(*response.mutable_identity());
  HookCallState state{.profile = *profile,
                      .plugins = std::move(plugins),
                      .deadlines = {},
                      .timeouts_ms = timeouts,
                      .pod = *pod,
                      .node = node};
  state.deadlines = plugin_deadlines(call, timeouts, call.start);
  return finish(call, steps(call, state));
}

grpc::Status CallPipeline::reserve(CallContext& context,
                                   const v1::PodAtNodeRequest& request,
                                   v1::ReserveResponse& response) {
  return run_hook_call(
      kReservePoint, context, request, response,
      [&](Call& call, const HookCallState& state) {
        for (size_t i = 0; i < state.plugins.size(); ++i) {
          Verdict v = state.run(i, kReservePoint, [&](const auto& p) {
            return p.reserve(state.pod.view(), *state.node);
          });
          if (!v.ok()) {
            call.summary = "failed at " + state.plugins[i]->name();
            set_failed(*response.mutable_failed(), *state.plugins[i],
                       std::move(v));
            return grpc::Status::OK;
          }
        }
        call.summary = fmt::format("{} reserved", state.plugins.size());
        return grpc::Status::OK;
      });
}

void CallPipeline::forget_waiting(const ProfilePlugins& profile,
                                  const std::string& pod_uid) const {
  for (const PluginInstance* p : profile.plugins) {
    if (p->library().has_permit()) p->waiting().forget(pod_uid);
  }
}

grpc::Status CallPipeline::unreserve(CallContext& context,
                                     const v1::PodAtNodeRequest& request,
                                     v1::UnreserveResponse& response) {
  return run_hook_call(
      kUnreservePoint, context, request, response,
      [&](Call& call, const HookCallState& state) {
        forget_waiting(state.profile, request.pod().uid());
        // Every plugin, in reverse order, whatever the time: what a
        // skipped unreserve() would have released stays taken.
        for (size_t i = state.plugins.size(); i-- > 0;)
          state.plugins[i]->unreserve(state.pod.view(), *state.node);
        call.summary = fmt::format("{} unreserved", state.plugins.size());
        return grpc::Status::OK;
      });
}

grpc::Status CallPipeline::permit(CallContext& context,
                                  const v1::PodAtNodeRequest& request,
                                  v1::PermitResponse& response) {
  return run_hook_call(
      kPermitPoint, context, request, response,
      [&](Call& call, const HookCallState& state) {
        for (size_t i = 0; i < state.plugins.size(); ++i) {
          uint64_t timeout_ms = 0;
          Verdict v = state.run(i, kPermitPoint, [&](const auto& p) {
            return p.permit(state.pod.view(), *state.node, &timeout_ms);
          });
          if (v.code == SCHEDPLUG_WAIT) {
            state.plugins[i]->waiting().wait(
                request.pod().uid(),
                std::chrono::milliseconds(static_cast<int64_t>(timeout_ms)));
            v1::PermitWait* wait = response.add_waits();
            wait->set_plugin(state.plugins[i]->name());
            wait->set_timeout_ms(timeout_ms);
            continue;
          }
          if (!v.ok()) {
            call.summary = "failed at " + state.plugins[i]->name();
            set_failed(*response.mutable_failed(), *state.plugins[i],
                       std::move(v));
            return grpc::Status::OK;
          }
        }
        const auto waits = static_cast<size_t>(response.waits_size());
        call.summary = fmt::format("{} allowed, {} waits",
                                   state.plugins.size() - waits, waits);
        return grpc::Status::OK;
      });
}

grpc::Status CallPipeline::pre_bind(CallContext& context,
                                    const v1::PodAtNodeRequest& request,
                                    v1::PreBindResponse& response) {
  return run_hook_call(
      kPreBindPoint, context, request, response,
      [&](Call& call, const HookCallState& state) {
        forget_waiting(state.profile, request.pod().uid());
        PatchEntries annotations, labels;
        for (size_t i = 0; i < state.plugins.size(); ++i) {
          runtime::PodPatchCollector patch;
          Verdict v = state.run(i, kPreBindPoint, [&](const auto& p) {
            return p.pre_bind(state.pod.view(), *state.node, patch);
          });
          if (!v.ok()) {
            call.summary = "failed at " + state.plugins[i]->name();
            set_failed(*response.mutable_failed(), *state.plugins[i],
                       std::move(v));
            return grpc::Status::OK;
          }
          std::optional<Verdict> conflict =
              merge_entries(annotations, patch.annotations(), *state.plugins[i],
                            "annotation");
          if (!conflict)
            conflict = merge_entries(labels, patch.labels(), *state.plugins[i],
                                     "label");
          if (conflict) {
            call.summary = "conflict at " + state.plugins[i]->name();
            set_failed(*response.mutable_failed(), *state.plugins[i],
                       std::move(*conflict));
            return grpc::Status::OK;
          }
        }
        add_entries(annotations, *response.mutable_annotations(),
                    *response.mutable_annotations_set_by());
        add_entries(labels, *response.mutable_labels(),
                    *response.mutable_labels_set_by());
        call.summary = fmt::format("{} annotations, {} labels",
                                   annotations.size(), labels.size());
        return grpc::Status::OK;
      });
}

grpc::Status CallPipeline::pre_enqueue(CallContext& context,
                                       const v1::PreEnqueueRequest& request,
                                       v1::PreEnqueueResponse& response) {
  return run_hook_call(
      kPreEnqueuePoint, context, request, response,
      [&](Call& call, const HookCallState& state) {
        for (size_t i = 0; i < state.plugins.size(); ++i) {
          Verdict v = state.run(i, kPreEnqueuePoint, [&](const auto& p) {
            return p.pre_enqueue(state.pod.view());
          });
          if (!v.ok()) {
            call.summary = "gated by " + state.plugins[i]->name();
            set_failed(*response.mutable_gated(), *state.plugins[i],
                       std::move(v));
            return grpc::Status::OK;
          }
        }
        call.summary = "admitted";
        return grpc::Status::OK;
      });
}

}  // namespace schedplug::host
