package snapshot

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/refs"
)

// BenchmarkCapture times the bridge walk plus decoding, per table size,
// without MCP around it:
//
//	go test ./snapshot -run '^$' -bench Capture
func BenchmarkCapture(b *testing.B) {
	page := testPage(b, "")
	for _, rows := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			if _, err := page.Goto(fmt.Sprintf("%s/table?rows=%d", fx.URL, rows), playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
				b.Fatal(err)
			}
			eng, reg := NewEngine(), refs.New()
			if _, err := eng.Capture(page, reg); err != nil { // installs the bridge
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := eng.Capture(page, reg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCaptureNodes times a capture of huge.html at n elements, as a
// soup of buttons and spans (nodes=n) and as one long run of text (text=n),
// and reports the cost per element, which should stay flat as the page
// grows: a step that rescans the page, or copies what the walk built so
// far, makes it climb. renderer-ns/node is the page's main thread CPU time
// alone (Chromium's ThreadTime), steadier than wall time on a busy machine:
//
//	go test ./snapshot -run '^$' -bench CaptureNodes -benchtime 2x
func BenchmarkCaptureNodes(b *testing.B) {
	page := testPage(b, "")
	cdp, err := page.Context().NewCDPSession(page)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cdp.Send("Performance.enable", nil); err != nil {
		b.Fatal(err)
	}
	for _, shape := range []string{"nodes", "text"} {
		for _, n := range []int{20000, 50000, 100000, 200000} {
			b.Run(fmt.Sprintf("%s=%d", shape, n), func(b *testing.B) {
				if _, err := page.Goto(fx.Page(fmt.Sprintf("huge.html?%s=%d", shape, n)), playwright.PageGotoOptions{
					WaitUntil: playwright.WaitUntilStateLoad, Timeout: playwright.Float(120000)}); err != nil {
					b.Fatal(err)
				}
				eng, reg := NewEngine(), refs.New()
				// The whole page is walked, however long it takes: a cut walk
				// would make the big sizes look cheap.
				eng.WalkBudget, eng.AnswerGrace = 10*time.Minute, time.Minute
				snap, err := eng.Capture(page, reg) // installs the bridge, issues the refs
				if err != nil {
					b.Fatal(err)
				}
				if snap.Cut || shape == "nodes" && len(snap.Refs) < n/10 {
					b.Fatalf("the walk read %d refs (cut=%v)", len(snap.Refs), snap.Cut)
				}
				cpu0 := threadTime(b, cdp)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := eng.Capture(page, reg); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				per := float64(b.N) * float64(n)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/node")
				b.ReportMetric((threadTime(b, cdp)-cpu0)*1e9/per, "renderer-ns/node")
			})
		}
	}
}

// threadTime returns the CPU seconds the page's main thread has used.
func threadTime(b *testing.B, cdp playwright.CDPSession) float64 {
	b.Helper()
	v, err := cdp.Send("Performance.getMetrics", nil)
	if err != nil {
		b.Fatal(err)
	}
	ms, _ := v.(map[string]any)["metrics"].([]any)
	for _, m := range ms {
		if m, ok := m.(map[string]any); ok && m["name"] == "ThreadTime" {
			switch t := m["value"].(type) {
			case float64:
				return t
			case int:
				return float64(t)
			}
		}
	}
	b.Fatal("no ThreadTime metric")
	return 0
}

// BenchmarkRender times the Go renderer alone on a synthetic 5,000-row table.
func BenchmarkRender(b *testing.B) {
	rows := make([]*Node, 5000)
	for i := range rows {
		n := fmt.Sprint(i)
		rows[i] = &Node{Role: "row", Children: []*Node{
			{Role: "cell", Children: []*Node{{Role: "link", Name: "Item " + n, Ref: "e" + n}}},
			{Role: "cell", Name: "Description of item " + n},
			{Role: "cell", Children: []*Node{{Role: "checkbox", Name: "Select item " + n, Ref: "e" + n}}},
			{Role: "cell", Children: []*Node{{Role: "button", Name: "Edit", Ref: "e" + n}}},
		}}
	}
	s := &Snapshot{URL: "http://x/", Title: "T", Tree: []*Node{{Role: "table", Children: rows}}}
	var out string
	for i := 0; i < b.N; i++ {
		out = s.Render(View{})
	}
	b.ReportMetric(float64(len(out)), "bytes")
	if !strings.Contains(out, `button "Edit" [ref=e4999]`) {
		b.Fatal("render lost rows")
	}
}
