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

// slotIndex maps some of a table's slots to an int32 each, in space for
// those slots rather than for every slot of the table (a cycle's
// rejections and scores ahead cover the nodes its window evaluated): a
// bitmap of the slots, and the values in slot order, found by the slot's
// rank in the bitmap.
type slotIndex struct {
	bits slotSet
	// before[w]: the slots in bits' words before w; values[rank]: the
	// value of the slot of that rank.
	before []int32
	values []int32
}

// newSlotIndex indexes, for a table of `size` slots, old's pairs (nil:
// none) and then slots[i] with the value base+i, leaving out the slots
// past the table and, when only is not nil, the new slots not in it. For a
// slot given twice the last value counts; with keepFirst, whose values are
// never 0, the first.
func newSlotIndex(size int, old *slotIndex, slots []uint32, base int32, only slotSet, keepFirst bool) slotIndex {
	x := slotIndex{bits: newSlotSet(size)}
	if old != nil {
		copy(x.bits, old.bits)
	}
	for _, slot := range slots {
		if int(slot) < size && (only == nil || only.has(slot)) {
			x.bits.add(slot)
		}
	}
	buf := make([]int32, len(x.bits)+x.bits.count())
	x.before, x.values = buf[:len(x.bits)], buf[len(x.bits):]
	n := int32(0)
	for i, w := range x.bits {
		x.before[i] = n
		n += int32(bits.OnesCount64(w))
	}
	if old != nil {
		old.each(func(slot uint32, v int32) {
			if int(slot) < size {
				x.values[x.rank(slot)] = v
			}
		})
	}
	for i, slot := range slots {
		if int(slot) >= size || only != nil && !only.has(slot) {
			continue
		}
		if r := x.rank(slot); !keepFirst || x.values[r] == 0 {
			x.values[r] = base + int32(i)
		}
	}
	return x
}

func (x *slotIndex) rank(slot uint32) int {
	w := slot >> 6
	return int(x.before[w]) + bits.OnesCount64(x.bits[w]&(1<<(slot&63)-1))
}

// get is the slot's value; false when the slot has none.
func (x *slotIndex) get(slot uint32) (int32, bool) {
	if !x.bits.has(slot) {
		return 0, false
	}
	return x.values[x.rank(slot)], true
}

// each calls f with every slot that has a value, in slot order.
func (x *slotIndex) each(f func(slot uint32, v int32)) {
	r := 0
	for w, word := range x.bits {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			f(uint32(w<<6|b), x.values[r])
			r++
			word &= word - 1
		}
	}
}
