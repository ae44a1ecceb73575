package main

import (
	"fmt"
	"strings"

	"github.com/tiktoken-go/tokenizer"

	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/snapshot"
)

// fenceCall is one result measured for what its fences cost.
type fenceCall struct {
	what string
	tool string
	args map[string]any
}

// fenceRow is one result with and without its fences.
type fenceRow struct {
	what          string
	bytes, tokens int
	addedBytes    int
	addedTokens   int
}

// unfence is a result as it would read without fences: the fence lines
// and inline markers gone, escaped page text written back.
var unfence = strings.NewReplacer(
	snapshot.FenceOpen+"\n", "", "\n"+snapshot.FenceClose, "",
	snapshot.FenceOpen, "", snapshot.FenceClose, "",
	`<\/page-content`, "</page-content")

// measureFences runs a typical session on a sign-in page against retrace
// and counts, for each result that carries page text, the bytes and o200k
// tokens its fences add.
func measureFences(s *server, fx *fixture.Server, enc tokenizer.Codec) ([]fenceRow, error) {
	cs, _, err := connectServer(s)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	calls := []fenceCall{
		{"browser_navigate (title)", "browser_navigate", map[string]any{"url": fx.Page("form.html")}},
		{"browser_snapshot (title and tree)", "browser_snapshot", map[string]any{}},
		{"browser_find (matches)", "browser_find", map[string]any{"role": "textbox"}},
		{"browser_evaluate (value)", "browser_evaluate", map[string]any{"function": "() => { console.log('ready'); return document.title }"}},
		{"browser_console_messages", "browser_console_messages", map[string]any{}},
		{"browser_tabs (list)", "browser_tabs", map[string]any{"action": "list"}},
	}
	var rows []fenceRow
	for _, c := range calls {
		text, _, err := call(cs, c.tool, c.args)
		if err != nil {
			return nil, err
		}
		plain := unfence.Replace(text)
		if plain == text {
			return nil, fmt.Errorf("%s: no fence in:\n%s", c.what, text)
		}
		n, _ := enc.Count(text)
		m, _ := enc.Count(plain)
		rows = append(rows, fenceRow{what: c.what, bytes: len(text), tokens: n, addedBytes: len(text) - len(plain), addedTokens: n - m})
	}
	return rows, nil
}

// renderFences formats the fence figures as a Markdown section.
func renderFences(rows []fenceRow) string {
	var b strings.Builder
	b.WriteString("\n### Fence cost\n\n")
	b.WriteString("What fencing the page's words (`<page-content>`, [snapshot-format.md](snapshot-format.md#fence)) adds to each result that carries them, in a session on the sign-in page (`form.html`): the result as returned against the same text with the fences taken out.\n\n")
	b.WriteString("| result | bytes | tokens (o200k) | added by fences: bytes | tokens |\n| --- | ---: | ---: | ---: | ---: |\n")
	tb, tt, ab, at := 0, 0, 0, 0
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", r.what, r.bytes, r.tokens, r.addedBytes, r.addedTokens)
		tb, tt, ab, at = tb+r.bytes, tt+r.tokens, ab+r.addedBytes, at+r.addedTokens
	}
	fmt.Fprintf(&b, "| **all %d** | %d | %d | **%d** | **%d** (%.1f%%) |\n", len(rows), tb, tt, ab, at, 100*float64(at)/float64(tt))
	return b.String()
}
