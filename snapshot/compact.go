package snapshot

// compact removes what the bridge's per-element view cannot see is
// redundant: a label's text right beside the control it names (the name
// already says it), and a paragraph that only wraps one element.
func compact(nodes []*Node) []*Node {
	out := nodes[:0]
	for i, n := range nodes {
		if n.Role == "text" && (echoes(n, nodes, i-1) || echoes(n, nodes, i+1)) {
			continue
		}
		n.Children = compact(n.Children)
		if n.Role == "paragraph" && n.Name == "" && n.Ref == "" && len(n.Children) == 1 && n.Children[0].Role != "text" {
			out = append(out, n.Children[0])
			continue
		}
		out = append(out, n)
	}
	return out
}

// echoes reports whether text node t repeats the name of the control at j.
func echoes(t *Node, nodes []*Node, j int) bool {
	if j < 0 || j >= len(nodes) {
		return false
	}
	c := nodes[j]
	return c.Ref != "" && c.Role != "text" && c.Name != "" && c.Name == t.Text
}
