package eval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

// TestLLMPolicyTalksChatCompletions drives the llm policy against a scripted
// OpenAI-compatible endpoint: it checks the requests the policy sends (model,
// tools, the tool results fed back) and that the tool calls it gets back
// are made. The script stands in for a model; no model runs in CI.
func TestLLMPolicyTalksChatCompletions(t *testing.T) {
	var turns int
	var sawTools, sawAuth bool
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		sawAuth = r.Header.Get("Authorization") == "Bearer test-key"
		var req struct {
			Model    string        `json:"model"`
			Messages []chatMessage `json:"messages"`
			Tools    []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		for _, tl := range req.Tools {
			sawTools = sawTools || tl.Function.Name == "browser_click"
		}
		turns++
		last := req.Messages[len(req.Messages)-1]
		call := func(name string, args map[string]any) {
			a, _ := json.Marshal(args)
			json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
				"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
					"function": map[string]any{"name": name, "arguments": string(a)}}}}}}})
		}
		switch {
		case last.Role == "user":
			task := last.Content
			url := strings.Fields(task)[1]
			call("browser_navigate", map[string]any{"url": strings.TrimSuffix(url, ",")})
		case strings.HasPrefix(last.Content, "Navigated"):
			call("browser_snapshot", nil)
		case FindRef(last.Content, Target{Role: "button", Name: "Pay"}) != "":
			call("browser_click", map[string]any{"ref": FindRef(last.Content, Target{Role: "button", Name: "Pay"})})
		default:
			json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "Done."}}}})
		}
	}))
	defer api.Close()
	os.Setenv("RETRACE_TEST_LLM_KEY", "test-key")
	defer os.Unsetenv("RETRACE_TEST_LLM_KEY")
	var sc Scenario
	for _, s := range loadAll(t) {
		if s.Name == "rerender-button" {
			sc = s
		}
	}
	runs, err := Evaluate(context.Background(), Options{Scenarios: []Scenario{sc},
		Policies: []Policy{NewLLM(LLMOptions{URL: api.URL + "/v1", Model: "scripted", KeyEnv: "RETRACE_TEST_LLM_KEY"})},
		Servers:  []*Server{retrace}, Styles: []llmerr.Style{llmerr.StyleRecovery}, K: 1}, fx)
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if !sawTools || !sawAuth || turns < 4 {
		t.Errorf("requests: tools listed %v, key sent %v, %d turns", sawTools, sawAuth, turns)
	}
	var tools []string
	for _, s := range r.Trace {
		tools = append(tools, s.Tool)
	}
	// The script clicks the ref of the snapshot it read; the fault replaced
	// that button, so the click is a STALE_REF the script does not handle.
	if got := strings.Join(tools, ","); got != "browser_navigate,browser_snapshot,browser_click" || r.Reached {
		t.Errorf("calls %s, reached %v", got, r.Reached)
	}
	if len(r.Codes) != 1 || r.Codes[0] != "STALE_REF" {
		t.Errorf("codes %v", r.Codes)
	}
}
