package eval

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
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

// lockedBuffer is a buffer a process's stderr copier and a test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRoleRunsShareAProcess: runs of the same role configuration go, one
// after the other, to one server process, which starts each afresh: the
// run whose saved sign-in was revoked before it meets the failure as in a
// process of its own, after a run that had signed in.
func TestRoleRunsShareAProcess(t *testing.T) {
	var subset []Scenario
	for _, sc := range loadAll(t) {
		if sc.Name == "auth-expired-midrun" || sc.Name == "auth-expired-before" {
			subset = append(subset, sc)
		}
	}
	if len(subset) != 2 {
		t.Fatalf("found %d of the 2 scenarios", len(subset))
	}
	var log lockedBuffer
	srv := *retrace
	srv.Log = &log
	runs, err := Evaluate(context.Background(), Options{Scenarios: subset, Policies: []Policy{Generic{}, Reader{}},
		Servers: []*Server{&srv}, Styles: []llmerr.Style{llmerr.StyleRecovery}, K: 1, Parallel: 1}, fx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 4", len(runs))
	}
	for _, r := range runs {
		if !r.Reached || !slices.Contains(r.Codes, "AUTHENTICATION_FAILED") {
			t.Errorf("%s (%s): reached %v, codes %v; want the goal after AUTHENTICATION_FAILED", r.Scenario, r.Policy, r.Reached, r.Codes)
		}
	}
	if n := strings.Count(log.String(), "playwright driver started"); n != 1 {
		t.Errorf("the 4 runs started %d servers' browsers, want 1", n)
	}
}
