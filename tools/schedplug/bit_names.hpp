// Names of the bits of a plugin's declarations: SCHEDPLUG_EVENT_* as
// kube-scheduler's cluster events would spell them (resource + action),
// SCHEDPLUG_DATA_* and SCHEDPLUG_HINT_* after their macros.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace schedplug::tools {

// The names of the bits set in the mask, in bit order. Bits this ABI does
// not define come out as "Unknown(bit N)". Empty for 0.
std::vector<std::string> event_names(uint64_t events);
std::vector<std::string> data_names(uint64_t data);
std::vector<std::string> hint_names(uint64_t hints);

}  // namespace schedplug::tools
