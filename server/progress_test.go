package server

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call that runs long sends progress to a client that asked for it
// (a progress token), so the client's time-out does not end it first; a
// call without a token sends none. The server declares no logging.
func TestLongCallSendsProgress(t *testing.T) {
	t.Parallel()
	srv := New(Config{ActionTimeout: 6 * time.Second}, browsers)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "progress-test", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params.Message)
			mu.Unlock()
		},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait(); srv.Close() })
	if caps := cs.InitializeResult().Capabilities; caps.Logging != nil || caps.Tools == nil {
		t.Errorf("capabilities: logging %v, tools %v; want tools only", caps.Logging, caps.Tools)
	}

	params := &mcp.CallToolParams{Name: "browser_wait_for", Arguments: map[string]any{"time": 5}}
	params.SetProgressToken("wait-1")
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("wait_for: %v %+v", err, res)
	}
	mu.Lock()
	n := len(got)
	first := strings.Join(got, " | ")
	mu.Unlock()
	if n < 2 {
		t.Errorf("a 5 s call sent %d progress notifications, want one every %v: %q", n, progressEvery, first)
	}
	if n > 0 && !strings.Contains(first, "browser_wait_for still running") {
		t.Errorf("progress messages do not name the call: %q", first)
	}

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_wait_for", Arguments: map[string]any{"time": 2.5}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Errorf("a call without a progress token sent progress: %q", got[n:])
	}
}
