package main

import "testing"

func TestFindTarget(t *testing.T) {
	report := `Clicked button "Next page" [ref=e20].
Changes since the last snapshot (refs not listed here are unchanged and still valid):
<page-content>
- changed: button "Previous page" [ref=e19] (was: [disabled])
- changed: textbox "Postcode" [invalid] [ref=e7]: "12AB" (was: not [invalid])
- added in list:
  - listitem:
    - text: Linen floor lamp 50
    - button "Add Linen floor lamp 50 to cart" [ref=e41]
  - button "Next page" [ref=e44]
- removed from list:
  - listitem:
    - button "Add Brass desk lamp 9 to cart" [ref=e30]
  - button "Next page" [ref=e20]
- changed: checkbox "Terms" [checked] [ref=e8] (was: not [checked])
</page-content>`
	peer := "### Snapshot\n```yaml\n- main [ref=e2]:\n  - combobox \"Country\" [ref=e9]:\n    - option \"France\"\n  - link \"Order 1042\" [ref=e14] [cursor=pointer]:\n    - /url: \"#order-1042\"\n  - iframe [ref=e15]:\n    - button \"Pay\" [ref=f1e3]\n```"
	row := `  - row: link "Item 1" [ref=e1] | Description of item 1 | button "Edit" [ref=e3]`
	tests := []struct {
		name, text, role, target, want string
	}{
		{"changed line", report, "button", "Previous page", "e19"},
		{"state before ref", report, "textbox", "Postcode", "e7"},
		{"added", report, "button", "Add Linen floor lamp 50 to cart", "e41"},
		{"re-rendered: the new one, not the clicked one that went", report, "button", "Next page", "e44"},
		{"only removed", report, "button", "Add Brass desk lamp 9 to cart", ""},
		{"role must match", report, "link", "Previous page", ""},
		{"name must match whole", report, "button", "Previous", ""},
		{"after the removed block", report, "checkbox", "Terms", "e8"},
		{"peer select", peer, "combobox", "Country", "e9"},
		{"peer link with cursor", peer, "link", "Order 1042", "e14"},
		{"peer frame ref", peer, "button", "Pay", "f1e3"},
		{"table row", row, "button", "Edit", "e3"},
		{"no ref", "- heading \"Orders\" [level=1]", "heading", "Orders", ""},
		{"quote in name", `- button "Say \"hi\"" [ref=e5]`, "button", `Say "hi"`, "e5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := findTarget(tt.text, tt.role, tt.target); got != tt.want {
				t.Errorf("findTarget(%s %q) = %q, want %q", tt.role, tt.target, got, tt.want)
			}
		})
	}
}
