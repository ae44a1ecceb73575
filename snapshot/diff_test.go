package snapshot

import (
	"fmt"
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
