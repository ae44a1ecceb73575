package snapshot

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/refs"
)

// TestFidelityTree compares more than roles and names of refs with
// Chromium's accessibility tree, on the pages of widgets drawn in svg,
// grids, CSS generated text and closed shadow roots:
//
//   - context: the table, grid and radio group structure around every ref
//     (grid "Files" > row > gridcell > link), so a control is seen in its
//     row and column; a cell that holds only that control has Chromium's
//     name for it, and the snapshot's text shows a grid's cell with the
//     control;
//   - names: every named heading, cell, image, group and grid of the
//     snapshot is a node of that role and name in Chromium's tree;
//   - text: every text Chromium shows (CSS generated text included) is in
//     the snapshot, as text or inside a name.
func TestFidelityTree(t *testing.T) {
	eng := NewEngine()
	page := testPage(t, eng.InitScript())
	cdp, err := page.Context().NewCDPSession(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a11y/svg.html", "a11y/grid.html", "a11y/generated.html", "a11y/shadow-closed.html"} {
		t.Run(name, func(t *testing.T) {
			for _, d := range treeDisagreements(t, eng, page, cdp, name) {
				t.Errorf("%s", d)
			}
		})
	}
}

// contextRoles are the roles that place a control in a structure.
var contextRoles = map[string]bool{
	"table": true, "grid": true, "treegrid": true, "row": true, "cell": true, "gridcell": true,
	"columnheader": true, "rowheader": true, "radiogroup": true,
}

// namedRoles are the roles whose names the names check compares.
var namedRoles = map[string]bool{
	"heading": true, "cell": true, "gridcell": true, "columnheader": true, "rowheader": true,
	"img": true, "group": true, "radiogroup": true, "grid": true, "table": true, "graphics-symbol": true,
}

// contextStep is one ancestor in a context chain; structures are named, rows
// and cells are placed by their role alone.
func contextStep(role, name string) string {
	if role == "table" || role == "grid" || role == "treegrid" || role == "radiogroup" {
		return fmt.Sprintf("%s %q", role, collapseSpace(name))
	}
	return role
}

// axTreeNode is a node of Chromium's tree with its parent's id.
type axTreeNode struct {
	axNode
	parent string
}

func treeDisagreements(t *testing.T, eng *Engine, page playwright.Page, cdp playwright.CDPSession, name string) []string {
	t.Helper()
	if _, err := page.Goto(fx.Page(name), playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
		t.Fatal(err)
	}
	snap, err := eng.Capture(page, refs.New())
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range snap.Refs {
		el, err := eng.Resolve(rec)
		if err != nil {
			t.Fatalf("resolve %s: %v", rec.Ref, err)
		}
		if _, err := el.Evaluate("(e, v) => e.setAttribute('data-fidelity', v)", rec.Ref); err != nil {
			t.Fatal(err)
		}
	}
	docRes, err := cdpCall(cdp, "DOM.getDocument", map[string]any{"depth": -1, "pierce": true})
	if err != nil {
		t.Fatal(err)
	}
	byRef := map[string]int{}
	walkDOM(docRes["root"], false, func(id int, e domElement) {
		if ref, ok := e.attrs["data-fidelity"]; ok {
			byRef[ref] = id
		}
	})
	full, err := cdpCall(cdp, "Accessibility.getFullAXTree", nil)
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]*axTreeNode{}
	byDOM := map[int]string{}
	var order []string
	for _, n := range list(full["nodes"]) {
		m := obj(n)
		id := str(m["nodeId"])
		nodes[id] = &axTreeNode{axNode: axOf(m)}
		order = append(order, id)
		if d := num(m["backendDOMNodeId"]); d != 0 {
			if _, seen := byDOM[d]; !seen {
				byDOM[d] = id
			}
		}
	}
	for _, n := range list(full["nodes"]) {
		m := obj(n)
		for _, c := range list(m["childIds"]) {
			if k := nodes[str(c)]; k != nil {
				k.parent = str(m["nodeId"])
			}
		}
	}

	var out []string
	var nRefs, nNames, nTexts int
	// Context of every ref.
	lines := strings.Split(snap.Text(), "\n")
	var walk func(ns []*Node, parent *Node, chain []string)
	walk = func(ns []*Node, parent *Node, chain []string) {
		for _, n := range ns {
			if n.Ref != "" && parent != nil && isCell(parent.Role) {
				if id, ok := byDOM[byRef[n.Ref]]; ok {
					if p := nodes[nodes[id].parent]; p != nil && chromiumRole(p.role) == parent.Role && onlyChild(nodes, nodes[id].parent, id) && p.name != parent.Name {
						out = append(out, fmt.Sprintf("%s: the %s holding %s is named %q (retrace) vs %q (chromium)", name, parent.Role, n.Ref, parent.Name, p.name))
					}
				}
				if parent.Role == "gridcell" && !cellShown(lines, parent.Role, n.Ref) {
					out = append(out, fmt.Sprintf("%s: the snapshot shows %s without its %s", name, n.Ref, parent.Role))
				}
			}
			if n.Ref != "" {
				nRefs++
				got := strings.Join(chain, " > ")
				id, ok := byDOM[byRef[n.Ref]]
				if !ok {
					out = append(out, fmt.Sprintf("%s: %s %s %q has no node in Chromium's tree", name, n.Ref, n.Role, n.Name))
				} else {
					var want []string
					for p := nodes[id].parent; p != ""; p = nodes[p].parent {
						a := nodes[p]
						if r := chromiumRole(a.role); !a.ignored && contextRoles[r] {
							want = append([]string{contextStep(r, a.name)}, want...)
						}
					}
					if w := strings.Join(want, " > "); w != got {
						out = append(out, fmt.Sprintf("%s: %s %s %q sits in %q (retrace) vs %q (chromium)", name, n.Ref, n.Role, n.Name, got, w))
					}
				}
			}
			next := chain
			if contextRoles[n.Role] {
				next = append(append([]string(nil), chain...), contextStep(n.Role, n.Name))
			}
			if !n.Frame {
				walk(n.Children, n, next)
			}
		}
	}
	walk(snap.Tree, nil, nil)

	// Names: each named node of namedRoles is one of Chromium's.
	have := map[string]int{}
	for _, id := range order {
		if a := nodes[id]; !a.ignored {
			have[chromiumRole(a.role)+"\x00"+collapseSpace(stripPrivateUse(a.name))]++
		}
	}
	var names func(ns []*Node)
	names = func(ns []*Node) {
		for _, n := range ns {
			if namedRoles[n.Role] && n.Name != "" {
				nNames++
				k := n.Role + "\x00" + collapseSpace(n.Name)
				if have[k] == 0 {
					out = append(out, fmt.Sprintf("%s: %s %q (retrace) is not in Chromium's tree", name, n.Role, n.Name))
				} else {
					have[k]--
				}
			}
			names(n.Children)
		}
	}
	names(snap.Tree)

	// Text: what Chromium shows is in the snapshot, spaces aside.
	shown := squeeze(snap.Text())
	for _, id := range order {
		a := nodes[id]
		if a.ignored || a.role != "StaticText" {
			continue
		}
		s := squeeze(stripPrivateUse(a.name))
		if s != "" {
			nTexts++
		}
		if s != "" && !strings.Contains(shown, s) {
			out = append(out, fmt.Sprintf("%s: text %q (chromium) is not in the snapshot", name, a.name))
		}
	}
	t.Logf("%d refs placed, %d names and %d texts compared", nRefs, nNames, nTexts)
	if len(out) > 0 {
		t.Logf("snapshot:\n%s", snap.Text())
	}
	return out
}

// onlyChild reports whether id is the one child of parent in Chromium's
// tree that is not ignored.
func onlyChild(nodes map[string]*axTreeNode, parent, id string) bool {
	for k, n := range nodes {
		if n.parent == parent && k != id && !n.ignored {
			return false
		}
	}
	return true
}

// cellShown reports whether the rendered line of ref shows the cell around
// it: "gridcell: link … [ref=e1]" on a row's line, or a "- gridcell" line
// it is indented under.
func cellShown(lines []string, role, ref string) bool {
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	for i, l := range lines {
		at := strings.Index(l, "[ref="+ref+"]")
		if at < 0 {
			continue
		}
		if strings.Contains(l[:at], role) {
			return true
		}
		for j := i - 1; j >= 0; j-- {
			if indent(lines[j]) < indent(l) {
				return strings.HasPrefix(strings.TrimSpace(lines[j]), "- "+role)
			}
		}
		return false
	}
	return false
}

// squeeze drops all white space: the snapshot and Chromium break text in
// different places.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
