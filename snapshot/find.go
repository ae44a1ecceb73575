package snapshot

import (
	"regexp"
	"strings"
)

// Query selects elements of a snapshot. Empty fields match anything; at
// least one should be set.
type Query struct {
	// Text matches, case-insensitively, part of an element's name, value,
	// placeholder or text.
	Text string
	// Role matches the role exactly (case-insensitively).
	Role string
	// Name matches part of the accessible name (case-insensitively).
	Name string
}

// Match is one element found, with the line of its enclosing element.
type Match struct {
	Ref     string
	Line    string
	Context string
}

// Find returns the nodes matching q in document order, and how many there
// are in all when more than limit matched.
func (s *Snapshot) Find(q Query, limit int) ([]Match, int) {
	text, name, role := strings.ToLower(q.Text), strings.ToLower(q.Name), strings.ToLower(q.Role)
	var out []Match
	total := 0
	s.walk(func(n, ctx *Node) {
		if matches(n, text, name, role) {
			total++
			if len(out) < limit {
				out = append(out, matchOf(n, ctx))
			}
		}
	})
	return out, total
}

// Same returns the elements with a ref whose role and name are exactly
// role and name (as a ref's record holds it, cut to MaxText): where a stale
// ref's element may be now.
func (s *Snapshot) Same(role, name string) []Match {
	var out []Match
	s.walk(func(n, ctx *Node) {
		if n.Ref != "" && n.Role == role && Clip(n.Name, MaxText) == name {
			out = append(out, matchOf(n, ctx))
		}
	})
	return out
}

// Named returns the elements with a ref whose accessible name is text,
// compared case-insensitively; a role word before or after it ("Pay
// button", "link Home") names the role too. It is where an agent that
// wrote an element's name in place of its ref meant to act.
func (s *Snapshot) Named(text string) []Match {
	want := strings.ToLower(strings.Trim(strings.TrimSpace(text), `"'`))
	role := ""
	if f := strings.Fields(want); len(f) > 1 {
		switch {
		case roleWords[f[0]]:
			role, want = f[0], strings.Join(f[1:], " ")
		case roleWords[f[len(f)-1]]:
			role, want = f[len(f)-1], strings.Join(f[:len(f)-1], " ")
		}
		want = strings.Trim(want, `"'`)
	}
	var out []Match
	if want == "" {
		return nil
	}
	s.walk(func(n, ctx *Node) {
		if n.Ref != "" && strings.ToLower(strings.TrimSpace(n.Name)) == want && (role == "" || strings.ToLower(n.Role) == role) {
			out = append(out, matchOf(n, ctx))
		}
	})
	return out
}

// roleWords are the roles an agent writes beside a name.
var roleWords = map[string]bool{"button": true, "link": true, "textbox": true, "checkbox": true, "radio": true,
	"combobox": true, "tab": true, "menuitem": true, "option": true, "switch": true}

// walk visits every node in document order with its context: the nearest
// enclosing node whose own line says something.
func (s *Snapshot) walk(visit func(n, ctx *Node)) {
	var rec func(nodes []*Node, ctx *Node)
	rec = func(nodes []*Node, ctx *Node) {
		for _, n := range nodes {
			visit(n, ctx)
			next := ctx
			// The cells of a simple row are written on its line, which
			// stays their content's context.
			if says(n) && !(isCell(n.Role) && ctx != nil && ctx.Role == "row" && simpleRow(ctx)) {
				next = n
			}
			rec(n.Children, next)
		}
	}
	rec(s.Tree, nil)
}

func matchOf(n, ctx *Node) Match {
	m := Match{Ref: n.Ref, Line: lineOf(n)}
	if ctx != nil {
		m.Context = lineOf(ctx)
	}
	return m
}

// says reports whether a node's own line says something, so it can serve as
// the context of what it contains (a bare cell or list item does not, nor a
// cell that only repeats its element's name).
func says(n *Node) bool {
	return (n.Name != "" && !namedByChild(n)) || n.Ref != "" || (n.Role == "row" && simpleRow(n)) || n.Frame ||
		(len(n.Children) == 1 && n.Children[0].Role == "text")
}

func matches(n *Node, text, name, role string) bool {
	if namedByChild(n) && role != strings.ToLower(n.Role) {
		return false // its element is the match
	}
	if role != "" && strings.ToLower(n.Role) != role {
		return false
	}
	if name != "" && !strings.Contains(strings.ToLower(n.Name), name) {
		return false
	}
	if text != "" {
		hay := n.Name + "\x00" + n.Text + "\x00" + n.Placeholder
		if n.Value != nil {
			hay += "\x00" + *n.Value
		}
		if !strings.Contains(strings.ToLower(hay), text) {
			return false
		}
	}
	return text != "" || name != "" || role != ""
}

// lineOf renders one node as its single snapshot line, children inlined only
// where the tree would inline them (table rows, lone text).
func lineOf(n *Node) string {
	var b strings.Builder
	renderNode(&b, &Node{Role: n.Role, Name: n.Name, Ref: n.Ref, Text: n.Text, Level: n.Level,
		Checked: n.Checked, Disabled: n.Disabled, Expanded: n.Expanded, Selected: n.Selected,
		Pressed: n.Pressed, Required: n.Required, Invalid: n.Invalid, Readonly: n.Readonly,
		Value: n.Value, Placeholder: n.Placeholder, Frame: n.Frame, FrameError: n.FrameError,
		Children: inlineOnly(n)}, 0)
	return short(strings.TrimPrefix(strings.SplitN(b.String(), "\n", 2)[0], "- "))
}

// inlineOnly keeps the children that render on the node's own line.
func inlineOnly(n *Node) []*Node {
	if (n.Role == "row" && simpleRow(n)) || (len(n.Children) == 1 && n.Children[0].Role == "text") {
		return n.Children
	}
	return nil
}

// busyWords start the text of a notice that the page is still at work:
// "Loading payment options…", "Please wait", "Checking your card...".
var busyWords = regexp.MustCompile(`(?i)^(loading|please wait|one moment|checking|verifying|fetching|processing|searching|updating|saving|signing in|connecting)\b`)

// Busy returns the text of the first visible notice that the page is
// still at work (a progress bar's name, or a short text that starts as a
// loading message does), or "". What it announces is often not on the
// page yet: a target missing from this snapshot may come when it goes.
func (s *Snapshot) Busy() string {
	found := ""
	s.walk(func(n, _ *Node) {
		if found != "" {
			return
		}
		for _, t := range []string{n.Text, n.Name} {
			t = strings.TrimSpace(t)
			if t != "" && len(t) <= 80 && busyWords.MatchString(t) && (n.Ref == "" || n.Role == "progressbar") {
				found = t
				return
			}
		}
		if n.Role == "progressbar" && found == "" {
			found = n.Name
		}
	})
	return found
}
