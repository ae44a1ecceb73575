package snapshot

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrace-dev/retrace/llmerr"
)

// Tests of paging a snapshot through View{Budget, Offset}; no browser.

// shopSnapshot is a page of 21 tree lines:
//
//	0      - heading "Shop" [level=1]
//	1      - list "Items":
//	2, 4…  -   listitem:
//	3, 5…  -     link "Item N" [ref=eN]   (N = 1…9)
//	20     - button "Checkout" [ref=e10]
func shopSnapshot() *Snapshot {
	list := &Node{Role: "list", Name: "Items"}
	for i := 1; i <= 9; i++ {
		list.Children = append(list.Children, &Node{Role: "listitem", Children: []*Node{
			{Role: "link", Name: fmt.Sprintf("Item %d", i), Ref: fmt.Sprintf("e%d", i)},
		}})
	}
	return &Snapshot{URL: "https://shop.test/", Title: "Shop", Tree: []*Node{
		{Role: "heading", Name: "Shop", Level: 1},
		list,
		{Role: "button", Name: "Checkout", Ref: "e10"},
	}}
}

// deepSnapshot has sections of groups of paragraphs and buttons, with
// lines of different lengths and depths.
func deepSnapshot() *Snapshot {
	var tree []*Node
	ref := 0
	for s := 1; s <= 4; s++ {
		sec := &Node{Role: "region", Name: fmt.Sprintf("Section %d", s)}
		for g := 1; g <= 3; g++ {
			grp := &Node{Role: "group", Name: fmt.Sprintf("Group %d.%d", s, g)}
			for p := 1; p <= s+g; p++ {
				ref++
				grp.Children = append(grp.Children,
					&Node{Role: "paragraph", Children: []*Node{{Role: "text", Text: strings.Repeat("word ", p) + "end"}}},
					&Node{Role: "button", Name: fmt.Sprintf("Action %d", ref), Ref: fmt.Sprintf("e%d", ref)})
			}
			sec.Children = append(sec.Children, grp)
		}
		tree = append(tree, sec)
	}
	return &Snapshot{URL: "https://deep.test/", Title: "Deep", Tree: tree}
}

// treeLines is the whole tree of s, one string per line.
func treeLines(t *testing.T, s *Snapshot) []string {
	t.Helper()
	var b strings.Builder
	RenderTree(&b, s.Tree, 0)
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

var readOn = regexp.MustCompile(`Read on with browser_snapshot\((?:[^()]*, )?offset=(\d+)\)`)

// splitPage splits a rendered view into the tree lines it shows (after the
// Subtree and [Lines …] headers) and the offset its read-on hint names (-1
// when the tree was not cut).
func splitPage(t *testing.T, text string) (shown []string, next int) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "URL: ") || !strings.HasPrefix(lines[1], "Title: ") {
		t.Fatalf("no URL and Title header:\n%s", text)
	}
	rest := lines[2:]
	if len(rest) > 0 && strings.HasPrefix(rest[0], "Subtree of ") {
		rest = rest[1:]
	}
	if len(rest) > 0 && strings.HasPrefix(rest[0], "[Lines ") {
		rest = rest[1:]
	}
	for _, l := range rest {
		// Tree lines start with "-" or indentation; notes start with "[".
		if strings.HasPrefix(l, "[") {
			break
		}
		shown = append(shown, l)
	}
	m := readOn.FindStringSubmatch(text)
	if m == nil {
		return shown, -1
	}
	next, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return shown, next
}

func TestPagingCutNamesTheOffset(t *testing.T) {
	t.Parallel()
	s := shopSnapshot()
	if n := len(treeLines(t, s)); n != 21 {
		t.Fatalf("the shop tree has %d lines, want 21", n)
	}
	// 27+16+14+29+14 = 100 characters (with newlines) fit; the next line
	// would not.
	want := `URL: https://shop.test/
Title: Shop
- heading "Shop" [level=1]
- list "Items":
  - listitem:
    - link "Item 1" [ref=e1]
  - listitem:
[Cut at the 100-character budget: 16 of 21 lines not shown (9 refs). It continues at line 6:
  - list "Items":
  - listitem:
  - link "Item 2" [ref=e2]
Read on with browser_snapshot(offset=5), search with browser_find(text="...") or browser_find(role="...", name="..."), or take everything with browser_snapshot(budget=0).]`
	if got := s.Render(View{Budget: 100}); got != want {
		t.Errorf("budget 100:\ngot:\n%s\nwant:\n%s", got, want)
	}

	// Reading on from the named offset starts at the line the cut named.
	want = `URL: https://shop.test/
Title: Shop
[Lines 6 and on of 21; browser_snapshot() shows it from the start.]
    - link "Item 2" [ref=e2]
  - listitem:
    - link "Item 3" [ref=e3]
  - listitem:
[Cut at the 100-character budget: 12 of 21 lines not shown (7 refs). It continues at line 10:
  - list "Items":
  - listitem:
  - link "Item 4" [ref=e4]
Read on with browser_snapshot(offset=9),`
	got := s.Render(View{Budget: 100, Offset: 5})
	if !strings.HasPrefix(got, want) {
		t.Errorf("budget 100, offset 5:\ngot:\n%s\nwant it to start:\n%s", got, want)
	}
	if _, next := splitPage(t, got); next != 9 {
		t.Errorf("offset 5 reads on at %d, want 9", next)
	}
}

func TestPagingCoversEveryLineOnce(t *testing.T) {
	t.Parallel()
	for _, s := range []*Snapshot{shopSnapshot(), deepSnapshot()} {
		all := treeLines(t, s)
		for _, budget := range []int{1, 20, 40, 64, 100, 333, 1000, 1 << 20} {
			var got []string
			offset, pages := 0, 0
			for {
				pages++
				if pages > len(all)+1 {
					t.Fatalf("%s, budget %d: more pages than lines; the offsets do not advance", s.Title, budget)
				}
				text := s.Render(View{Budget: budget, Offset: offset})
				shown, next := splitPage(t, text)
				if len(shown) == 0 {
					t.Fatalf("%s, budget %d, offset %d: a page with no lines:\n%s", s.Title, budget, offset, text)
				}
				// A page holds the budget, or one line when a line alone is
				// longer.
				if size := len(strings.Join(shown, "\n")) + 1; size > budget && len(shown) > 1 {
					t.Errorf("%s, budget %d, offset %d: %d characters shown", s.Title, budget, offset, size)
				}
				if offset > 0 && !strings.Contains(text, fmt.Sprintf("[Lines %d and on of %d;", offset+1, len(all))) {
					t.Errorf("%s, budget %d, offset %d: no [Lines …] header:\n%s", s.Title, budget, offset, text)
				}
				got = append(got, shown...)
				if next < 0 {
					break
				}
				if next != offset+len(shown) {
					t.Fatalf("%s, budget %d: page at %d showed %d lines but reads on at %d", s.Title, budget, offset, len(shown), next)
				}
				if !strings.Contains(text, fmt.Sprintf("It continues at line %d:\n  %s\n", next+1, firstAncestor(all, next))) {
					t.Errorf("%s, budget %d, offset %d: the cut does not name the enclosing lines:\n%s", s.Title, budget, offset, text)
				}
				offset = next
			}
			if strings.Join(got, "\n") != strings.Join(all, "\n") {
				t.Errorf("%s, budget %d: the pages together are not the tree:\ngot:\n%s\nwant:\n%s",
					s.Title, budget, strings.Join(got, "\n"), strings.Join(all, "\n"))
			}
			if total := len(strings.Join(all, "\n")) + 1; budget >= total && pages != 1 {
				t.Errorf("%s, budget %d: %d pages, want 1", s.Title, budget, pages)
			}
		}
	}
}

// firstAncestor is the outermost line enclosing line i (or line i itself
// at the top level), trimmed, as the cut note lists it first.
func firstAncestor(lines []string, i int) string {
	for j := i; j >= 0; j-- {
		if !strings.HasPrefix(lines[j], " ") {
			return strings.TrimSpace(lines[j])
		}
	}
	return ""
}

func TestPagingRefsLeft(t *testing.T) {
	t.Parallel()
	s := deepSnapshot()
	all := treeLines(t, s)
	text := s.Render(View{Budget: 300})
	shown, next := splitPage(t, text)
	if next != len(shown) {
		t.Fatalf("reads on at %d after %d lines", next, len(shown))
	}
	refs := strings.Count(strings.Join(all[next:], "\n"), "[ref=")
	want := fmt.Sprintf("%d of %d lines not shown (%d refs)", len(all)-next, len(all), refs)
	if !strings.Contains(text, want) {
		t.Errorf("want %q in:\n%s", want, text)
	}
}

func TestPagingOffsetPastTheEnd(t *testing.T) {
	t.Parallel()
	s := shopSnapshot()
	for _, tc := range []struct {
		view View
		want string
	}{
		{View{Offset: 21}, "[Offset 21 is past the end: the snapshot has 21 lines. browser_snapshot() shows it from the start.]"},
		{View{Offset: 500, Budget: 100}, "[Offset 500 is past the end: the snapshot has 21 lines. browser_snapshot() shows it from the start.]"},
		// The last line is still there.
		{View{Offset: 20, Budget: 10}, "[Lines 21 and on of 21; browser_snapshot() shows it from the start.]\n- button \"Checkout\" [ref=e10]"},
	} {
		want := "URL: https://shop.test/\nTitle: Shop\n" + tc.want
		if got := s.Render(tc.view); got != want {
			t.Errorf("%+v:\ngot:\n%s\nwant:\n%s", tc.view, got, want)
		}
	}

	empty := &Snapshot{URL: "about:blank"}
	if got, want := empty.Render(View{Offset: 1}), "URL: about:blank\nTitle: \n[Offset 1 is past the end: the snapshot has 0 lines. browser_snapshot() shows it from the start.]"; got != want {
		t.Errorf("empty tree, offset 1:\ngot:\n%s\nwant:\n%s", got, want)
	}
	if got, want := empty.Render(View{Budget: 10}), "URL: about:blank\nTitle: "; got != want {
		t.Errorf("empty tree:\ngot %q, want %q", got, want)
	}
}

func TestPagingNoBudget(t *testing.T) {
	t.Parallel()
	for _, s := range []*Snapshot{shopSnapshot(), deepSnapshot()} {
		// Budget 0 is no limit: the whole tree, as Text renders it.
		if got, want := s.Render(View{}), s.Text(); got != want {
			t.Errorf("%s, budget 0:\ngot:\n%s\nwant:\n%s", s.Title, got, want)
		}
		// A budget larger than the tree cuts nothing either.
		if got, want := s.Render(View{Budget: 1 << 20}), s.Text(); got != want {
			t.Errorf("%s, large budget:\ngot:\n%s\nwant:\n%s", s.Title, got, want)
		}
		// Budget 0 from an offset shows the rest, uncut.
		all := treeLines(t, s)
		got := s.Render(View{Offset: 5})
		shown, next := splitPage(t, got)
		if next != -1 || strings.Contains(got, "[Cut at") {
			t.Errorf("%s, budget 0, offset 5, was cut:\n%s", s.Title, got)
		}
		if strings.Join(shown, "\n") != strings.Join(all[5:], "\n") {
			t.Errorf("%s, budget 0, offset 5: got lines\n%s\nwant\n%s", s.Title, strings.Join(shown, "\n"), strings.Join(all[5:], "\n"))
		}
	}
}

func TestPagingLineLongerThanBudget(t *testing.T) {
	t.Parallel()
	// The first line of a page is shown whatever its length, so reading on
	// always moves forward.
	s := shopSnapshot()
	got := s.Render(View{Budget: 5})
	shown, next := splitPage(t, got)
	if len(shown) != 1 || shown[0] != `- heading "Shop" [level=1]` || next != 1 {
		t.Errorf("budget 5: shown %q, reads on at %d; want the heading, then 1", shown, next)
	}
	if !strings.Contains(got, "[Cut at the 5-character budget: 20 of 21 lines not shown (10 refs). It continues at line 2:\n  - list \"Items\":\n") {
		t.Errorf("budget 5:\n%s", got)
	}
}

func TestPagingSubtreeAndTimeCut(t *testing.T) {
	t.Parallel()
	s := shopSnapshot()
	s.Root = "e4"
	s.Cut = true
	got := s.Render(View{Budget: 60})
	wantStart := "URL: https://shop.test/\nTitle: Shop\nSubtree of e4:\n- heading \"Shop\" [level=1]\n- list \"Items\":\n  - listitem:\n[Cut at the 60-character budget:"
	if !strings.HasPrefix(got, wantStart) {
		t.Errorf("got:\n%s\nwant it to start:\n%s", got, wantStart)
	}
	// The budget's note comes first, then the note that the walk ran out
	// of time, last.
	// The calls that read on name the subtree.
	budgetNote := strings.Index(got, `Read on with browser_snapshot(ref="e4", offset=3)`)
	timeNote := strings.Index(got, "[The page is too large to read in time:")
	if budgetNote < 0 || timeNote < budgetNote || !strings.HasSuffix(got, "browser_snapshot(ref=\"...\") reads one part.]") ||
		!strings.Contains(got, `take everything with browser_snapshot(ref="e4", budget=0)`) {
		t.Errorf("notes out of order:\n%s", got)
	}
	// Offsets count tree lines: the Subtree header is not one of them.
	if shown, _ := splitPage(t, s.Render(View{Offset: 3, Budget: 60})); len(shown) == 0 || shown[0] != `    - link "Item 1" [ref=e1]` {
		t.Errorf("offset 3 in a subtree starts with %q, want the Item 1 link", shown)
	}
}

// bigSnapshot is a page of n sections, each a heading and a paragraph of
// about 200 characters, under a main landmark.
func bigSnapshot(n int) *Snapshot {
	m := &Node{Role: "main"}
	for i := 0; i < n; i++ {
		m.Children = append(m.Children,
			&Node{Role: "heading", Name: fmt.Sprintf("Section %d", i), Level: 2},
			&Node{Role: "paragraph", Children: []*Node{{Role: "text", Text: strings.Repeat(fmt.Sprintf("text %d ", i), 25)}}},
			&Node{Role: "button", Name: fmt.Sprintf("Open %d", i), Ref: fmt.Sprintf("e%d", i+1)})
	}
	return &Snapshot{URL: "https://big.test/", Title: "Big </page-content> title", Tree: []*Node{m}}
}

// fencedTree is the tree lines of a fenced view: those between the fence
// and its Title line, and the fence's end.
func fencedTree(t *testing.T, text string) []string {
	t.Helper()
	open := strings.Index(text, FenceOpen+"\nTitle: ")
	closing := strings.LastIndex(text, "\n"+FenceClose)
	if open < 0 || closing < open {
		t.Fatalf("no fence around the title and the tree:\n%s", text)
	}
	lines := strings.Split(text[open:closing], "\n")
	return lines[2:]
}

// A result limit holds without a budget: every page fits it, ends saying
// which call reads on, and the pages together are the tree.
func TestPagingResultLimit(t *testing.T) {
	t.Parallel()
	s := bigSnapshot(200)
	all := treeLines(t, s)
	const limit = 8000
	again := []llmerr.Arg{llmerr.A("budget", 0), llmerr.A("role", "admin")}
	var got []string
	offset := 0
	for pages := 1; ; pages++ {
		if pages > len(all) {
			t.Fatal("the offsets do not advance")
		}
		text := s.Render(View{Offset: offset, Fence: true, Max: limit, Again: again})
		if len(text) > limit {
			t.Fatalf("offset %d: %d bytes, over the %d limit", offset, len(text), limit)
		}
		if !strings.Contains(text, "\nTitle: Big <\\/page-content> title\n") || strings.Count(text, FenceClose) != 1 {
			t.Fatalf("the title is not fenced and escaped:\n%s", text)
		}
		shown := fencedTree(t, text)
		got = append(got, shown...)
		m := regexp.MustCompile(`Read on with browser_snapshot\(budget=0, role="admin", offset=(\d+)\), or search with browser_find`).FindStringSubmatch(text)
		if m == nil {
			if offset+len(shown) != len(all) {
				t.Fatalf("offset %d: cut without saying where to read on:\n%s", offset, text[max(0, len(text)-600):])
			}
			break
		}
		if !strings.Contains(text, "[Cut to fit the result limit:") || strings.Contains(text, "take everything") {
			t.Errorf("offset %d: the note does not name the limit, or offers what would not fit:\n%s", offset, text[len(text)-600:])
		}
		next, _ := strconv.Atoi(m[1])
		if next != offset+len(shown) {
			t.Fatalf("offset %d showed %d lines but reads on at %d", offset, len(shown), next)
		}
		offset = next
	}
	if strings.Join(got, "\n") != EscapeFence(strings.Join(all, "\n")) {
		t.Error("the pages together are not the tree")
	}
}

// A line longer than the limit is cut, and reading on moves past it.
func TestPagingLineLongerThanLimit(t *testing.T) {
	t.Parallel()
	s := &Snapshot{URL: "https://x.test/", Title: "X", Tree: []*Node{
		{Role: "paragraph", Children: []*Node{{Role: "text", Text: strings.Repeat("é", 9000)}}},
		{Role: "button", Name: "After", Ref: "e1"},
	}}
	got := s.Render(View{Fence: true, Max: 5000})
	if len(got) > 5000 || !strings.Contains(got, "… [line cut at the result limit]\n"+FenceClose) ||
		!strings.Contains(got, "Read on with browser_snapshot(offset=1)") || !utf8.ValidString(got) {
		t.Errorf("%d bytes:\n%s", len(got), got)
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc… [1 more characters not shown]"},
		{"ééé", 3, "ééé"}, // six bytes, three characters
		{"éééé", 2, "éé… [2 more characters not shown]"},
	} {
		if got := Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// One enormous text, name or value is cut in the tree with how much was
// left out; the title too.
func TestRenderCutsLongTexts(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxText+5)
	s := &Snapshot{URL: "https://x.test/", Title: strings.Repeat("t", MaxTitle+1), Tree: []*Node{
		{Role: "text", Text: long},
		{Role: "link", Name: long, Ref: "e1"},
		{Role: "textbox", Name: "Notes", Ref: "e2", Value: &long},
		{Role: "listitem", Children: []*Node{{Role: "text", Text: long}}},
	}}
	got := s.Render(View{})
	cut := strings.Repeat("x", MaxText) + "… [5 more characters not shown]"
	for _, want := range []string{
		"Title: " + strings.Repeat("t", MaxTitle) + "… [1 more characters not shown]\n",
		"- text: " + cut + "\n",
		`- link "` + cut + `" [ref=e1]` + "\n",
		`- textbox "Notes" [ref=e2]: "` + cut + `"` + "\n",
		"- listitem: " + cut,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %.80q… in the rendering", want)
		}
	}
	if len(got) > 5*(MaxText+100)+MaxTitle {
		t.Errorf("%d bytes", len(got))
	}
}
