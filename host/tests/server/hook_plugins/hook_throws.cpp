// ThrowingHooks: every ABI v1.6 hook throws through the C ABI, as a C++
// plugin that forgot to catch would (C cannot throw, hence C++ here). The
// host must answer ERROR naming the plugin and the hook, and swallow
// unreserve()'s exception with a log line.
#include <stdexcept>

#include "schedplug/plugin.h"

namespace {

schedplug_code create(const char*, size_t, const schedplug_host*, void** out,
                      schedplug_reason*) {
  *out = nullptr;
  return SCHEDPLUG_SUCCESS;
}

schedplug_code reserve(void*, const schedplug_pod*, const schedplug_node*,
                       schedplug_reason*) {
  throw std::runtime_error("reserve failed");
}

void unreserve(void*, const schedplug_pod*, const schedplug_node*) {
  throw std::runtime_error("unreserve failed");
}

schedplug_code permit(void*, const schedplug_pod*, const schedplug_node*,
                      schedplug_permit_result*, schedplug_reason*) {
  throw std::runtime_error("permit failed");
}

schedplug_code pre_bind(void*, const schedplug_pod*, const schedplug_node*,
                        schedplug_pod_patch*, schedplug_reason*) {
  throw std::runtime_error("pre_bind failed");
}

schedplug_code pre_enqueue(void*, const schedplug_pod*, schedplug_reason*) {
  throw std::runtime_error("pre_enqueue failed");
}

schedplug_plugin make_descriptor() {
  schedplug_plugin d{};
  d.abi_version = SCHEDPLUG_ABI_VERSION;
  d.struct_size = sizeof(schedplug_plugin);
  d.name = "ThrowingHooks";
  d.version = "0.0.1";
  d.create = create;
  d.reserve = reserve;
  d.unreserve = unreserve;
  d.permit = permit;
  d.pre_bind = pre_bind;
  d.pre_enqueue = pre_enqueue;
  return d;
}

const schedplug_plugin descriptor = make_descriptor();

}  // namespace

extern "C" SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1() {
  return &descriptor;
}
