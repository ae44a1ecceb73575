package snapshot

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The most characters of one text, name or value, and of a page title, a
// snapshot shows. Past them the text is cut with a marker saying how much
// was left out, so one enormous text node cannot fill a result.
const (
	MaxText  = 10000
	MaxTitle = 1000
)

// Clip cuts s to n characters, ending it with how many were left out.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s // never more characters than bytes
	}
	k := 0
	for i := range s {
		if k == n {
			return s[:i] + fmt.Sprintf("… [%d more characters not shown]", utf8.RuneCountInString(s[i:]))
		}
		k++
	}
	return s
}

// Text renders the snapshot as the compact tree an agent reads: a header
// with the page's URL and title, then one line per meaningful node.
func (s *Snapshot) Text() string {
	var b strings.Builder
	b.WriteString("URL: ")
	b.WriteString(s.URL)
	b.WriteString("\nTitle: ")
	b.WriteString(Clip(s.Title, MaxTitle))
	b.WriteString("\n")
	RenderTree(&b, s.Tree, 0)
	return strings.TrimRight(b.String(), "\n")
}

// RenderTree writes nodes as indented lines, two spaces per depth.
func RenderTree(b *strings.Builder, nodes []*Node, depth int) {
	for _, n := range nodes {
		renderNode(b, n, depth)
	}
}

func renderNode(b *strings.Builder, n *Node, depth int) {
	indent(b, depth)
	if n.Role == "text" {
		b.WriteString("- text: ")
		b.WriteString(oneLine(n.Text))
		b.WriteString("\n")
		return
	}
	b.WriteString("- ")
	if isCell(n.Role) {
		cellHead(b, n)
	} else {
		head(b, n)
	}
	switch {
	case n.Frame:
		if n.FrameError != "" {
			b.WriteString(" (not shown: ")
			b.WriteString(n.FrameError)
			b.WriteString(")\n")
			return
		}
		if len(n.Children) == 0 {
			b.WriteString(" (empty)\n")
			return
		}
		b.WriteString(":\n")
		RenderTree(b, n.Children, depth+1)
	case n.Role == "row" && simpleRow(n):
		// A simple table row reads best on one line: cell | cell | cell.
		b.WriteString(": ")
		for i, c := range n.Children {
			if i > 0 {
				b.WriteString(" | ")
			}
			inlineCell(b, c)
		}
		b.WriteString("\n")
	case allOptions(n.Children):
		// A native select's options read best on its own line.
		b.WriteString(" [options: ")
		for i, o := range n.Children {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(Clip(o.Name, MaxText)))
			flag(b, "selected", o.Selected && n.Role != "combobox")
			flag(b, "disabled", o.Disabled)
		}
		b.WriteString("]\n")
	case len(n.Children) == 1 && n.Children[0].Role == "text":
		b.WriteString(": ")
		b.WriteString(oneLine(n.Children[0].Text))
		b.WriteString("\n")
	case len(n.Children) > 0:
		b.WriteString(":\n")
		RenderTree(b, n.Children, depth+1)
	default:
		b.WriteString("\n")
	}
}

// allOptions reports whether nodes are plain options (no refs, no
// children): the options of a native select.
func allOptions(nodes []*Node) bool {
	if len(nodes) == 0 {
		return false
	}
	for _, o := range nodes {
		if o.Role != "option" || o.Ref != "" || len(o.Children) > 0 {
			return false
		}
	}
	return true
}

// head writes role "name" [state] [ref=eN] and the current value.
func head(b *strings.Builder, n *Node) {
	b.WriteString(n.Role)
	if n.Name != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(Clip(n.Name, MaxText)))
	}
	if n.Level > 0 {
		b.WriteString(" [level=")
		b.WriteString(strconv.Itoa(n.Level))
		b.WriteString("]")
	}
	tri(b, "checked", n.Checked)
	tri(b, "pressed", n.Pressed)
	flag(b, "disabled", n.Disabled)
	if n.Expanded != nil {
		if *n.Expanded {
			b.WriteString(" [expanded]")
		} else {
			b.WriteString(" [collapsed]")
		}
	}
	flag(b, "selected", n.Selected)
	flag(b, "required", n.Required)
	flag(b, "invalid", n.Invalid)
	flag(b, "readonly", n.Readonly)
	if n.Ref != "" {
		b.WriteString(" [ref=")
		b.WriteString(n.Ref)
		b.WriteString("]")
	}
	if n.Value != nil && *n.Value != "" {
		b.WriteString(": ")
		b.WriteString(strconv.Quote(Clip(*n.Value, MaxText)))
	} else if n.Placeholder != "" && n.Placeholder != n.Name {
		b.WriteString(" [placeholder=")
		b.WriteString(strconv.Quote(Clip(n.Placeholder, MaxText)))
		b.WriteString("]")
	}
}

func flag(b *strings.Builder, name string, on bool) {
	if on {
		b.WriteString(" [")
		b.WriteString(name)
		b.WriteString("]")
	}
}

func tri(b *strings.Builder, name string, v any) {
	switch v := v.(type) {
	case bool:
		flag(b, name, v)
	case string:
		if v != "" && v != "false" {
			b.WriteString(" [")
			b.WriteString(name)
			b.WriteString("=")
			b.WriteString(v)
			b.WriteString("]")
		}
	}
}

// simpleRow reports whether every cell of a row holds at most one thing:
// text, or one element without children.
func simpleRow(n *Node) bool {
	if len(n.Children) == 0 {
		return false
	}
	for _, c := range n.Children {
		if c.Role == "text" {
			continue
		}
		if !isCell(c.Role) {
			return false
		}
		if len(c.Children) > 1 {
			return false
		}
		if len(c.Children) == 1 {
			k := c.Children[0]
			if k.Role != "text" && (len(k.Children) > 0 || k.Frame) {
				return false
			}
		}
	}
	return true
}

func isCell(role string) bool {
	return role == "cell" || role == "gridcell" || role == "columnheader" || role == "rowheader"
}

// inlineCell writes one cell of a simple row: its text, or its one element,
// inside its cell (gridcell: element) in a grid.
func inlineCell(b *strings.Builder, c *Node) {
	if c.Role == "text" {
		b.WriteString(oneLine(c.Text))
		return
	}
	// A table cell's role is clear from its row; a cell that is itself
	// interactive is written with its role and ref.
	if len(c.Children) == 0 {
		if c.Ref != "" {
			head(b, c)
			return
		}
		b.WriteString(oneLine(c.Name))
		return
	}
	k := c.Children[0]
	if k.Role == "text" {
		if c.Ref != "" {
			head(b, c)
			b.WriteString(" ")
		}
		b.WriteString(oneLine(k.Text))
		return
	}
	// A grid's cell is a widget of its own (arrow keys move between cells,
	// a cell is selected), so the element is shown in it. Plain tables
	// leave it out: a word per cell of every data table, for nothing the
	// row does not already say.
	if c.Role == "gridcell" || c.Ref != "" {
		cellHead(b, c)
		b.WriteString(": ")
	}
	head(b, k)
}

// cellHead writes a cell's head, without a name its element says.
func cellHead(b *strings.Builder, c *Node) {
	if namedByChild(c) {
		cc := *c
		cc.Name = ""
		head(b, &cc)
		return
	}
	head(b, c)
}

// namedByChild reports whether n is a cell whose name only repeats that of
// the one element it holds (a cell named by its link): the element says it.
func namedByChild(n *Node) bool {
	return isCell(n.Role) && n.Name != "" && len(n.Children) == 1 && n.Children[0].Name == n.Name
}

func indent(b *strings.Builder, depth int) {
	for i := 0; i < depth; i++ {
		b.WriteString("  ")
	}
}

// oneLine puts a text on one line, cut to MaxText characters.
func oneLine(s string) string {
	s = Clip(s, MaxText)
	if strings.ContainsAny(s, "\n\r") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}
