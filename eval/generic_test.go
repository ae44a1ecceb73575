package eval

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testAgent is an agent on a server with these tools and the adapter of
// that name, with no session: for the parts of policies that only read.
func testAgent(t *testing.T, adapter string, tools ...string) *Agent {
	t.Helper()
	as, err := Adapters()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{server: &Server{}}
	for _, a := range as {
		if a.Name == adapter {
			p.server.adapter = a
		}
	}
	if p.server.adapter == nil {
		t.Fatalf("no adapter %s", adapter)
	}
	for _, name := range tools {
		p.tools = append(p.tools, &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}})
	}
	return &Agent{p: p}
}

func TestGenericExplicitCalls(t *testing.T) {
	g := &generic{a: testAgent(t, "retrace", "browser_click", "browser_snapshot", "browser_tabs", "browser_evaluate")}
	text := `The button was replaced. Call browser_snapshot() and then browser_click(ref="e12") — the new Pay.
Or browser_tabs(action="select", index=1). Not a tool: print(x). Placeholder: browser_click(ref="…").
browser_evaluate(function="() => paid()") is never followed; nor is browser_click(the button).
JSON form: browser_tabs({"action": "list"})`
	got := g.explicit(text)
	want := []PlanStep{
		{Tool: "browser_snapshot", Args: map[string]any{}},
		{Tool: "browser_click", Args: map[string]any{"ref": "e12"}},
		{Tool: "browser_tabs", Args: map[string]any{"action": "select", "index": float64(1)}},
		{Tool: "browser_tabs", Args: map[string]any{"action": "list"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("explicit calls (-want +got):\n%s", d)
	}
}

func TestAdaptersFindRefs(t *testing.T) {
	for _, c := range []struct {
		adapter, text, want string
		target              Target
	}{
		{"retrace", "- main:\n  - button \"Pay now\" [ref=e7]\n", "e7", Target{Role: "button", Name: "Pay now"}},
		{"playwright-mcp", "- generic [ref=f2e1]:\n  - button \"Pay\" [ref=f2e4] [cursor=pointer]\n", "f2e4", Target{Role: "button", Name: "Pay"}},
		{"chrome-devtools-mcp", "uid=1_0 RootWebArea \"Shop\"\n  uid=1_3 button \"Pay\" focusable\n", "1_3", Target{Role: "button", Name: "Pay"}},
		{"retrace", "- button \"Pay\" [disabled]\n", "", Target{Role: "button", Name: "Pay"}},
	} {
		a := testAgent(t, c.adapter)
		if got := a.FindRef(c.text, c.target); got != c.want {
			t.Errorf("%s: FindRef(%v) = %q, want %q", c.adapter, c.target, got, c.want)
		}
	}
}

func TestPickAdapter(t *testing.T) {
	as, err := Adapters()
	if err != nil {
		t.Fatal(err)
	}
	tools := func(names ...string) []*mcp.Tool {
		var out []*mcp.Tool
		for _, n := range names {
			out = append(out, &mcp.Tool{Name: n})
		}
		return out
	}
	for _, c := range []struct {
		name  string
		tools []*mcp.Tool
		want  string
	}{
		{"retrace", tools("browser_snapshot", "select_role"), "retrace"},
		{"Playwright", tools("browser_snapshot", "browser_click"), "playwright-mcp"},
		{"chrome_devtools", tools("take_snapshot", "click"), "chrome-devtools-mcp"},
	} {
		a, err := pick(as, &mcp.Implementation{Name: c.name}, c.tools)
		if err != nil || a.Name != c.want {
			t.Errorf("%s: adapter %v, %v; want %s", c.name, a, err, c.want)
		}
	}
	if _, err := pick(as, &mcp.Implementation{Name: "other"}, tools("fetch")); err == nil {
		t.Error("a server with no browser tools got an adapter")
	}
}

func TestParseServer(t *testing.T) {
	s, err := ParseServer(`playwright-mcp=npx @playwright/mcp@0.0.83 --headless`)
	if err != nil || s.Name != "playwright-mcp" || s.Command != "npx @playwright/mcp@0.0.83 --headless" {
		t.Errorf("got %+v, %v", s, err)
	}
	wd, _ := os.Getwd()
	if s, err := ParseServer("local=bin/retrace --headless"); err != nil || s.Command != filepath.Join(wd, "bin/retrace")+" --headless" {
		t.Errorf("a relative program path: got %+v, %v; want it absolute from the working directory", s, err)
	}
	for _, bad := range []string{"", "=cmd", "name=", "na me=cmd", "no-equals"} {
		if _, err := ParseServer(bad); err == nil {
			t.Errorf("ParseServer(%q) accepted it", bad)
		}
	}
}

// TestGenericReadsNewElementsInResults: a target a result shows with a ref
// not read before is acted on from there; a ref read before (a line saying
// the element went away) is not, nor is anything in an error or a
// snapshot (which the policy reads as the page).
func TestGenericReadsNewElementsInResults(t *testing.T) {
	g := &generic{a: testAgent(t, "retrace", "browser_click", "browser_snapshot", "browser_press_key"), read: map[string]bool{}}
	reorder := func(n string) Target { return Target{Role: "button", Name: "Reorder order #" + n} }
	g.keep("browser_snapshot", Result{Text: "- list \"Orders\":\n  - button \"Reorder order #9\" [ref=e2]\n  - button \"Reorder order #8\" [ref=e3]\n"})
	if ref := g.shown(reorder("9")); ref != "" {
		t.Errorf("a snapshot's element counted as new in a result: %s", ref)
	}
	g.keep("browser_press_key", Result{Text: `Pressed PageDown.
Changes since the last snapshot:
- added in list "Orders":
  - button "Reorder order #7" [ref=e4]
- removed from list "Orders":
  - button "Reorder order #9" [ref=e2]
`})
	for _, c := range []struct {
		target Target
		want   string
	}{
		{reorder("7"), "e4"},
		{reorder("9"), ""}, // read before: it went away
		{reorder("8"), ""}, // not in the result
	} {
		if got := g.shown(c.target); got != c.want {
			t.Errorf("shown(%v) = %q, want %q", c.target, got, c.want)
		}
	}
	// The next result replaces what the last one showed; an error shows
	// nothing to act on.
	g.keep("browser_click", Result{Text: "Error: the click timed out\n- button \"Reorder order #6\" [ref=e5]", IsError: true})
	if ref := g.shown(reorder("7")); ref != "" {
		t.Errorf("a result's element outlived the next result: %s", ref)
	}
	if ref := g.shown(reorder("6")); ref != "" {
		t.Errorf("an error's element counted as shown: %s", ref)
	}
}
