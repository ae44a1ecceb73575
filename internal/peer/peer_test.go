package peer

import (
	"bytes"
	"context"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestClickRefArg(t *testing.T) {
	tests := []struct {
		name   string
		schema map[string]any // browser_click's input schema; nil for no such tool
		want   string
	}{
		{"ref", map[string]any{"type": "object", "properties": map[string]any{"ref": map[string]any{"type": "string"}, "element": map[string]any{"type": "string"}}}, "ref"},
		{"target", map[string]any{"type": "object", "properties": map[string]any{"target": map[string]any{"type": "string"}, "element": map[string]any{"type": "string"}}}, "target"},
		{"no browser_click", nil, "ref"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "peer-test", Version: "0"}, nil)
			noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			}
			srv.AddTool(&mcp.Tool{Name: "browser_snapshot", InputSchema: map[string]any{"type": "object"}}, noop)
			if tt.schema != nil {
				srv.AddTool(&mcp.Tool{Name: "browser_click", InputSchema: tt.schema}, noop)
			}
			ctx := context.Background()
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "peer-test", Version: "0"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				cs.Close()
				ss.Wait()
			})
			if got := ClickRefArg(ctx, cs); got != tt.want {
				t.Errorf("ClickRefArg = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestInstallDone finds an install that is already there and runs no npm.
func TestInstallDone(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "node_modules", "@playwright", "mcp", "cli.js")
	if err := os.MkdirAll(filepath.Dir(cli), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cli, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	got, err := Install(dir, log.New(&logged, "test: ", 0))
	if err != nil || got != cli {
		t.Errorf("Install = %q, %v; want %q", got, err, cli)
	}
	if logged.Len() > 0 {
		t.Errorf("Install logged %q for an install that is there", logged.String())
	}
}
