// Names of the SCHEDPLUG_EVENT_* bits, as kube-scheduler's cluster events
// would spell them (resource + action).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace schedplug::tools {

// The names of the bits set in `events`, in bit order. Bits this ABI does
// not define come out as "Unknown(bit N)". Empty for 0.
std::vector<std::string> event_names(uint64_t events);

}  // namespace schedplug::tools
