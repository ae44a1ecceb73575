package server

// Small text helpers shared by the tool handlers.

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

// quoteAll writes each string quoted, comma-separated.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// oneLineCut puts s on one line and cuts it to n characters.
func oneLineCut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// plural returns suffix unless n is 1.
func plural(n int, suffix string) string {
	if n == 1 {
		return ""
	}
	return suffix
}

// firstNonEmpty returns the first of ss that is not empty.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// ptr returns a pointer to v, for optional fields.
func ptr[T any](v T) *T { return &v }

// since is the time since t, rounded for a result line.
func since(t time.Time) string {
	return time.Since(t).Round(10 * time.Millisecond).String()
}

// given returns the string arguments, as name-value pairs, that are set.
func given(nameValues ...string) []llmerr.Arg {
	var args []llmerr.Arg
	for i := 0; i+1 < len(nameValues); i += 2 {
		if nameValues[i+1] != "" {
			args = append(args, llmerr.A(nameValues[i], nameValues[i+1]))
		}
	}
	return args
}

// Page text in results: fenced (docs/snapshot-format.md), so a model can
// tell the page's words from retrace's, and cut, so one enormous text cannot
// fill a result.

// pageText is a short text from the page, fenced on its line: a dialog's
// message, an exception, a value.
func pageText(s string) string {
	return snapshot.Fenced(snapshot.Clip(s, snapshot.MaxText))
}

// pageTitle is a page's title, fenced and cut; an empty title has nothing
// of the page's to fence.
func pageTitle(title string) string {
	if title == "" {
		return `""`
	}
	return snapshot.Fenced(snapshot.Clip(title, snapshot.MaxTitle))
}

// titleLine is the page line that names a title. An empty title has
// nothing of the page's to fence.
func titleLine(title string) string {
	if title == "" {
		return "Title: "
	}
	return "Title: " + pageTitle(title)
}

// fenceBlock puts lines of page text between the fence's lines: one fence
// for a whole list costs less than one per line.
func fenceBlock(lines []string) []string {
	out := make([]string, 0, len(lines)+2)
	out = append(out, snapshot.FenceOpen)
	for _, l := range lines {
		out = append(out, snapshot.EscapeFence(l))
	}
	return append(out, snapshot.FenceClose)
}

// fitLines keeps the lines of a list that fit in room bytes: the first ones,
// or the last ones when newest is set (a history read newest last). It
// returns how many it left out.
func fitLines(lines []string, room int, newest bool) ([]string, int) {
	used, n := 0, 0
	for n < len(lines) {
		i := n
		if newest {
			i = len(lines) - 1 - n
		}
		if used+len(lines[i])+1 > room {
			break
		}
		used += len(lines[i]) + 1
		n++
	}
	if newest {
		return lines[len(lines)-n:], len(lines) - n
	}
	return lines[:n], len(lines) - n
}

// capText cuts a rendered result to limit bytes, on a character boundary,
// closing a fence it cut through and ending with what was left out. It is
// the last guard: the tools cut their own output first, where they can
// say how to read on.
func capText(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	note := func(left int) string {
		return fmt.Sprintf("\n[Result cut at the %d-byte limit: %d more bytes not shown. Ask for less: a part of the value, a narrower filter, or browser_snapshot(ref=...) for one element.]", limit, left)
	}
	n := max(limit-len(note(len(text)))-len(snapshot.FenceClose)-1, 0)
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	kept := text[:n]
	// Page text closes no fence (EscapeFence), so an opening line after the
	// last closing one means the cut is inside a fence.
	if strings.LastIndex(kept, snapshot.FenceOpen) > strings.LastIndex(kept, snapshot.FenceClose) {
		kept += "\n" + snapshot.FenceClose
	}
	return kept + note(len(text)-n)
}
