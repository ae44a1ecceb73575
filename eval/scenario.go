// Package eval measures how often an agent recovers from each kind of
// failure: scenarios (a fixture page, a goal, a fault injected at a defined
// moment, a step limit) are run by deterministic agent policies against
// retrace with recovery-plan errors and with plain errors, through the MCP
// protocol against real Chromium. docs/eval.md describes the format and the
// method, and holds the latest results.
package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
)

// Kinds are the fault kinds, in report order.
var Kinds = []string{"rerender", "navigation", "hallucinated-ref", "frame", "overlay",
	"late-element", "slow-navigation", "auth-expired", "dialog", "auth-recipe",
	"virtual-list", "shadow-rerender", "spa-route", "toast", "validation", "new-tab", "slow-search"}

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
	// Recipe gives the role a sign-in recipe (docs/roles.md) that reads
	// the credentials from its environment: the server signs the role in
	// again by itself.
	Recipe bool  `json:"recipe,omitempty"`
	Goal   Goal  `json:"goal"`
	Fault  Fault `json:"fault"`
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
	// Clicks are the elements to act on, in order, each by role and name:
	// pressed, or typed into when the target has a text.
	Clicks []Target `json:"clicks"`
	// Event is what the page reports to the fixture once the goal is
	// reached (checked out of band, never through the agent's browser).
	Event string `json:"event"`
}

// Target names an element as an agent would: by role and accessible name.
// With a Text, the agent types it into the element instead of pressing it.
type Target struct {
	Role string `json:"role"`
	Name string `json:"name"`
	Text string `json:"text,omitempty"`
}

func (t Target) String() string { return fmt.Sprintf("%s %q", t.Role, t.Name) }

// act returns the call that carries t out on the element ref.
func (t Target) act(ref string) (string, map[string]any) {
	if t.Text != "" {
		return "browser_type", map[string]any{"ref": ref, "text": t.Text}
	}
	return "browser_click", map[string]any{"ref": ref}
}

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

// FileError is a scenario file that cannot be run. File names it (as it
// was given: a path in the embedded files, or on disk for a pack), and
// Field is the JSON field at fault, like "goal.event" ("" when the file is
// not valid JSON at all).
type FileError struct {
	File  string
	Field string
	Err   error
}

func (e *FileError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.File, e.Field, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Load reads every *.json scenario of dir in fsys, sorted by kind order,
// then name. A file that cannot be run is a *FileError.
func Load(fsys fs.FS, dir string) ([]Scenario, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Scenario
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		name := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		sc, ferr := parse(data)
		if ferr != nil {
			ferr.File = name
			return nil, ferr
		}
		sc.Name = strings.TrimSuffix(e.Name(), ".json")
		out = append(out, sc)
	}
	sortScenarios(out)
	return out, nil
}

// sortScenarios puts scs in report order: by kind order, then name.
func sortScenarios(scs []Scenario) {
	sort.SliceStable(scs, func(i, j int) bool {
		if scs[i].Kind != scs[j].Kind {
			return slices.Index(Kinds, scs[i].Kind) < slices.Index(Kinds, scs[j].Kind)
		}
		return scs[i].Name < scs[j].Name
	})
}

// parse decodes and checks one scenario file; the error's File is left
// for the caller to fill in.
func parse(data []byte) (Scenario, *FileError) {
	var sc Scenario
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return sc, decodeError(data, err)
	}
	if dec.More() {
		return sc, &FileError{Err: errors.New("more than one JSON value: a file holds one scenario")}
	}
	return sc, sc.check()
}

// decodeError names the field of a decoding error, or the line and column
// of a syntax error.
func decodeError(data []byte, err error) *FileError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return &FileError{Err: fmt.Errorf("line %d, column %d: %w", line, col, err)}
	case errors.As(err, &typ):
		return &FileError{Field: typ.Field, Err: fmt.Errorf("is a JSON %s, want %s", typ.Value, typ.Type)}
	}
	// The decoder reports an unknown field only in its message.
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &FileError{Field: strings.Trim(f, `"`), Err: errors.New("unknown field (docs/eval.md lists the fields)")}
	}
	return &FileError{Err: err}
}

func lineCol(data []byte, offset int64) (line, col int) {
	before := data[:min(int(offset), len(data))]
	line = 1 + bytes.Count(before, []byte("\n"))
	// The offset counts the offending byte itself.
	col = max(1, len(before)-1-bytes.LastIndexByte(before, '\n'))
	return line, col
}

func (sc *Scenario) check() *FileError {
	bad := func(field, format string, args ...any) *FileError {
		return &FileError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	if !slices.Contains(Kinds, sc.Kind) {
		return bad("kind", "%q is not one of %s", sc.Kind, strings.Join(Kinds, ", "))
	}
	if !strings.HasPrefix(sc.Start, "/") {
		return bad("start", "%q must be a path on the fixture, like /eval/_pay.html", sc.Start)
	}
	if len(sc.Goal.Clicks) == 0 {
		return bad("goal.clicks", "missing: the elements to press, each by role and name")
	}
	for i, c := range sc.Goal.Clicks {
		if c.Role == "" || c.Name == "" {
			return bad(fmt.Sprintf("goal.clicks[%d]", i), "needs a role and a name")
		}
	}
	if sc.Goal.Event == "" {
		return bad("goal.event", "missing: what the page reports to /eval/event when the goal is reached")
	}
	if sc.Fault.After != "" && sc.Fault.After != "snapshot" {
		return bad("fault.after", `%q: the only moment is "snapshot"`, sc.Fault.After)
	}
	if sc.Fault.Script != "" && sc.Fault.After != "snapshot" {
		return bad("fault.after", `must be "snapshot" when fault.script is set`)
	}
	if sc.Steps <= 0 {
		return bad("steps", "must be positive")
	}
	if sc.Role != "" && sc.Credentials == nil {
		return bad("credentials", "a scenario with a role needs credentials")
	}
	if sc.Recipe && sc.Role == "" {
		return bad("recipe", "needs a role")
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
