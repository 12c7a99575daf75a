// The typed-args functions of schedplug_host (plugin.h, v1.1) for one
// create() call: C plugins read their args through these instead of parsing
// JSON. They live in the SDK (schedplug/runtime.hpp), shared with the test
// kit, and use the SDK's own schedplug::Args, so the rules and messages are
// exactly those of the C++ layer.
#pragma once

#include "schedplug/runtime.hpp"

namespace schedplug::host {

using runtime::ArgsSession;

}  // namespace schedplug::host
