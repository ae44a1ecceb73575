package snapshot

import (
	"fmt"
	"strings"
)

// View is how much of a snapshot to show: at most Budget characters of tree
// (0 means no limit), starting at line Offset.
type View struct {
	Budget int
	Offset int
	// Fence puts the tree between FenceOpen and FenceClose lines, so a
	// model can tell the page's words from retrace's.
	Fence bool
}

// The lines that fence text from the page. Page text that contains the
// closing tag gets it escaped, so a page cannot end the fence early.
const (
	FenceOpen  = "<page-content>"
	FenceClose = "</page-content>"
)

// EscapeFence keeps page text from closing a fence.
func EscapeFence(s string) string {
	return strings.ReplaceAll(s, "</page-content", "<\\/page-content")
}

// Render renders the snapshot within v. When the tree does not fit, the text
// ends with what was left out, where it starts, and the calls that reach it.
func (s *Snapshot) Render(v View) string {
	var tree strings.Builder
	RenderTree(&tree, s.Tree, 0)
	lines := strings.Split(strings.TrimRight(tree.String(), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	var b strings.Builder
	b.WriteString("URL: " + s.URL + "\nTitle: " + s.Title + "\n")
	if s.Root != "" {
		fmt.Fprintf(&b, "Subtree of %s:\n", s.Root)
	}
	if v.Offset > 0 {
		if v.Offset >= len(lines) {
			fmt.Fprintf(&b, "[Offset %d is past the end: the snapshot has %d lines. browser_snapshot() shows it from the start.]", v.Offset, len(lines))
			return b.String()
		}
		fmt.Fprintf(&b, "[Lines %d and on of %d; browser_snapshot() shows it from the start.]\n", v.Offset+1, len(lines))
	}
	if v.Fence {
		b.WriteString(FenceOpen + "\n")
	}
	used, end := 0, len(lines)
	for i := v.Offset; i < len(lines); i++ {
		if v.Budget > 0 && used+len(lines[i])+1 > v.Budget && i > v.Offset {
			end = i
			break
		}
		used += len(lines[i]) + 1
		if v.Fence {
			b.WriteString(EscapeFence(lines[i]))
		} else {
			b.WriteString(lines[i])
		}
		b.WriteString("\n")
	}
	if v.Fence {
		b.WriteString(FenceClose + "\n")
	}
	if end < len(lines) {
		left := lines[end:]
		refs := 0
		for _, l := range left {
			refs += strings.Count(l, "[ref=")
		}
		fmt.Fprintf(&b, "[Cut at the %d-character budget: %d of %d lines not shown (%d refs). It continues at line %d:\n",
			v.Budget, len(left), len(lines), refs, end+1)
		for _, a := range ancestors(lines, end) {
			b.WriteString("  " + a + "\n")
		}
		fmt.Fprintf(&b, "Read on with browser_snapshot(offset=%d), search with browser_find(text=\"...\") or browser_find(role=\"...\", name=\"...\"), or take everything with browser_snapshot(budget=0).]\n", end)
	}
	if s.Cut {
		b.WriteString("[The page is too large to read in time: the snapshot stops where the time ran out. browser_find(text=\"...\") searches the page; browser_snapshot(ref=\"...\") reads one part.]\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// ancestors returns the line at i preceded by its enclosing lines (fewer
// leading spaces), outermost first, each shortened.
func ancestors(lines []string, i int) []string {
	depth := indentOf(lines[i])
	chain := []string{short(lines[i])}
	for j := i - 1; j >= 0 && depth > 0; j-- {
		if d := indentOf(lines[j]); d < depth {
			chain = append([]string{short(lines[j])}, chain...)
			depth = d
		}
	}
	return chain
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func short(l string) string {
	l = strings.TrimSpace(l)
	if r := []rune(l); len(r) > 120 {
		l = string(r[:119]) + "…"
	}
	return l
}
