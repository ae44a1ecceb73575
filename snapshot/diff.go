package snapshot

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Changes is what differs between two snapshots of one document, in the
// snapshot's own line format: what an action did to the page, told
// without re-reading it whole. Refs a change does not mention are still
// valid, since an element keeps its ref while it stays in its document.
type Changes struct {
	// Added are runs of lines that appeared, each under its context.
	Added []Added
	// Removed are runs of lines that disappeared, each under its context
	// in the old snapshot.
	Removed []Added
	// Changed are lines whose element stayed but whose state, name, value
	// or text changed.
	Changed []Changed
	// Renewed are elements the page rendered again just as they were (a
	// list or table drawn anew): the same line under a new ref.
	Renewed []Renewed
	// TooMany is set when the two trees differ too much to list: reading
	// the page again is cheaper than reading its changes.
	TooMany bool
	// Lines is how many lines of the new snapshot the changes touch.
	Lines int
	// Full is the length of the new snapshot's tree, for the caller to
	// compare with the change's.
	Full int
	// Since, when set, replaces Render's "Changes since the last
	// snapshot" with what the changes are counted from.
	Since string

	// b is the new snapshot's lines, and parent the index of each one's
	// enclosing line (-1 at the top level), for Part.
	b      []line
	parent []int
}

// Added is a run of lines that appeared (or disappeared) together.
type Added struct {
	// Context is the line they appeared under ("" at the top level).
	Context string
	// Lines are indented from 0, two spaces per level.
	Lines []string
	at    int // the new snapshot's line the run sits under, for Part
}

// Changed is one element's line, now and before. Render tells Was by what
// differs from Now (wasDelta).
type Changed struct {
	Now, Was string
	at       int
}

// Renewed is an element's line under its new ref, and the ref it had.
type Renewed struct {
	Now, WasRef string
	at          int
}

// Where a change sits in the new snapshot: the index of the line it is
// under, or one of these.
const (
	atTop     = -1 // at the top level
	atUnknown = -2 // under a line the new snapshot does not have as it was
)

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool {
	return c != nil && !c.TooMany && len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Changed) == 0 && len(c.Renewed) == 0
}

// maxRemovedLines is how many lines of one removed run are shown.
const maxRemovedLines = 5

// maxEdits bounds the diff's work: past it, the trees are called too
// different to list.
const maxEdits = 1500

// line is one rendered line of a tree.
type line struct {
	text  string // as rendered, indentation included
	depth int
	ref   string
}

var refOf = regexp.MustCompile(`\[ref=(e\d+)\]`)

func diffLines(nodes []*Node) []line {
	var b strings.Builder
	RenderTree(&b, nodes, 0)
	s := strings.TrimRight(b.String(), "\n")
	if s == "" {
		return nil
	}
	raw := strings.Split(s, "\n")
	out := make([]line, len(raw))
	for i, l := range raw {
		trimmed := strings.TrimLeft(l, " ")
		out[i] = line{text: l, depth: (len(l) - len(trimmed)) / 2}
		if m := refOf.FindStringSubmatch(trimmed); m != nil {
			out[i].ref = m[1]
		}
	}
	return out
}

// Diff returns what changed from old to now, two snapshots of the same
// document (a navigation is not a change: its refs are all new).
func Diff(old, now *Snapshot) *Changes {
	a, b := diffLines(old.Tree), diffLines(now.Tree)
	c := &Changes{}
	for _, l := range b {
		c.Full += len(l.text) + 1
	}
	ops, ok := edits(a, b)
	if !ok {
		c.TooMany = true
		return c
	}
	c.b, c.parent = b, parents(b)
	// Where each old line is in the new snapshot, when it is there as it
	// was: a removed run's context, for Part.
	toB := make([]int, len(a))
	for i := range toB {
		toB[i] = atUnknown
	}
	for _, o := range ops {
		if o.kind == opEqual {
			toB[o.a] = o.b
		}
	}
	// Regions of consecutive non-equal ops, each a run of deletions and
	// insertions between two equal lines.
	for i := 0; i < len(ops); {
		if ops[i].kind == opEqual {
			i++
			continue
		}
		j := i
		var dels, ins []int
		for ; j < len(ops) && ops[j].kind != opEqual; j++ {
			if ops[j].kind == opDelete {
				dels = append(dels, ops[j].a)
			} else {
				ins = append(ins, ops[j].b)
			}
		}
		c.region(a, b, dels, ins, toB)
		i = j
	}
	// An element that moved shows as removed in one region and added in
	// another: pair those by ref across regions as well.
	c.pairMoved()
	return c
}

// region sorts one region's deleted lines (indices into a) and inserted
// lines (into b) into changed, removed and added.
func (c *Changes) region(a, b []line, dels, ins, toB []int) {
	delByRef := map[string]int{}
	for _, d := range dels {
		if a[d].ref != "" {
			delByRef[a[d].ref] = d
		}
	}
	usedDel, usedIns := map[int]bool{}, map[int]bool{}
	for _, n := range ins {
		if d, ok := delByRef[b[n].ref]; ok && b[n].ref != "" {
			c.Changed = append(c.Changed, Changed{Now: bare(b[n].text), Was: bare(a[d].text), at: c.parent[n]})
			usedDel[d], usedIns[n] = true, true
		}
	}
	// An element drawn again just as it was: the same line at the same
	// depth, under a new ref.
	for _, n := range ins {
		if usedIns[n] || b[n].ref == "" {
			continue
		}
		for _, d := range dels {
			if !usedDel[d] && a[d].ref != "" && a[d].depth == b[n].depth && withoutRef(a[d].text) == withoutRef(b[n].text) {
				c.Renewed = append(c.Renewed, Renewed{Now: bare(b[n].text), WasRef: a[d].ref, at: c.parent[n]})
				usedDel[d], usedIns[n] = true, true
				break
			}
		}
	}
	var restDel, restIns []int
	for _, d := range dels {
		if !usedDel[d] {
			restDel = append(restDel, d)
		}
	}
	for _, n := range ins {
		if !usedIns[n] {
			restIns = append(restIns, n)
		}
	}
	// Lines without refs replaced one for one at the same depth and of the
	// same kind (a text, a heading) changed in place.
	if len(restDel) == len(restIns) && len(restDel) > 0 {
		same := true
		for k := range restDel {
			x, y := a[restDel[k]], b[restIns[k]]
			if x.ref != "" || y.ref != "" || x.depth != y.depth || kindOf(x.text) != kindOf(y.text) {
				same = false
				break
			}
		}
		if same {
			for k := range restDel {
				c.Changed = append(c.Changed, Changed{Now: bare(b[restIns[k]].text), Was: bare(a[restDel[k]].text), at: c.parent[restIns[k]]})
			}
			c.Lines += len(restIns)
			return
		}
	}
	c.Lines += len(usedIns) + len(restIns)
	for _, rm := range group(a, restDel) {
		if rm.at >= 0 {
			rm.at = toB[rm.at]
		}
		c.Removed = append(c.Removed, rm)
	}
	c.Added = append(c.Added, group(b, restIns)...)
}

// parents is the index of each line's enclosing line (the nearest one
// above it with less depth), atTop for the top level.
func parents(ls []line) []int {
	out := make([]int, len(ls))
	var stack []int // open lines, by depth
	for i, l := range ls {
		for len(stack) > 0 && ls[stack[len(stack)-1]].depth >= l.depth {
			stack = stack[:len(stack)-1]
		}
		out[i] = atTop
		if len(stack) > 0 {
			out[i] = stack[len(stack)-1]
		}
		stack = append(stack, i)
	}
	return out
}

// withoutRef is a line without its ref.
func withoutRef(s string) string { return refOf.ReplaceAllString(s, "") }

// bare is a line without its indentation and list dash.
func bare(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "- ") }

// kindOf is a line's role: what comes before its name or colon.
func kindOf(s string) string {
	s = strings.TrimLeft(s, " -")
	if i := strings.IndexAny(s, ` ":`); i >= 0 {
		return s[:i]
	}
	return s
}

// group splits idx into runs of consecutive lines of ls, each re-indented
// from 0 under its context: the nearest line above it with less depth,
// whose index in ls is the run's at (atTop when there is none).
func group(ls []line, idx []int) []Added {
	var out []Added
	for _, run := range runs(idx) {
		top := ls[run[0]].depth
		for _, n := range run {
			top = min(top, ls[n].depth)
		}
		ctx, at := "", atTop
		for k := run[0] - 1; k >= 0; k-- {
			if ls[k].depth < top {
				ctx, at = strings.TrimSuffix(bare(ls[k].text), ":"), k
				break
			}
		}
		ad := Added{Context: ctx, at: at}
		for _, n := range run {
			ad.Lines = append(ad.Lines, ls[n].text[min(len(ls[n].text), 2*top):])
		}
		out = append(out, ad)
	}
	return out
}

// pairMoved turns a line removed in one run and added in another with the
// same ref into one change: the element stayed (it moved, or its subtree
// changed).
func (c *Changes) pairMoved() {
	if len(c.Removed) == 0 || len(c.Added) == 0 {
		return
	}
	type at struct{ run, line int }
	gone := map[string]at{}
	for i, rm := range c.Removed {
		for j, l := range rm.Lines {
			if m := refOf.FindStringSubmatch(l); m != nil {
				gone[m[1]] = at{i, j}
			}
		}
	}
	drop := map[at]bool{}
	for _, ad := range c.Added {
		for _, l := range ad.Lines {
			m := refOf.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			if p, ok := gone[m[1]]; ok && !drop[p] {
				drop[p] = true
				if was := bare(c.Removed[p.run].Lines[p.line]); bare(l) != was {
					c.Changed = append(c.Changed, Changed{Now: bare(l), Was: was, at: ad.at})
				}
			}
		}
	}
	if len(drop) == 0 {
		return
	}
	var kept []Added
	for i, rm := range c.Removed {
		var ls []string
		for j, l := range rm.Lines {
			if !drop[at{i, j}] {
				ls = append(ls, l)
			}
		}
		if len(ls) > 0 {
			rm.Lines = ls
			kept = append(kept, rm)
		}
	}
	c.Removed = kept
}

// runs splits sorted indices into runs of consecutive ones.
func runs(idx []int) [][]int {
	var out [][]int
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && idx[j] == idx[j-1]+1 {
			j++
		}
		out = append(out, idx[i:j])
		i = j
	}
	return out
}

type opKind int

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

type op struct {
	kind opKind
	a, b int // indices into the old and new lines
}

// edits is a shortest edit script from a to b (Myers' O(ND) algorithm),
// after trimming the common ends; ok is false past maxEdits.
func edits(a, b []line) ([]op, bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre].text == b[pre].text {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf].text == b[len(b)-1-suf].text {
		suf++
	}
	var out []op
	for i := 0; i < pre; i++ {
		out = append(out, op{opEqual, i, i})
	}
	mid, ok := myers(a[pre:len(a)-suf], b[pre:len(b)-suf])
	if !ok {
		return nil, false
	}
	for _, o := range mid {
		o.a += pre
		o.b += pre
		out = append(out, o)
	}
	for i := 0; i < suf; i++ {
		out = append(out, op{opEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return out, true
}

func myers(a, b []line) ([]op, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		var out []op
		for i := range n {
			out = append(out, op{kind: opDelete, a: i})
		}
		for j := range m {
			out = append(out, op{kind: opInsert, b: j})
		}
		return out, n+m <= maxEdits
	}
	maxD := min(n+m, maxEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x].text == b[y].text {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, v, off, d, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the saved frontiers back from (n, m) to (0, 0).
func backtrack(trace [][]int, last []int, off, d, n, m int) []op {
	var rev []op
	x, y := n, m
	v := last
	for ; d > 0; d-- {
		prev := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && prev[off+k-1] < prev[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := prev[off+pk]
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, op{opEqual, x, y})
		}
		if x == px {
			y--
			rev = append(rev, op{kind: opInsert, a: x, b: y})
		} else {
			x--
			rev = append(rev, op{kind: opDelete, a: x, b: y})
		}
		v = prev
	}
	_ = v
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, op{opEqual, x, y})
	}
	out := make([]op, len(rev))
	for i, o := range rev {
		out[len(rev)-1-i] = o
	}
	return out
}

// Render writes the changes for an agent: a header line, then the page's
// lines inside the fence when fence is set, cut at budget characters (0:
// no cut) with a note that names the call reading the whole page.
func (c *Changes) Render(budget int, fence bool) string {
	var b strings.Builder
	switch {
	case c.TooMany:
		return "The page changed too much to list the changes: browser_snapshot() reads it."
	case c.Empty():
		return "No change in the page's elements since the last snapshot."
	}
	var body []string
	for _, ch := range c.Changed {
		body = append(body, fmt.Sprintf("- changed: %s (was: %s)", ch.Now, wasDelta(ch.Now, ch.Was)))
	}
	for _, rn := range c.Renewed {
		body = append(body, fmt.Sprintf("- redrawn: %s (was %s)", rn.Now, rn.WasRef))
	}
	for _, ad := range c.Added {
		head := "- added:"
		if ad.Context != "" {
			head = "- added in " + ad.Context + ":"
		}
		body = append(body, head)
		for _, l := range ad.Lines {
			body = append(body, "  "+l)
		}
	}
	for _, rm := range c.Removed {
		head := "- removed:"
		if rm.Context != "" {
			head = "- removed from " + rm.Context + ":"
		}
		body = append(body, head)
		// What went needs naming, not reading whole: its first lines.
		for i, l := range rm.Lines {
			if i == maxRemovedLines && len(rm.Lines) > maxRemovedLines+1 {
				body = append(body, fmt.Sprintf("  [and %d more lines]", len(rm.Lines)-i))
				break
			}
			body = append(body, "  "+l)
		}
	}
	since := "Changes since the last snapshot"
	if c.Since != "" {
		since = c.Since
	}
	b.WriteString(since + " (refs not listed here are unchanged and still valid):\n")
	if fence {
		b.WriteString(FenceOpen + "\n")
	}
	used := 0
	for i, l := range body {
		if budget > 0 && used+len(l)+1 > budget && i > 0 {
			if fence {
				b.WriteString(FenceClose + "\n")
			}
			fmt.Fprintf(&b, "[%d more change lines not shown: browser_snapshot() reads the whole page]", len(body)-i)
			return b.String()
		}
		used += len(l) + 1
		if fence {
			l = EscapeFence(l)
		}
		b.WriteString(l + "\n")
	}
	if fence {
		b.WriteString(FenceClose)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Size is roughly how many characters Render writes without a budget.
func (c *Changes) Size() int {
	n := 0
	for _, ch := range c.Changed {
		n += len(ch.Now) + len(wasDelta(ch.Now, ch.Was)) + 20
	}
	for _, rn := range c.Renewed {
		n += len(rn.Now) + 20
	}
	for _, ad := range c.Added {
		n += len(ad.Context) + 12
		for _, l := range ad.Lines {
			n += len(l) + 3
		}
	}
	for _, rm := range c.Removed {
		n += len(rm.Context) + 16
		for _, l := range rm.Lines[:min(len(rm.Lines), maxRemovedLines+1)] {
			n += len(l) + 3
		}
	}
	return n
}

// DropSet removes the changed lines of the elements in set whose change
// is only what an action put there as the agent asked, which the agent
// knows: set maps a ref to the text typed into it, or to "" for a choice
// made or a box checked. It returns how many it removed. A field that
// shows other text than was typed (a mask, a cut), became valid or
// invalid, or changed name, stays.
func (c *Changes) DropSet(set map[string]string) int {
	if c == nil || len(set) == 0 {
		return 0
	}
	n := 0
	c.Changed = slices.DeleteFunc(c.Changed, func(ch Changed) bool {
		m := refOf.FindStringSubmatch(ch.Now)
		if m == nil {
			return false
		}
		typed, ok := set[m[1]]
		if !ok || withoutValue(ch.Now) != withoutValue(ch.Was) {
			return false
		}
		if typed != "" && !strings.Contains(ch.Now, "[ref="+m[1]+"]: "+strconv.Quote(Clip(typed, MaxText))) {
			return false
		}
		n++
		return true
	})
	return n
}

var (
	// valueParts are what an element's line says of its value: the quoted
	// value after its ref, the placeholder shown while it is empty, its
	// checked state.
	valueParts = regexp.MustCompile(`(\[ref=e\d+\]): "(?:[^"\\]|\\.)*"| \[placeholder="(?:[^"\\]|\\.)*"\]| \[checked(?:=\w+)?\]`)
)

// withoutValue is an element's line without what it says of its value.
func withoutValue(line string) string {
	return valueParts.ReplaceAllStringFunc(line, func(s string) string {
		if strings.HasPrefix(s, "[ref=") {
			return s[:strings.Index(s, "]")+1]
		}
		return ""
	})
}

// Part is one subtree of the new snapshot, for a result that gives the
// part of the page an action changed whole instead of the whole page.
type Part struct {
	// Head is the subtree's own line, bare (`main`, `list`,
	// `region "Results"`), and In the line it sits under ("" at the top).
	Head, In string
	// Lines are the subtree's lines, the head's first, indented from 0.
	Lines []string
}

// common is the deepest line that lines i and j both sit in (each counts
// as in itself), or atTop when they share none.
func (c *Changes) common(i, j int) int {
	for i >= 0 && j >= 0 && i != j {
		if c.b[i].depth >= c.b[j].depth {
			i = c.parent[i]
		} else {
			j = c.parent[j]
		}
	}
	if i < 0 || j < 0 {
		return atTop
	}
	return i
}

// Size is how many characters the part's lines take.
func (p Part) Size() int {
	n := 0
	for _, l := range p.Lines {
		n += len(l) + 1
	}
	return n
}

// Render writes the part's lines, fenced when v says so. The part is
// given only when it fits the view's budget, so it is never cut.
func (p Part) Render(v View) string {
	var b strings.Builder
	if v.Fence {
		b.WriteString(FenceOpen + "\n")
	}
	for _, l := range p.Lines {
		if v.Fence {
			l = EscapeFence(l)
		}
		b.WriteString(l + "\n")
	}
	if v.Fence {
		b.WriteString(FenceClose)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Part returns the smallest subtree of the new snapshot that holds every
// change: the deepest line that all the changed, added and removed lines
// sit under. ok is false when the changes reach the top level (the part
// would be the page) or cannot be placed.
func (c *Changes) Part() (p Part, ok bool) {
	if c == nil || c.TooMany || c.Empty() || c.b == nil {
		return Part{}, false
	}
	var ats []int
	for _, ch := range c.Changed {
		ats = append(ats, ch.at)
	}
	for _, rn := range c.Renewed {
		ats = append(ats, rn.at)
	}
	for _, ad := range c.Added {
		ats = append(ats, ad.at)
	}
	for _, rm := range c.Removed {
		ats = append(ats, rm.at)
	}
	top := atUnknown // the deepest line over every change so far
	for _, at := range ats {
		if at < 0 {
			return Part{}, false
		}
		if top == atUnknown {
			top = at
		} else if top = c.common(top, at); top < 0 {
			return Part{}, false
		}
	}
	depth := c.b[top].depth
	p.Head = strings.TrimSuffix(bare(c.b[top].text), ":")
	if up := c.parent[top]; up >= 0 {
		p.In = strings.TrimSuffix(bare(c.b[up].text), ":")
	}
	for k := top; k < len(c.b) && (k == top || c.b[k].depth > depth); k++ {
		p.Lines = append(p.Lines, c.b[k].text[min(len(c.b[k].text), 2*depth):])
	}
	return p, true
}
