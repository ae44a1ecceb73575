package snapshot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/refs"
)

// BenchmarkCapture times the bridge walk plus decoding, per table size,
// without MCP around it:
//
//	go test ./snapshot -run '^$' -bench Capture
func BenchmarkCapture(b *testing.B) {
	ctx, err := browsers.NewContext(browser.ContextOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer browsers.ReleaseContext(ctx)
	page, err := ctx.NewPage()
	if err != nil {
		b.Fatal(err)
	}
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
