package eval

import (
	"slices"
	"testing"
)

func TestSchedule(t *testing.T) {
	t.Parallel()
	// Three scenarios of two jobs each, listed scenario by scenario.
	names := []string{"a", "a", "b", "b", "c", "c"}
	got := schedule(len(names), func(i int) string { return names[i] })
	// One job of each in turn, the scenarios from the front and the back.
	if want := []int{0, 4, 2, 1, 5, 3}; !slices.Equal(got, want) {
		t.Fatalf("schedule = %v, want %v", got, want)
	}
	// Every job once, whatever the sizes.
	names = []string{"a", "b", "b", "b", "c"}
	got = schedule(len(names), func(i int) string { return names[i] })
	sorted := slices.Sorted(slices.Values(got))
	if !slices.Equal(sorted, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("schedule = %v: not every job once", got)
	}
	for i := 1; i < len(got)-2; i++ {
		if names[got[i]] == names[got[i-1]] {
			t.Errorf("schedule = %v: jobs %d and %d, side by side, are the same scenario while others wait", got, got[i-1], got[i])
		}
	}
}
