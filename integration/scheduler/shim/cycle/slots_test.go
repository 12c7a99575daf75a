package cycle

import (
	"math/rand/v2"
	"testing"
)

// A slotIndex answers as the array of one value per slot it replaces:
// duplicates (the last counts, or the first with keepFirst), slots past the
// table, a second list merged into the first for the slots in `only`.
func TestSlotIndexAnswersAsAnArrayBySlot(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		size := 1 + rng.IntN(300)
		list := func() []uint32 {
			out := make([]uint32, rng.IntN(size))
			for i := range out {
				out[i] = uint32(rng.IntN(size + 10)) // some past the table
			}
			return out
		}
		keepFirst := round%2 == 1
		first, second := list(), list()
		only := newSlotSet(size)
		for s := range size {
			if rng.IntN(2) == 0 {
				only.add(uint32(s))
			}
		}
		want := make([]int32, size) // 0: none; the values are never 0
		put := func(slots []uint32, base int32, only slotSet) {
			for i, s := range slots {
				if int(s) < size && (only == nil || only.has(s)) && (!keepFirst || want[s] == 0) {
					want[s] = base + int32(i)
				}
			}
		}
		put(first, 1, nil)
		x := newSlotIndex(size, nil, first, 1, nil, keepFirst)
		check := func(x slotIndex, what string) {
			t.Helper()
			for s := range size + 70 {
				got, ok := x.get(uint32(s))
				if s >= size {
					if ok {
						t.Fatalf("round %d, %s: slot %d past a table of %d has value %d", round, what, s, size, got)
					}
					continue
				}
				if ok != (want[s] != 0) || got != want[s] {
					t.Fatalf("round %d, %s: slot %d = %d, %v; want %d", round, what, s, got, ok, want[s])
				}
			}
		}
		check(x, "first list")
		put(second, 1000, only)
		check(newSlotIndex(size, &x, second, 1000, only, keepFirst), "merged")
	}
}
