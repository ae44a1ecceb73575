package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// toolListBudget is what the default tools/list may cost a model, in o200k
// tokens (playwright-mcp's 25 core tools cost 4,396).
const toolListBudget = 4000

// allCapsBudget is what tools/list may cost with every capability listed
// (--caps all): the default set and the tools of docs/debugging.md.
const allCapsBudget = 6500

// TestToolListTokenBudget measures the tools/list result a client receives
// (every tool's name, description, schemas and annotations) and fails above
// the budget.
func TestToolListTokenBudget(t *testing.T) {
	t.Parallel()
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		caps   []string
		budget int
	}{
		{"default set", nil, toolListBudget},
		{"every capability (--caps all)", []string{"all"}, allCapsBudget},
	} {
		c := connect(t, Config{Caps: tc.caps})
		res, err := c.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		n, err := enc.Count(string(data))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("tools/list, %s: %d tools, %d bytes, %d o200k tokens (budget %d)", tc.name, len(res.Tools), len(data), n, tc.budget)
		per := map[string]int{}
		for _, tool := range res.Tools {
			b, _ := json.Marshal(tool)
			per[tool.Name], _ = enc.Count(string(b))
		}
		t.Logf("per tool: %v", per)
		if n > tc.budget {
			t.Errorf("tools/list, %s, costs %d tokens, over the %d budget", tc.name, n, tc.budget)
		}
	}
}

// TestToolAnnotations checks every tool says what it does to the world: a
// title, and for a tool that is not read-only, whether it is destructive;
// and for every tool whether it reaches the open world.
func TestToolAnnotations(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := map[string]bool{"browser_snapshot": true, "browser_find": true, "browser_take_screenshot": true,
		"browser_console_messages": true, "browser_network_requests": true, "browser_wait_for": true,
		"browser_inspect": true, "browser_generate_locator": true, "list_current_roles": true, "get_current_role": true}
	for _, tool := range res.Tools {
		a := tool.Annotations
		if a == nil || a.Title == "" {
			t.Errorf("%s has no annotations or title", tool.Name)
			continue
		}
		if a.ReadOnlyHint != readOnly[tool.Name] {
			t.Errorf("%s: readOnlyHint is %v", tool.Name, a.ReadOnlyHint)
		}
		if !a.ReadOnlyHint && a.DestructiveHint == nil {
			t.Errorf("%s changes things but does not say whether it is destructive", tool.Name)
		}
		if a.OpenWorldHint == nil {
			t.Errorf("%s does not say whether it reaches the open world", tool.Name)
		}
	}
}
