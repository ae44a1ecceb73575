package snapshot

import "testing"

func TestWasDelta(t *testing.T) {
	for _, c := range []struct{ now, was, want string }{
		{`textbox "Postcode *" [required] [invalid] [ref=e11]: "75O11"`, `textbox "Postcode *" [required] [ref=e11]: "75O11"`, `not [invalid]`},
		{`button "Previous page" [ref=e16]`, `button "Previous page" [disabled] [ref=e16]`, `[disabled]`},
		{`textbox "Postcode *" [required] [ref=e11]: "75011"`, `textbox "Postcode *" [required] [invalid] [ref=e11]: "75O11"`, `[invalid], "75O11"`},
		{`link "Cart (1)" [ref=e4]`, `link "Cart (0)" [ref=e4]`, `named "Cart (0)"`},
		{`paragraph: 32 products, page 2 of 4`, `paragraph: 32 products, page 1 of 4`, `32 products, page 1 of 4`},
		{`heading "Order 43" [level=1]`, `heading "Order 42" [level=1]`, `named "Order 42"`},
		{`checkbox "Agree" [checked=mixed] [ref=e2]`, `checkbox "Agree" [checked] [ref=e2]`, `[checked]`},
		{`textbox "Email" [ref=e3]: "a@b.c"`, `textbox "Email" [ref=e3]`, `empty`},
		{`combobox "Country" [ref=e12]: "France" [options: "Choose…", "France"]`, `combobox "Country" [ref=e12]: "Choose…" [options: "Choose…", "France"]`, `"Choose…"`},
		{`textbox "Search" [ref=e5] [placeholder="a ] b"]: "x"`, `textbox "Search" [ref=e5] [placeholder="a ] b"]`, `empty`},
		// Not one element's line, or nothing shorter to say: the old line whole.
		{`link "Home" [ref=e1]`, `button "Home" [ref=e1]`, `button "Home" [ref=e1]`},
		{`paragraph: Saved`, `paragraph`, `no text`},
		{`text: a`, `text: b`, `b`},
		{`button "Menu" [expanded] [ref=e1]`, `button "Menu" [collapsed] [ref=e1]`, `[collapsed]`},
		{`status: Saved`, `status`, `status`},
		{`button "Go" [ref=e1] trailing`, `button "Go" [ref=e1]`, `button "Go" [ref=e1]`},
	} {
		if got := wasDelta(c.now, c.was); got != c.want {
			t.Errorf("wasDelta(%q, %q) = %q, want %q", c.now, c.was, got, c.want)
		}
	}
}
