package cycle

import (
	"math/bits"
	"sync/atomic"
)

// slotSet is a set of node-table slots.
type slotSet []uint64

func newSlotSet(slots int) slotSet { return make(slotSet, (slots+63)/64) }

func (s slotSet) add(slot uint32) { s[slot>>6] |= 1 << (slot & 63) }

func (s slotSet) has(slot uint32) bool {
	w := int(slot >> 6)
	return w < len(s) && s[w]&(1<<(slot&63)) != 0
}

// count is the number of slots in s.
func (s slotSet) count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// ranges returns the slots in [0, slots) in s as [first, end) pairs.
func (s slotSet) ranges(slots int) []uint32 { return s.rangesWhere(slots, true) }

// complementRanges returns the slots in [0, slots) not in s as [first, end)
// pairs (PreFilterRequest.evaluate's form).
func (s slotSet) complementRanges(slots int) []uint32 { return s.rangesWhere(slots, false) }

func (s slotSet) rangesWhere(slots int, want bool) []uint32 {
	var ranges []uint32
	open := -1
	for slot := 0; slot < slots; slot++ {
		in := s.has(uint32(slot)) == want
		switch {
		case in && open < 0:
			open = slot
		case !in && open >= 0:
			ranges = append(ranges, uint32(open), uint32(slot))
			open = -1
		}
	}
	if open >= 0 {
		ranges = append(ranges, uint32(open), uint32(slots))
	}
	return ranges
}

// rangesLen is how many slots [first, end) pairs cover.
func rangesLen(ranges []uint32) int {
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		n += int(ranges[i+1] - ranges[i])
	}
	return n
}

// visitSet notes the slots a cycle's Filter was asked about. The
// framework's parallel Filter workers add to it concurrently.
type visitSet []atomic.Uint64

func newVisitSet(slots int) visitSet { return make(visitSet, (slots+63)/64) }

func (v visitSet) add(slot uint32) {
	w := int(slot >> 6)
	if w >= len(v) {
		return
	}
	bit := uint64(1) << (slot & 63)
	if v[w].Load()&bit == 0 {
		v[w].Or(bit)
	}
}

func (v visitSet) has(slot uint32) bool {
	w := int(slot >> 6)
	return w < len(v) && v[w].Load()&(1<<(slot&63)) != 0
}

func (v visitSet) count() int {
	n := 0
	for i := range v {
		n += bits.OnesCount64(v[i].Load())
	}
	return n
}
