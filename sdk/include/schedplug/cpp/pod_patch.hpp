// schedplug C++ layer, part "pod_patch": PodPatch, the labels and
// annotations PreBind asks the scheduler to set on the pod before it is
// bound (ABI v1.6). Included by <schedplug/plugin.hpp>.
#pragma once

#include <string>
#include <string_view>

#include "schedplug/cpp/status.hpp"
#include "schedplug/cpp/views.hpp"
#include "schedplug/plugin.h"

namespace schedplug {

// The pod's patch during one PreBind call (plugin.h's schedplug_pod_patch):
// the host copies key and value. Setting a key twice keeps the last value.
// Each call returns Success, or an Error naming the key when the host
// refused the entry (a key that is not a qualified name, a label value
// Kubernetes would refuse, a value over SCHEDPLUG_POD_PATCH_VALUE_MAX
// bytes, more than SCHEDPLUG_POD_PATCH_MAX entries): nothing is kept
// then, and PreBind should return that Error.
class PodPatch {
 public:
  explicit PodPatch(schedplug_pod_patch* patch) : p_(patch) {}

  Status SetAnnotation(std::string_view key, std::string_view value) {
    return set(p_ == nullptr ? nullptr : p_->set_annotation, key, value, [&] {
      return "the host refused the pod annotation \"" + std::string(key) +
             "\" (the key must be a qualified name such as "
             "example.com/name, the value at most " +
             std::to_string(SCHEDPLUG_POD_PATCH_VALUE_MAX) + " bytes, " +
             kAtMost;
    });
  }
  Status SetLabel(std::string_view key, std::string_view value) {
    return set(p_ == nullptr ? nullptr : p_->set_label, key, value, [&] {
      return "the host refused the pod label \"" + std::string(key) + "\"=\"" +
             std::string(value.substr(0, 80)) +
             "\" (the key must be a qualified name such as "
             "example.com/name, the value at most 63 characters of "
             "[A-Za-z0-9_.-] that begin and end with a letter or digit, " +
             kAtMost;
    });
  }

 private:
  using Setter = schedplug_code (*)(void*, schedplug_str, schedplug_str);
  static constexpr const char* kAtMost =
      "the patch at most 16 labels and annotations)";
  static_assert(SCHEDPLUG_POD_PATCH_MAX == 16, "update kAtMost");

  template <class Refused>
  Status set(Setter setter, std::string_view key, std::string_view value,
             Refused&& refused) {
    if (setter == nullptr) {
      return Status::Error("this host gave PreBind no pod patch to write to");
    }
    if (setter(p_->context, detail::str(key), detail::str(value)) ==
        SCHEDPLUG_SUCCESS) {
      return Status::Success();
    }
    return Status::Error(refused());
  }
  schedplug_pod_patch* p_;
};

}  // namespace schedplug
