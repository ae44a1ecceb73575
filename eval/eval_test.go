package eval

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/samber/lo"

	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/llmerr"
)

var (
	fx *fixture.Server
	// retrace is the server under evaluation, the binary built from this
	// module, driven over stdio as `retrace eval` drives it.
	retrace *Server
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "retrace-eval-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "retrace")
	build := exec.Command("go", "build", "-o", bin, "..")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return 0, fmt.Errorf("building retrace: %w", err)
	}
	if fx, err = fixture.Start("../testdata/pages"); err != nil {
		return 0, fmt.Errorf("fixture: %w", err)
	}
	defer fx.Close()
	adapters, err := Adapters()
	if err != nil {
		return 0, err
	}
	// The servers' own logs would drown the test's; a run's trace carries its
	// errors' text.
	retrace = &Server{Name: "retrace", Command: shellQuote(bin)}
	if err := retrace.Probe(context.Background(), adapters); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

func loadAll(t *testing.T) []Scenario {
	t.Helper()
	scs, err := Load(os.DirFS("../testdata"), "eval")
	if err != nil {
		t.Fatal(err)
	}
	return scs
}

// TestQuickSubset is the CI check of docs/eval.md: one scenario per fault
// kind, once, with the generic and the reader policies and recovery
// errors, on the retrace binary over stdio, two runs at a time. It fails
// below the target (every kind recovered), and if the runs do not come
// back in the order of the scenarios.
func TestQuickSubset(t *testing.T) {
	var subset []Scenario
	seen := map[string]bool{}
	for _, sc := range loadAll(t) {
		if !seen[sc.Kind] {
			seen[sc.Kind] = true
			subset = append(subset, sc)
		}
	}
	if len(subset) != len(Kinds) {
		t.Fatalf("the scenarios cover %d of %d kinds", len(subset), len(Kinds))
	}
	var log strings.Builder
	runs, err := Evaluate(context.Background(), Options{Scenarios: subset, Policies: []Policy{Generic{}, Reader{}},
		Servers: []*Server{retrace}, Styles: []llmerr.Style{llmerr.StyleRecovery}, K: 1,
		Parallel: 2, Progress: &log}, fx)
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lo.Map(runs, func(r Run, _ int) string { return r.Scenario + " " + r.Policy }),
		lo.FlatMap(subset, func(sc Scenario, _ int) []string { return []string{sc.Name + " generic", sc.Name + " reader"} }); !slices.Equal(got, want) {
		t.Errorf("runs came back in the order %v, want the scenarios' %v", got, want)
	}
	for _, r := range runs {
		if !r.Reached {
			t.Errorf("%s (%s): %s with recovery plans did not reach the goal; trace: %v", r.Scenario, r.Kind, r.Policy, r.Trace)
		}
		if !r.Failed {
			t.Errorf("%s (%s, %s): the fault did not happen (no failure met), so the run measures nothing", r.Scenario, r.Kind, r.Policy)
		}
	}
}
