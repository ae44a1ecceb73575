package snapshot

import (
	"reflect"
	"testing"
)

// TestFindInGrid: a cell named by the one element it holds is found through
// that element, whose context is the row the cell is written on.
func TestFindInGrid(t *testing.T) {
	s := &Snapshot{Tree: []*Node{{Role: "grid", Name: "Files", Children: []*Node{
		{Role: "row", Children: []*Node{
			{Role: "gridcell", Name: "report.pdf", Children: []*Node{{Role: "link", Name: "report.pdf", Ref: "e1"}}},
			{Role: "gridcell", Name: "2 MB"},
		}},
		{Role: "row", Children: []*Node{
			{Role: "gridcell", Name: "notes.txt", Children: []*Node{{Role: "link", Name: "notes.txt", Ref: "e2"}}},
			{Role: "gridcell", Children: []*Node{
				{Role: "button", Name: "Share notes.txt", Ref: "e3"}, {Role: "button", Name: "Delete notes.txt", Ref: "e4"}}},
		}},
	}}}}
	for _, tc := range []struct {
		q    Query
		want []Match
	}{
		{Query{Text: "report"}, []Match{{Ref: "e1", Line: `link "report.pdf" [ref=e1]`,
			Context: `row: gridcell: link "report.pdf" [ref=e1] | 2 MB`}}},
		{Query{Text: "notes.txt"}, []Match{
			{Ref: "e2", Line: `link "notes.txt" [ref=e2]`, Context: `grid "Files"`},
			{Ref: "e3", Line: `button "Share notes.txt" [ref=e3]`, Context: `grid "Files"`},
			{Ref: "e4", Line: `button "Delete notes.txt" [ref=e4]`, Context: `grid "Files"`},
		}},
		{Query{Role: "gridcell", Name: "report"}, []Match{{Line: `gridcell "report.pdf"`,
			Context: `row: gridcell: link "report.pdf" [ref=e1] | 2 MB`}}},
	} {
		if got, _ := s.Find(tc.q, 10); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Find(%+v):\ngot  %q\nwant %q", tc.q, got, tc.want)
		}
	}
}
