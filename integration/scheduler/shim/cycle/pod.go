package cycle

import pb "schedplug.dev/integration/scheduler/gen/schedplugv1"

// Pod is the cycle's pod as PreFilter sent it (the session's data bits):
// the hooks after scoring send the same pod, not a new conversion.
// Callers do not change it.
func (c *Cycle) Pod() *pb.Pod { return c.pod }
