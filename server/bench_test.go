package server

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkSnapshotTable times browser_snapshot through MCP on the table
// pages (each row: a link, a text cell, a checkbox, a button):
//
//	go test ./server -run '^$' -bench SnapshotTable -benchtime 10x
func BenchmarkSnapshotTable(b *testing.B) {
	for _, rows := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			c := benchPage(b, fmt.Sprintf("/table?rows=%d", rows))
			var text string
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := c.call("browser_snapshot", nil)
				if r.IsError {
					b.Fatal(r.Text)
				}
				text = r.Text
			}
			b.StopTimer()
			b.ReportMetric(float64(len(text)), "bytes")
			b.ReportMetric(float64(strings.Count(text, "[ref=")), "refs")
		})
	}
}

// BenchmarkClickNoChange times a click round trip on a button that changes
// nothing, through MCP.
func BenchmarkClickNoChange(b *testing.B) {
	c := benchPage(b, "/table?rows=100")
	snap := c.call("browser_snapshot", nil).Text
	ref := refOf(c.t, snap, `button "Edit"`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := c.call("browser_click", map[string]any{"ref": ref}); r.IsError {
			b.Fatal(r.Text)
		}
	}
}

// BenchmarkSnapshotNestedFrames times browser_snapshot through MCP on three
// levels of same- and cross-origin iframes:
//
//	go test ./server -run '^$' -bench SnapshotNestedFrames -benchtime 20x
func BenchmarkSnapshotNestedFrames(b *testing.B) {
	c := benchPage(b, "/nested-frames?depth=3")
	c.call("browser_snapshot", nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := c.call("browser_snapshot", nil); r.IsError {
			b.Fatal(r.Text)
		}
	}
}

// BenchmarkClickInFrame times a click round trip on a button that changes
// nothing, at each level of three nested iframes that alternate between two
// origins (level 0 is the page itself), through MCP:
//
//	go test ./server -run '^$' -bench ClickInFrame -benchtime 20x
func BenchmarkClickInFrame(b *testing.B) {
	c := benchPage(b, "/nested-frames?depth=3")
	snap := c.call("browser_snapshot", nil).Text
	for level := range 4 {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			ref := refOf(c.t, snap, fmt.Sprintf(`button "Button at level %d"`, level))
			c.call("browser_click", map[string]any{"ref": ref})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := c.call("browser_click", map[string]any{"ref": ref}); r.IsError {
					b.Fatal(r.Text)
				}
			}
		})
	}
}

// benchPage connects a client to a new server, with the page at path of
// the fixture loaded; the server closes when the benchmark ends.
func benchPage(b *testing.B, path string) *client {
	b.Helper()
	t := &testing.T{}
	c := connect(t, Config{})
	b.Cleanup(c.srv.Close)
	c.t = t
	if r := c.call("browser_navigate", map[string]any{"url": fx.URL + path}); r.IsError {
		b.Fatal(r.Text)
	}
	return c
}
