package snapshot

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func btn(name, ref string) *Node { return &Node{Role: "button", Name: name, Ref: ref} }
func txt(s string) *Node         { return &Node{Role: "text", Text: s} }
func box(role, name string, kids ...*Node) *Node {
	return &Node{Role: role, Name: name, Children: kids}
}

func TestDiff(t *testing.T) {
	yes := true
	base := func() []*Node {
		return []*Node{
			box("main", "",
				&Node{Role: "heading", Name: "Orders", Level: 1},
				btn("Open", "e1"),
				&Node{Role: "checkbox", Name: "Agree", Ref: "e2"},
				box("list", "", txt("Saved 2 items")),
			),
		}
	}
	for _, tc := range []struct {
		name string
		edit func(n []*Node) []*Node
		want []string // lines the rendering must hold
		not  []string // lines it must not hold
	}{
		{"nothing", func(n []*Node) []*Node { return n }, []string{"No change in the page's elements"}, nil},
		{"a dialog appears", func(n []*Node) []*Node {
			return append(n, &Node{Role: "dialog", Name: "Confirm", Ref: "e9", Children: []*Node{txt("Sure?"), btn("OK", "e10")}})
		}, []string{"- added:", `  - dialog "Confirm" [ref=e9]:`, `    - button "OK" [ref=e10]`}, []string{"removed", "- changed"}},
		{"a button appears inside main", func(n []*Node) []*Node {
			m := n[0]
			m.Children = append(m.Children[:2], append([]*Node{btn("Close", "e7")}, m.Children[2:]...)...)
			return n
		}, []string{`- added in main:`, `  - button "Close" [ref=e7]`}, []string{"removed", `button "Open"`}},
		{"a button goes", func(n []*Node) []*Node {
			m := n[0]
			m.Children = append(m.Children[:1], m.Children[2:]...)
			return n
		}, []string{"- removed from main:\n  - button \"Open\" [ref=e1]"}, []string{"added"}},
		{"a checkbox is checked", func(n []*Node) []*Node {
			n[0].Children[2].Checked = true
			return n
		}, []string{`- changed: checkbox "Agree" [checked] [ref=e2] (was: not [checked])`}, []string{"added", "removed"}},
		{"a text changes", func(n []*Node) []*Node {
			n[0].Children[3].Children[0].Text = "Saved 3 items"
			return n
		}, []string{`- changed: list: Saved 3 items (was: Saved 2 items)`}, nil},
		{"a section expands", func(n []*Node) []*Node {
			n[0].Children[1].Expanded = &yes
			n[0].Children = append(n[0].Children, btn("More", "e12"))
			return n
		}, []string{`- changed: button "Open" [expanded] [ref=e1] (was: not [expanded])`, `  - button "More" [ref=e12]`}, []string{"removed"}},
		{"a button is drawn again as it was", func(n []*Node) []*Node {
			n[0].Children[1] = btn("Open", "e20")
			return n
		}, []string{`- redrawn: button "Open" [ref=e20] (was e1)`}, []string{"removed", "added", "- changed"}},
		{"a button is drawn again with another name", func(n []*Node) []*Node {
			n[0].Children[1] = btn("Close", "e20")
			return n
		}, []string{`  - button "Open" [ref=e1]`, `  - button "Close" [ref=e20]`}, []string{"drawn again"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := &Snapshot{Tree: base()}
			now := &Snapshot{Tree: tc.edit(base())}
			got := Diff(old, now).Render(0, false)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in:\n%s", w, got)
				}
			}
		})
	}
}

// A change far larger than the budget is cut with the call that reads on,
// and a rewrite of the whole page is too many to list.
func TestDiffBounded(t *testing.T) {
	var old, many []*Node
	for i := range 3000 {
		old = append(old, btn(fmt.Sprintf("Old %d", i), fmt.Sprintf("e%d", i)))
		many = append(many, btn(fmt.Sprintf("New %d", i), fmt.Sprintf("e%d", 5000+i)))
	}
	c := Diff(&Snapshot{Tree: old}, &Snapshot{Tree: many})
	if !c.TooMany {
		t.Fatalf("a rewrite of 3,000 lines is listed: %d added, %d removed runs", len(c.Added), len(c.Removed))
	}
	if got := c.Render(0, true); !strings.Contains(got, "browser_snapshot()") {
		t.Errorf("no call to read the page: %s", got)
	}
	grown := append(append([]*Node(nil), old...), many[:400]...)
	c = Diff(&Snapshot{Tree: old}, &Snapshot{Tree: grown})
	got := c.Render(2000, true)
	if len(got) > 2400 || !strings.Contains(got, "more change lines not shown: browser_snapshot()") {
		t.Errorf("not cut at the budget (%d bytes):\n%s", len(got), got)
	}
	if !strings.HasPrefix(got, "Changes since") || !strings.Contains(got, FenceOpen+"\n") || strings.Count(got, FenceClose) != 1 {
		t.Errorf("not fenced once:\n%s", got)
	}
}

// Part is the smallest subtree that holds every change: the list a page
// drew anew, under main, with the banner left out; the lines it sits under
// for a removed run as well as an added one; none when a change reaches
// the top level or the trees are too different to place the changes.
func TestDiffPart(t *testing.T) {
	page := func(items []*Node, pager ...*Node) []*Node {
		return []*Node{
			box("banner", "", &Node{Role: "link", Name: "Home", Ref: "e1"}),
			box("main", "",
				&Node{Role: "heading", Name: "Catalogue", Level: 1},
				box("list", "", items...),
				box("navigation", "Pages", pager...),
			),
			box("contentinfo", "", txt("Free delivery")),
		}
	}
	items := func(first int, names ...string) []*Node {
		var out []*Node
		for i, n := range names {
			out = append(out, box("listitem", "", txt(n), btn("Add "+n, fmt.Sprintf("e%d", first+i))))
		}
		return out
	}
	next := btn("Next page", "e5")
	old := &Snapshot{Tree: page(items(10, "Lamp", "Fan", "Shade"), next)}

	for _, tc := range []struct {
		name      string
		now       []*Node
		head, in  string
		lines     []string // the part's first lines, in order
		noPartFor bool
	}{
		{"rows drawn anew", page(items(20, "Desk lamp", "Floor lamp"), next), "list", "main",
			[]string{"- list:", "  - listitem:", "    - text: Desk lamp", `    - button "Add Desk lamp" [ref=e20]`}, false},
		{"rows and the pager", page(items(20, "Desk lamp"), btn("Previous page", "e30"), next), "main", "",
			[]string{"- main:", `  - heading "Catalogue" [level=1]`, "  - list:"}, false},
		{"rows removed only", page(items(10, "Lamp"), next), "list", "main",
			[]string{"- list:", "  - listitem:", "    - text: Lamp", `    - button "Add Lamp" [ref=e10]`}, false},
		{"the banner too", append([]*Node{box("banner", "", &Node{Role: "link", Name: "Account", Ref: "e40"})},
			page(items(20, "Desk lamp"), next)[1:]...), "", "", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Diff(old, &Snapshot{Tree: tc.now})
			p, ok := c.Part()
			if tc.noPartFor {
				if ok {
					t.Fatalf("a change at the top level has a part: %+v", p)
				}
				return
			}
			if !ok {
				t.Fatalf("no part for:\n%s", c.Render(0, false))
			}
			if p.Head != tc.head || p.In != tc.in {
				t.Errorf("part %q in %q, want %q in %q", p.Head, p.In, tc.head, tc.in)
			}
			if len(p.Lines) < len(tc.lines) || !slices.Equal(p.Lines[:len(tc.lines)], tc.lines) {
				t.Errorf("part lines:\n%s\nwant them to start with:\n%s", strings.Join(p.Lines, "\n"), strings.Join(tc.lines, "\n"))
			}
			for _, l := range p.Lines {
				if strings.Contains(l, "Home") || strings.Contains(l, "Free delivery") {
					t.Errorf("the part holds a line outside it: %q", l)
				}
			}
			got := p.Render(View{Fence: true})
			if !strings.HasPrefix(got, FenceOpen+"\n"+tc.lines[0]+"\n") || !strings.HasSuffix(got, "\n"+FenceClose) {
				t.Errorf("not fenced:\n%s", got)
			}
		})
	}
	var many []*Node
	for i := range 3000 {
		many = append(many, btn(fmt.Sprintf("New %d", i), fmt.Sprintf("e%d", 5000+i)))
	}
	if p, ok := Diff(old, &Snapshot{Tree: page(many, next)}).Part(); ok {
		t.Errorf("changes too many to list have a part: %s", p.Head)
	}
}

// On random trees and random edits, a part holds every line the changes
// name (each added line, each changed line as it is now, each removed
// run's context) and is one block of the new snapshot's lines.
func TestDiffPartHoldsEveryChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ref := 0
	var grow func(depth int) *Node
	grow = func(depth int) *Node {
		ref++
		switch k := rng.IntN(5); {
		case depth >= 3 || k == 0:
			return txt(fmt.Sprintf("text %d", ref))
		case k == 1:
			return btn(fmt.Sprintf("Button %d", ref), fmt.Sprintf("e%d", ref))
		default:
			n := box([]string{"list", "group", "region", "navigation"}[rng.IntN(4)], fmt.Sprintf("Box %d", ref))
			for range 1 + rng.IntN(4) {
				n.Children = append(n.Children, grow(depth+1))
			}
			return n
		}
	}
	clone := func(ns []*Node) []*Node {
		var cp func(n *Node) *Node
		cp = func(n *Node) *Node {
			c := *n
			c.Children = nil
			for _, k := range n.Children {
				c.Children = append(c.Children, cp(k))
			}
			return &c
		}
		var out []*Node
		for _, n := range ns {
			out = append(out, cp(n))
		}
		return out
	}
	// edit changes one random node below the top level: renames it, drops
	// one of its children or adds one.
	edit := func(ns []*Node) {
		var all []*Node
		var walk func(ns []*Node, depth int)
		walk = func(ns []*Node, depth int) {
			for _, n := range ns {
				if depth > 0 || len(n.Children) > 0 {
					all = append(all, n)
				}
				walk(n.Children, depth+1)
			}
		}
		walk(ns, 0)
		n := all[rng.IntN(len(all))]
		switch k := rng.IntN(3); {
		case k == 0 || len(n.Children) == 0:
			n.Name += " renamed"
			n.Text += " renamed"
		case k == 1:
			i := rng.IntN(len(n.Children))
			n.Children = append(n.Children[:i], n.Children[i+1:]...)
		default:
			n.Children = append(n.Children, grow(2))
		}
	}
	parts := 0
	for i := range 500 {
		var old []*Node
		for range 3 {
			old = append(old, box("main", fmt.Sprintf("Main %d", i), grow(1), grow(1), grow(1)))
		}
		now := clone(old)
		for range 1 + rng.IntN(3) {
			edit(now)
		}
		c := Diff(&Snapshot{Tree: old}, &Snapshot{Tree: now})
		p, ok := c.Part()
		if !ok {
			continue
		}
		parts++
		var b strings.Builder
		RenderTree(&b, now, 0)
		whole := b.String()
		block := strings.Join(p.Lines, "\n") + "\n"
		// The block is the new snapshot's lines, shifted left by the head's depth.
		found := false
		for d := 0; d < 8 && !found; d++ {
			pad := strings.Repeat("  ", d)
			shifted := pad + strings.ReplaceAll(strings.TrimSuffix(block, "\n"), "\n", "\n"+pad) + "\n"
			at := strings.Index(whole, shifted)
			found = at >= 0 && (at == 0 || whole[at-1] == '\n') &&
				(at+len(shifted) == len(whole) || indentOf(whole[at+len(shifted):]) <= 2*d)
		}
		if !found {
			t.Fatalf("case %d: the part is not a whole subtree of the new snapshot:\n%s\nof:\n%s", i, block, whole)
		}
		in := func(l string) bool { return strings.Contains(block, l) }
		for _, ch := range c.Changed {
			if !in(ch.Now) {
				t.Fatalf("case %d: changed line %q not in the part:\n%s", i, ch.Now, block)
			}
		}
		for _, ad := range c.Added {
			for _, l := range ad.Lines {
				if !in(strings.TrimSpace(l)) {
					t.Fatalf("case %d: added line %q not in the part:\n%s", i, l, block)
				}
			}
		}
		for _, rm := range c.Removed {
			if rm.Context != "" && !in(rm.Context) {
				t.Fatalf("case %d: removed run's context %q not in the part:\n%s", i, rm.Context, block)
			}
		}
	}
	t.Logf("%d of 500 random edits had a part", parts)
	if parts < 100 {
		t.Errorf("only %d of 500 random edits had a part: the test checks too little", parts)
	}
}

// On a page nested 800 levels deep, 600 buttons added at the bottom have
// the deepest group as their part.
func TestDiffPartDeep(t *testing.T) {
	build := func(extra int) []*Node {
		var kids []*Node
		for i := range 3 + extra {
			kids = append(kids, btn(fmt.Sprintf("B %d", i), fmt.Sprintf("e%d", 10+i)))
		}
		n := box("group", "Level 800", kids...)
		for d := 799; d > 0; d-- {
			n = box("group", fmt.Sprintf("Level %d", d), n)
		}
		return []*Node{box("banner", "", btn("Home", "e1")), n}
	}
	c := Diff(&Snapshot{Tree: build(0)}, &Snapshot{Tree: build(600)})
	p, ok := c.Part()
	if !ok || p.Head != `group "Level 800"` || p.In != `group "Level 799"` || len(p.Lines) != 604 {
		t.Fatalf("part %q in %q with %d lines (ok=%v)", p.Head, p.In, len(p.Lines), ok)
	}
}
