// Package eval measures how often an agent recovers from each kind of
// failure: scenarios (a fixture page, a goal, a fault injected at a defined
// moment, a step limit) are run by deterministic agent policies against
// retrace with recovery-plan errors and with plain errors, through the MCP
// protocol against real Chromium. docs/eval.md describes the format and the
// method, and holds the latest results.
package eval

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Kinds are the fault kinds, in report order.
var Kinds = []string{"rerender", "navigation", "hallucinated-ref", "frame", "overlay",
	"late-element", "slow-navigation", "auth-expired", "dialog"}

// Scenario is one file of testdata/eval.
type Scenario struct {
	// Name is the file name without .json.
	Name string `json:"-"`
	// Kind is one of Kinds.
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// Start is the path (on the fixture's main origin) the agent opens.
	Start string `json:"start"`
	// Variants are query strings appended to Start, one per repetition
	// (cycled), to vary the page's own timing between runs.
	Variants []string `json:"variants,omitempty"`
	// Role, when set, is a configured role the agent acts as, signed in
	// with a fresh fixture session (revoked before the run when Revoked).
	Role        string       `json:"role,omitempty"`
	Revoked     bool         `json:"revoked,omitempty"`
	Credentials *Credentials `json:"credentials,omitempty"`
	Goal        Goal         `json:"goal"`
	Fault       Fault        `json:"fault"`
	// Steps is the most tool calls the agent may make.
	Steps int `json:"steps"`
}

// Credentials are what the agent's task gives it to sign in with.
type Credentials struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// Goal is what the agent must do, and how the harness knows it was done.
type Goal struct {
	// Clicks are the elements to press, in order, each by role and name.
	Clicks []Target `json:"clicks"`
	// Event is what the page reports to the fixture once the goal is
	// reached (checked out of band, never through the agent's browser).
	Event string `json:"event"`
}

// Target names an element as an agent would: by role and accessible name.
type Target struct {
	Role string `json:"role"`
	Name string `json:"name"`
}

func (t Target) String() string { return fmt.Sprintf("%s %q", t.Role, t.Name) }

// Fault is what goes wrong, and when.
type Fault struct {
	// After "snapshot": the script runs in the page right after the
	// agent's first snapshot returns, before its next call.
	After string `json:"after,omitempty"`
	// Script is a JavaScript function run in the page by the harness
	// (through browser_evaluate, on a call the agent never sees).
	Script string `json:"script,omitempty"`
	// DelaysMs is how long to wait before the fault, one per repetition
	// (cycled): the same fault at different moments.
	DelaysMs []int `json:"delaysMs,omitempty"`
	// SettleMs is how long the harness lets the page work after the script
	// (a frame reloading) before the agent's next call.
	SettleMs int `json:"settleMs,omitempty"`
	// AgentRef replaces the ref of the agent's first click: a hallucinated
	// ref.
	AgentRef string `json:"agentRef,omitempty"`
}

// Load reads every *.json scenario of dir in fsys, sorted by kind order,
// then name.
func Load(fsys fs.FS, dir string) ([]Scenario, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	kindOrder := map[string]int{}
	for i, k := range Kinds {
		kindOrder[k] = i
	}
	var out []Scenario
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var sc Scenario
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sc); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		sc.Name = strings.TrimSuffix(e.Name(), ".json")
		if err := sc.check(kindOrder); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, sc)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return kindOrder[out[i].Kind] < kindOrder[out[j].Kind]
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func (sc *Scenario) check(kinds map[string]int) error {
	if _, ok := kinds[sc.Kind]; !ok {
		return fmt.Errorf("kind %q is not one of %s", sc.Kind, strings.Join(Kinds, ", "))
	}
	if !strings.HasPrefix(sc.Start, "/") {
		return fmt.Errorf("start %q must be a path on the fixture, like /eval/_pay.html", sc.Start)
	}
	if len(sc.Goal.Clicks) == 0 || sc.Goal.Event == "" {
		return fmt.Errorf("goal needs clicks and an event")
	}
	if sc.Fault.Script != "" && sc.Fault.After != "snapshot" {
		return fmt.Errorf(`fault.after must be "snapshot" when fault.script is set`)
	}
	if sc.Steps <= 0 {
		return fmt.Errorf("steps must be positive")
	}
	if sc.Role != "" && sc.Credentials == nil {
		return fmt.Errorf("a scenario with a role needs credentials")
	}
	return nil
}

// variant returns the start path of repetition rep.
func (sc *Scenario) variant(rep int) string {
	if len(sc.Variants) == 0 {
		return sc.Start
	}
	return sc.Start + sc.Variants[rep%len(sc.Variants)]
}

// delay returns the fault delay of repetition rep, in milliseconds.
func (f *Fault) delay(rep int) int {
	if len(f.DelaysMs) == 0 {
		return 0
	}
	return f.DelaysMs[rep%len(f.DelaysMs)]
}
