package snapshot

import (
	"testing"
)

func TestRender(t *testing.T) {
	val := "ada@example.com"
	med := "Medium"
	no := false
	s := &Snapshot{URL: "http://a/", Title: "T", Tree: []*Node{
		{Role: "heading", Name: "Items", Level: 2},
		{Role: "textbox", Name: "Email", Ref: "e1", Required: true, Value: &val},
		{Role: "textbox", Name: "Search", Ref: "e9", Placeholder: "Find…"},
		{Role: "checkbox", Name: "Remember", Ref: "e2", Checked: true},
		{Role: "checkbox", Name: "Some", Ref: "e8", Checked: "mixed"},
		{Role: "button", Name: "Menu", Ref: "e3", Expanded: &no, Disabled: true},
		{Role: "table", Children: []*Node{
			{Role: "row", Children: []*Node{{Role: "columnheader", Name: "Item"}, {Role: "columnheader", Name: "Pick"}}},
			{Role: "row", Children: []*Node{
				{Role: "cell", Name: "Item 1", Children: []*Node{{Role: "link", Name: "Item 1", Ref: "e4"}}},
				{Role: "cell", Name: "Pick 1", Children: []*Node{{Role: "checkbox", Name: "Pick 1", Ref: "e5"}}},
			}},
			// A grid's cell that is focusable itself keeps its state and ref.
			{Role: "row", Children: []*Node{
				{Role: "gridcell", Name: "Open", Ref: "e12", Selected: true, Children: []*Node{{Role: "button", Name: "Open", Ref: "e13"}}},
				{Role: "gridcell", Name: "Done"},
				{Role: "gridcell", Name: "Docs", Children: []*Node{{Role: "link", Name: "Docs", Ref: "e15"}}},
			}},
			// A row with a cell holding two things keeps its structure.
			{Role: "row", Children: []*Node{
				{Role: "cell", Children: []*Node{{Role: "text", Text: "a"}, {Role: "button", Name: "b", Ref: "e6"}}},
				{Role: "cell", Name: "c", Children: []*Node{{Role: "link", Name: "c", Ref: "e14"}}},
			}},
		}},
		{Role: "listitem", Children: []*Node{{Role: "text", Text: "one\n  line"}}},
		{Role: "combobox", Name: "Size", Ref: "e10", Value: &med, Children: []*Node{
			{Role: "option", Name: "Small"}, {Role: "option", Name: "Medium", Selected: true}, {Role: "option", Name: "Huge", Disabled: true}}},
		{Role: "listbox", Name: "Tags", Ref: "e11", Children: []*Node{
			{Role: "option", Name: "a", Selected: true}, {Role: "option", Name: "b"}}},
		{Role: "iframe", Name: "Ads", Ref: "e7", Frame: true, FrameError: "the frame did not answer within 3s"},
	}}
	want := `URL: http://a/
Title: T
- heading "Items" [level=2]
- textbox "Email" [required] [ref=e1]: "ada@example.com"
- textbox "Search" [ref=e9] [placeholder="Find…"]
- checkbox "Remember" [checked] [ref=e2]
- checkbox "Some" [checked=mixed] [ref=e8]
- button "Menu" [disabled] [collapsed] [ref=e3]
- table:
  - row: Item | Pick
  - row: link "Item 1" [ref=e4] | checkbox "Pick 1" [ref=e5]
  - row: gridcell [selected] [ref=e12]: button "Open" [ref=e13] | Done | gridcell: link "Docs" [ref=e15]
  - row:
    - cell:
      - text: a
      - button "b" [ref=e6]
    - cell:
      - link "c" [ref=e14]
- listitem: one line
- combobox "Size" [ref=e10]: "Medium" [options: "Small", "Medium", "Huge" [disabled]]
- listbox "Tags" [ref=e11] [options: "a" [selected], "b"]
- iframe "Ads" [ref=e7] (not shown: the frame did not answer within 3s)`
	if got := s.Text(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestCompact(t *testing.T) {
	tree := compact([]*Node{
		{Role: "text", Text: "Email"},
		{Role: "textbox", Name: "Email", Ref: "e1"},
		{Role: "paragraph", Children: []*Node{
			{Role: "checkbox", Name: "Remember me", Ref: "e2"},
			{Role: "text", Text: "Remember me"},
		}},
		{Role: "paragraph", Children: []*Node{{Role: "text", Text: "Plain words stay"}}},
		{Role: "text", Text: "Total"},
		{Role: "heading", Name: "Total", Level: 2}, // not a control: its text stays
	})
	s := &Snapshot{Tree: tree}
	want := `URL: 
Title: 
- textbox "Email" [ref=e1]
- checkbox "Remember me" [ref=e2]
- paragraph: Plain words stay
- text: Total
- heading "Total" [level=2]`
	if got := s.Text(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
