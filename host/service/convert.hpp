// From schedplug.v1 messages to the host's records.
#pragma once

#include <memory>

#include "host/model/records.hpp"
#include "host/table/node_table.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

PodData pod_from_proto(const v1::Pod& pod);
NodeData node_from_proto(const v1::Node& node);
// Builds the records of every upsert (outside any lock); the table
// validates the rest when the delta is applied.
TableDelta delta_from_proto(const v1::NodeTableDelta& delta);

}  // namespace schedplug::host
