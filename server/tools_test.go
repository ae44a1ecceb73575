package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"browser_navigate", map[string]any{}, []string{"url", "required"}},
		{"browser_navigate", map[string]any{"url": 42}, []string{"url (string, required)"}},
		{"browser_click", map[string]any{"ref": true}, []string{"ref (string, required)", "element (string, optional)"}},
		{"browser_click", map[string]any{"ref": "e1", "selector": "#x"}, []string{"selector"}},
		{"browser_type", map[string]any{"ref": "e1"}, []string{"text", "submit (boolean, optional)"}},
		{"browser_type", map[string]any{"ref": "e1", "text": "x", "submit": "yes"}, []string{"submit"}},
	}
	for _, tc := range cases {
		r := c.fail(tc.tool, tc.args, llmerr.InvalidParams)
		mustContain(t, r.Text, tc.want...)
		mustContain(t, r.Text, tc.tool+"(")
	}
	huge := strings.Repeat("x", maxTypeText+1)
	r := c.fail("browser_type", map[string]any{"ref": "e1", "text": huge}, llmerr.InvalidParams)
	c.golden("INVALID_PARAMS", r)
	mustContain(t, r.Text, "at most 100000")
	if len(r.Text) > 2000 {
		t.Errorf("the error repeats the huge text (%d bytes)", len(r.Text))
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	addTool(c.srv, &mcp.Tool{Name: "test_panic", Description: "panics"},
		func(context.Context, *call, struct{}) (*response, error) { panic("boom") })
	r := c.fail("test_panic", nil, llmerr.InternalError)
	c.golden("INTERNAL_ERROR", r)
	mustContain(t, r.Text, "still running", "boom")
	// The server survives and keeps serving.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
}

// TestToolSnaps keeps every tool's definition as a golden file, so a schema
// change is always deliberate (go test ./server -run TestToolSnaps -update).
func TestToolSnaps(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "testdata", "toolsnaps")
	seen := map[string]bool{}
	for _, tool := range res.Tools {
		seen[tool.Name+".json"] = true
		got, err := json.MarshalIndent(tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, tool.Name+".json")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no golden file (run go test ./server -run TestToolSnaps -update): %v", tool.Name, err)
			continue
		}
		if string(want) != string(got) {
			t.Errorf("%s schema changed; if intended, run go test ./server -run TestToolSnaps -update\ngot:\n%s", tool.Name, got)
		}
	}
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if !seen[f.Name()] {
			t.Errorf("golden file %s has no tool", f.Name())
		}
	}
	for _, name := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_close"} {
		if !seen[name+".json"] {
			t.Errorf("tool %s is missing", name)
		}
	}
}

// TestCataloguePlansNameRealTools checks the plans of docs/errors.md and the
// catalogue's default steps against the tools this server lists.
func TestCataloguePlansNameRealTools(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tool := range res.Tools {
		listed[tool.Name] = true
	}
	args := c.listedArgs()
	check := func(where string, acts []llmerr.StructuredAction) {
		for _, a := range acts {
			if !listed[a.Tool] {
				t.Errorf("%s names %s, which tools/list does not have", where, a.Tool)
				continue
			}
			for arg := range a.Args {
				if !args[a.Tool][arg] {
					t.Errorf("%s passes %s to %s, which does not take it", where, arg, a.Tool)
				}
			}
		}
	}
	for code, e := range llmerr.Examples() {
		check("example of "+string(code), e.Structured().Actions)
		check("default steps of "+string(code), (&llmerr.Error{Code: code}).Structured().Actions)
	}
}

func TestPlainErrorStyle(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{ErrorStyle: llmerr.StylePlain})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	c.ok("browser_snapshot", nil)
	r := c.fail("browser_click", map[string]any{"ref": "e999"}, llmerr.UnknownRef)
	if strings.Contains(r.Text, "\n") || strings.Contains(r.Text, "Action Required") {
		t.Errorf("plain style rendered a plan:\n%s", r.Text)
	}
	mustContain(t, r.Text, `Ref "e999" was not issued`)
	// Programs still get the whole structured error.
	if len(r.Structured["actions"].([]any)) == 0 {
		t.Error("plain style dropped the structured actions")
	}
}
