package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// LLMOptions point the llm policy at an OpenAI-compatible chat completions
// endpoint. The policy is for users with a model; CI never runs it.
type LLMOptions struct {
	URL    string // base URL, like https://api.openai.com/v1
	Model  string
	KeyEnv string // environment variable holding the API key ("" or unset: none)
}

// LLM is a policy driven by a language model: it gets the task in words and
// the server's tools, and acts through tool calls until it stops or the
// step budget ends.
type LLM struct {
	o      LLMOptions
	client *http.Client
}

// NewLLM returns the llm policy.
func NewLLM(o LLMOptions) *LLM { return &LLM{o: o, client: &http.Client{Timeout: 2 * time.Minute}} }

func (*LLM) Name() string { return "llm" }

type chatMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (p *LLM) Run(a *Agent) {
	// The tools are the server's own, whichever server it is.
	evaluate, _ := a.p.native("browser_evaluate", nil)
	var tools []map[string]any
	for _, t := range a.Tools() {
		if t.Name == evaluate {
			continue // the goal must be reached through the page, not scripted
		}
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "parameters": t.InputSchema}})
	}
	var steps []string
	for _, c := range a.Goal.Clicks {
		if c.Text != "" {
			steps = append(steps, fmt.Sprintf("type %q into the %s", c.Text, c))
			continue
		}
		steps = append(steps, "press the "+c.String())
	}
	task := fmt.Sprintf("Open %s, then %s. Use the browser tools; element references come from %s.", a.StartURL, strings.Join(steps, ", then "), a.SnapshotTool())
	if a.Credentials != nil {
		task += fmt.Sprintf(" If asked to sign in, use user %q and password %q.", a.Credentials.User, a.Credentials.Password)
	}
	msgs := []chatMessage{
		{Role: "system", Content: "You operate a web browser through tools to complete the user's task. When the task is done, reply without a tool call."},
		{Role: "user", Content: task},
	}
	for !a.Stopped() {
		reply, err := p.complete(msgs, tools)
		if err != nil {
			fmt.Fprintln(os.Stderr, "llm policy:", err)
			return
		}
		msgs = append(msgs, reply)
		if len(reply.ToolCalls) == 0 {
			return
		}
		for _, tc := range reply.ToolCalls {
			var args map[string]any
			if json.Unmarshal([]byte(tc.Function.Arguments), &args) != nil || args == nil {
				args = map[string]any{}
			}
			if tc.Function.Name == "browser_click" && a.AgentRef != "" {
				args["ref"] = a.AgentRef // the hallucinated-ref fault, once
				a.AgentRef = ""
			}
			r := a.Call(tc.Function.Name, args)
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: tc.ID, Content: r.Text})
		}
	}
}

func (p *LLM) complete(msgs []chatMessage, tools []map[string]any) (chatMessage, error) {
	body, _ := json.Marshal(map[string]any{"model": p.o.Model, "messages": msgs, "tools": tools, "temperature": 0})
	req, err := http.NewRequest("POST", strings.TrimRight(p.o.URL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return chatMessage{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key := os.Getenv(p.o.KeyEnv); p.o.KeyEnv != "" && key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return chatMessage{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != http.StatusOK {
		return chatMessage{}, fmt.Errorf("chat completions answered %d: %.300s", resp.StatusCode, data)
	}
	var out struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Choices) == 0 {
		return chatMessage{}, fmt.Errorf("unexpected chat completions answer: %.300s", data)
	}
	return out.Choices[0].Message, nil
}
