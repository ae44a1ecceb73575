package snapshot

import (
	"slices"
	"strconv"
	"strings"
)

// parsedLine is an element line of a tree split into its parts:
// role "name" [state]… [ref=eN]: value. A line of text (row: a | b,
// paragraph: text) has a role and a tail only.
type parsedLine struct {
	role, name string
	named      bool
	attrs      []string // each bracket as written, "[checked]", "[level=2]", "[options: …]"
	tail       string   // after ": ", as written (a quoted value, or text)
}

// parseLine splits a bare line (no indent, no "- "); ok is false for a
// line it does not read, which is then told whole.
func parseLine(s string) (p parsedLine, ok bool) {
	i := strings.IndexAny(s, " :")
	if i < 0 {
		return parsedLine{role: s}, s != ""
	}
	p.role, s = s[:i], s[i:]
	if strings.HasPrefix(s, ` "`) {
		q, err := strconv.QuotedPrefix(s[1:])
		if err != nil {
			return p, false
		}
		if p.name, err = strconv.Unquote(q); err != nil {
			return p, false
		}
		p.named, s = true, s[1+len(q):]
	}
	for strings.HasPrefix(s, " [") {
		end := bracketEnd(s[1:])
		if end < 0 {
			return p, false
		}
		p.attrs, s = append(p.attrs, s[1:2+end]), s[2+end:]
	}
	switch {
	case s == "" || s == ":":
	case strings.HasPrefix(s, ": "):
		p.tail, s = s[2:], ""
		// A select's options follow its value.
		if at := strings.LastIndex(p.tail, " [options: "); at >= 0 && strings.HasSuffix(p.tail, "]") {
			p.attrs, p.tail = append(p.attrs, p.tail[at+1:]), p.tail[:at]
		}
	default:
		return p, false
	}
	return p, true
}

// bracketEnd returns the index of the "]" closing the bracket s opens,
// skipping quoted strings, or -1.
func bracketEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '"':
			q, err := strconv.QuotedPrefix(s[i:])
			if err != nil {
				return -1
			}
			i += len(q) - 1
		case ']':
			return i
		}
	}
	return -1
}

// attrKey is what a bracket is about: "checked" for [checked] and
// [checked=mixed], "options" for [options: …], "expanded" for [expanded]
// and [collapsed].
func attrKey(a string) string {
	a = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
	if i := strings.IndexAny(a, "=:"); i >= 0 {
		return a[:i]
	}
	if a == "collapsed" {
		return "expanded"
	}
	return a
}

// wasDelta says what an element's line was, given its line now: only the
// parts that differ ("not [invalid]", "[disabled]", "named \"Cart (0)\"",
// the old value or text), or the old line whole when the two lines are
// not one element's or the parts would not be shorter.
func wasDelta(now, was string) string {
	n, okN := parseLine(now)
	w, okW := parseLine(was)
	if !okN || !okW || n.role != w.role {
		return was
	}
	var parts []string
	if n.name != w.name || n.named != w.named {
		parts = append(parts, "named "+strconv.Quote(w.name))
	}
	nowBy := map[string]string{}
	for _, a := range n.attrs {
		nowBy[attrKey(a)] = a
	}
	wasKeys := map[string]bool{}
	for _, a := range w.attrs {
		k := attrKey(a)
		wasKeys[k] = true
		if k != "ref" && nowBy[k] != a {
			parts = append(parts, a)
		}
	}
	for _, a := range n.attrs {
		if k := attrKey(a); k != "ref" && !wasKeys[k] {
			parts = append(parts, "not "+a)
		}
	}
	if n.tail != w.tail {
		switch {
		case w.tail == "" && strings.HasPrefix(n.tail, `"`):
			parts = append(parts, "empty")
		case w.tail == "":
			parts = append(parts, "no text")
		default:
			parts = append(parts, w.tail)
		}
	}
	d := strings.Join(parts, ", ")
	if d == "" || len(d) >= len(was) || slices.Contains(parts, "") {
		return was
	}
	return d
}
