package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkColdStartToFirstSnapshot times what a client waits for from
// spawning the binary to holding the first snapshot: process start,
// initialize, driver and Chromium start, navigate, snapshot.
//
//	go test . -run '^$' -bench ColdStart -benchtime 5x
func BenchmarkColdStartToFirstSnapshot(b *testing.B) {
	ctx := context.Background()
	var first time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: exec.Command(binary)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": fx.Page("form.html")}}); err != nil {
			b.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_snapshot"})
		if err != nil || res.IsError || !strings.Contains(textOf(res), "[ref=e") {
			b.Fatalf("snapshot: %v %s", err, textOf(res))
		}
		first += time.Since(start)
		b.StopTimer()
		cs.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "ms-to-first-snapshot")
}
