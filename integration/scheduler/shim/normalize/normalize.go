// Package normalize is schedplug-host's normalization of a plugin's raw
// scores by its declared policy (plugin.h's SCHEDPLUG_NORMALIZE_*; the
// host's sdk/internal/schedplug/runtime.hpp apply_policy and out_of_range),
// for the scores the shim normalizes itself: raw scores the host computed
// ahead of kube-scheduler's PreScore, normalized over the nodes
// kube-scheduler actually scores (docs/protocol.md, "Scores ahead"). The
// test vectors in proto/testdata/normalize_vectors.json, which the host's
// tests check too, keep the two from drifting.
package normalize

import (
	"fmt"
	"math/bits"
	"time"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Applicable says whether the shim can normalize scores of this kind: a
// declared policy, not the plugin's own normalize_score.
func Applicable(n pb.Normalization) bool {
	return n == pb.Normalization_NORMALIZATION_NONE || n == pb.Normalization_NORMALIZATION_LINEAR || n == pb.Normalization_NORMALIZATION_REVERSE
}

// Into writes the normalized scores of raw into out (same length; out may
// be raw itself) as the host would for plugin on nodes named by name(i). A score outside
// [0, 100] under NONE is the host's error, naming the plugin and the first
// such node; so is a normalization the shim cannot apply.
func Into(plugin string, n pb.Normalization, raw, out []int64, name func(i int) string) error {
	defer observe(plugin, time.Now())
	switch n {
	case pb.Normalization_NORMALIZATION_NONE:
		for i, s := range raw {
			if s < 0 || s > 100 {
				return fmt.Errorf("plugin %s gave node %q the score %d with normalize policy NONE (declare LINEAR or REVERSE, or implement normalize_score, to map raw values); scores must be in [0, 100]", plugin, name(i), s)
			}
			out[i] = s
		}
		return nil
	case pb.Normalization_NORMALIZATION_LINEAR, pb.Normalization_NORMALIZATION_REVERSE:
		minMax(raw, out, n == pb.Normalization_NORMALIZATION_REVERSE)
		return nil
	}
	return fmt.Errorf("plugin %s normalizes its scores itself (normalize_score); only schedplug-host can apply it", plugin)
}

// minMax maps raw onto [0, 100] (reverse: the lowest raw score gets 100),
// every node 100 when all are equal, rounding to nearest: exact for any
// int64 values, as the host's 128-bit arithmetic is.
func minMax(raw, out []int64, reverse bool) {
	if len(raw) == 0 {
		return
	}
	lo, hi := raw[0], raw[0]
	for _, s := range raw[1:] {
		lo, hi = min(lo, s), max(hi, s)
	}
	if lo == hi {
		for i := range out[:len(raw)] {
			out[i] = 100
		}
		return
	}
	// The distance of two int64 values fits in a uint64 (modular
	// arithmetic gives it exactly when hi >= lo); the product needs 128
	// bits, and the quotient is at most 100.
	span := uint64(hi) - uint64(lo)
	for i, s := range raw {
		offset := uint64(s) - uint64(lo)
		if reverse {
			offset = uint64(hi) - uint64(s)
		}
		h, l := bits.Mul64(offset, 100)
		l, carry := bits.Add64(l, span/2, 0)
		q, _ := bits.Div64(h+carry, l, span)
		out[i] = int64(q)
	}
}
