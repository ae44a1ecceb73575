package snapshot

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/retrace-dev/retrace/llmerr"
)

// View is how much of a snapshot to show: at most Budget characters of tree
// (0 means no limit), starting at line Offset.
type View struct {
	Budget int
	Offset int
	// Fence puts the title and the tree between FenceOpen and FenceClose
	// lines, so a model can tell the page's words from retrace's.
	Fence bool
	// Max is the most bytes the rendered text may take, notes included
	// (0: no cap). It holds whatever the budget: a result never grows past
	// what a client can take.
	Max int
	// Again are the arguments, besides ref and offset, of the call that
	// reads on after a cut (a budget, a role).
	Again []llmerr.Arg
	// Inline leaves out the URL and title lines: the result that gives the
	// page has just said both (a page navigated to, one that changed in
	// place).
	Inline bool
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

// Fenced is the fence around a short text on one line: a title, a message,
// a value.
func Fenced(s string) string {
	return FenceOpen + EscapeFence(s) + FenceClose
}

// noteRoom is what a capped view keeps free for the fence's closing line
// and the note that says where to read on.
const noteRoom = 2048

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
	title := "Title: " + Clip(s.Title, MaxTitle) + "\n"
	if v.Inline {
		title = ""
	} else {
		b.WriteString("URL: " + s.URL + "\n")
	}
	if v.Fence {
		// The title is the page's words: it goes inside the fence, and
		// what retrace says about the view stays outside.
		title = EscapeFence(title)
	} else {
		b.WriteString(title)
	}
	if s.Root != "" {
		fmt.Fprintf(&b, "Subtree of %s:\n", s.Root)
	}
	open := func() {
		if v.Fence {
			b.WriteString(FenceOpen + "\n" + title)
		}
	}
	closeFence := func() {
		if v.Fence {
			b.WriteString(FenceClose + "\n")
		}
	}
	if v.Offset > 0 {
		if v.Offset >= len(lines) {
			note := fmt.Sprintf("[Offset %d is past the end: the snapshot has %d lines. browser_snapshot() shows it from the start.]", v.Offset, len(lines))
			if v.Fence {
				b.WriteString(note + "\n")
				open()
				closeFence()
				return strings.TrimRight(b.String(), "\n")
			}
			b.WriteString(note)
			return b.String()
		}
		fmt.Fprintf(&b, "[Lines %d and on of %d; browser_snapshot() shows it from the start.]\n", v.Offset+1, len(lines))
	}
	open()
	// Everything is offered after a budget cut only when it fits a result.
	fitsAll := v.Max == 0 || b.Len()+treeBytes(lines)+noteRoom <= v.Max
	used, end, capped := 0, len(lines), false
	for i := v.Offset; i < len(lines); i++ {
		l := lines[i]
		if v.Budget > 0 && used+len(l)+1 > v.Budget && i > v.Offset {
			end = i
			break
		}
		if v.Fence {
			l = EscapeFence(l)
		}
		if v.Max > 0 && b.Len()+len(l)+1+noteRoom > v.Max {
			if i > v.Offset {
				end, capped = i, true
				break
			}
			// A first line longer than the cap is cut, so reading on
			// still moves forward.
			l = cutBytes(l, max(v.Max-b.Len()-noteRoom, 0))
		}
		used += len(lines[i]) + 1
		b.WriteString(l)
		b.WriteString("\n")
	}
	closeFence()
	if end < len(lines) {
		b.WriteString(s.cutNote(v, lines, end, capped, fitsAll, b.Len()))
	}
	if s.Cut {
		b.WriteString("[The page is too large to read in time: the snapshot stops where the time ran out. browser_find(text=\"...\") searches the page; browser_snapshot(ref=\"...\") reads one part.]\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// cutNote says what a cut view left out, where it continues, and the calls
// that reach it: capped says the result limit cut it, not the budget;
// fitsAll, that the whole tree would fit in one result. written is how much
// text comes before it: under a cap, the enclosing lines it quotes are
// dropped, outermost first, until it fits.
func (s *Snapshot) cutNote(v View, lines []string, end int, capped, fitsAll bool, written int) string {
	left := lines[end:]
	refs := 0
	for _, l := range left {
		refs += strings.Count(l, "[ref=")
	}
	var args []llmerr.Arg
	if s.Root != "" {
		args = append(args, llmerr.A("ref", s.Root))
	}
	args = append(args, v.Again...)
	readOn := llmerr.Action{Tool: "browser_snapshot", Args: append(slices.Clone(args), llmerr.A("offset", end))}
	var head, tail string
	if capped {
		head = fmt.Sprintf("[Cut to fit the result limit: %d of %d lines not shown (%d refs). It continues at line %d:\n",
			len(left), len(lines), refs, end+1)
		tail = fmt.Sprintf("Read on with %s, or search with browser_find(text=\"...\") or browser_find(role=\"...\", name=\"...\").]\n", readOn.Call())
	} else {
		head = fmt.Sprintf("[Cut at the %d-character budget: %d of %d lines not shown (%d refs). It continues at line %d:\n",
			v.Budget, len(left), len(lines), refs, end+1)
		tail = fmt.Sprintf("Read on with %s, search with browser_find(text=\"...\") or browser_find(role=\"...\", name=\"...\")", readOn.Call())
		if fitsAll {
			all := llmerr.Action{Tool: "browser_snapshot", Args: append(withoutArg(args, "budget"), llmerr.A("budget", 0))}
			tail += ", or take everything with " + all.Call()
		}
		tail += ".]\n"
	}
	chain := ancestors(lines, end)
	for {
		var b strings.Builder
		b.WriteString(head)
		for _, a := range chain {
			b.WriteString("  " + a + "\n")
		}
		b.WriteString(tail)
		if v.Max == 0 || written+b.Len() <= v.Max || len(chain) <= 1 {
			return b.String()
		}
		chain = chain[1:]
	}
}

// cutBytes cuts a line to at most n bytes, on a character boundary, and
// says so.
func cutBytes(l string, n int) string {
	const mark = " … [line cut at the result limit]"
	if len(l) <= n {
		return l
	}
	n = max(n-len(mark), 0)
	for n > 0 && !utf8.RuneStart(l[n]) {
		n--
	}
	return l[:n] + mark
}

func treeBytes(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

func withoutArg(args []llmerr.Arg, name string) []llmerr.Arg {
	return slices.DeleteFunc(slices.Clone(args), func(a llmerr.Arg) bool { return a.Name == name })
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
