package server

import (
	"regexp"
	"testing"

	"github.com/retrace-dev/retrace/snapshot"
)

// stepCall matches a numbered step of a result: its tool and arguments.
var stepCall = regexp.MustCompile(`(?m)^(\d+)\. (browser_[a-z_]+)\((.*)\) — (.*)$`)

func TestFormCheckNamesInvalidFieldsAndTheirFixes(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_formcheck.html")})
	snap := c.ok("browser_snapshot", nil)
	place := refOf(t, snap, `button "Place order"`)

	// A button that does not submit says nothing of the form, even once
	// its fields show as invalid.
	res := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Add a note"`)})
	if regexp.MustCompile(`not accepted`).MatchString(res) {
		t.Errorf("a non-submit button reported the form:\n%s", res)
	}

	res = c.ok("browser_click", map[string]any{"ref": place})
	terms, ship := refOf(t, snap, `checkbox "I accept the terms"`), refOf(t, snap, `combobox "Delivery"`)
	invoice, email := refOf(t, snap, `radio "Invoice"`), refOf(t, snap, `textbox "Email"`)
	mustContain(t, res, "The form was not accepted: 4 fields are marked invalid.",
		`- textbox "Email" [ref=`+email+`]: <page-content>Enter your email address.</page-content>`,
		`- combobox "Delivery" [ref=`+ship+`]: <page-content>Only Standard delivery ships to this address.</page-content>`,
		`choices: <page-content>Standard delivery (3–5 days) | Express delivery (next day)</page-content>`,
		`- checkbox "I accept the terms" [ref=`+terms+`]: <page-content>Accept the terms to order.</page-content>`,
		"To send it:",
		`1. browser_type(ref="`+email+`", text="…") — the text the message asks for in textbox "Email"`,
		`2. browser_select_option(ref="`+ship+`", values=["std"]) — choose "Standard delivery (3–5 days)", the option the message names`,
		`3. browser_click(ref="`+invoice+`") — choose radio "Invoice"`,
		`4. browser_click(ref="`+terms+`") — check checkbox "I accept the terms"`,
		`5. browser_click(ref="`+place+`") — submit the form again`)

	// The steps, done as written (with an address for the placeholder),
	// send the form.
	steps := stepCall.FindAllStringSubmatch(res, -1)
	if len(steps) != 5 {
		t.Fatalf("want 5 steps, got %d:\n%s", len(steps), res)
	}
	c.ok("browser_type", map[string]any{"ref": email, "text": "ada@example.com"})
	c.ok("browser_select_option", map[string]any{"ref": ship, "values": []string{"std"}})
	c.ok("browser_click", map[string]any{"ref": invoice})
	// Once the last refused field is set, the result names the submit.
	res = c.ok("browser_click", map[string]any{"ref": terms})
	mustContain(t, res, `Every field the form refused has been set again: browser_click(ref="`+place+`") submits it (button "Place order" [ref=`+place+`]).`)
	res = c.ok("browser_click", map[string]any{"ref": place})
	mustContain(t, c.ok("browser_snapshot", nil), "Order placed")
	if regexp.MustCompile(`not accepted`).MatchString(res) {
		t.Errorf("a valid form was reported:\n%s", res)
	}
}

func TestFormCheckBrowserConstraints(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_formcheck.html")})
	snap := c.ok("browser_snapshot", nil)
	enter, adult := refOf(t, snap, `button "Enter"`), refOf(t, snap, `checkbox "I am over 18"`)
	// The browser refuses to send the form and says why in its own words.
	res := c.ok("browser_click", map[string]any{"ref": enter})
	mustContain(t, res, "The form was not accepted: 1 field is marked invalid.",
		`- checkbox "I am over 18" [ref=`+adult+`]: <page-content>`,
		`1. browser_click(ref="`+adult+`") — check checkbox "I am over 18"`,
		`2. browser_click(ref="`+enter+`") — submit the form again`)
	c.ok("browser_click", map[string]any{"ref": adult})
	mustContain(t, c.ok("browser_click", map[string]any{"ref": enter}), "Page navigated: ", "adult=on")
}

func TestHelperNamed(t *testing.T) {
	t.Parallel()
	choices := []string{"Standard delivery (3–5 days)", "Express delivery - next day", "Pickup, in store"}
	for _, tc := range []struct {
		msg  string
		want int
	}{
		{"Only Standard delivery ships here.", 0},
		{"express delivery is the one for you", 1},
		{"Choose pickup.", 2},
		{"Choose Standard delivery or Express delivery.", -1}, // two named: the agent's choice
		{"Choose a delivery option.", -1},
		{"", -1},
	} {
		if got := named(tc.msg, choices); got != tc.want {
			t.Errorf("named(%q) = %d, want %d", tc.msg, got, tc.want)
		}
	}
}

func TestHelperOptionArg(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    snapshot.Option
		want string
	}{
		{snapshot.Option{Label: "France", Value: "fr"}, "France"},
		{snapshot.Option{Label: "Standard (3–5 days)", Value: "std"}, "std"},
		{snapshot.Option{Label: `Size "L"`, Value: "l"}, "l"},
		{snapshot.Option{Label: "Other (say which)", Value: ""}, "Other (say which)"},
	} {
		if got := optionArg(tc.o); got != tc.want {
			t.Errorf("optionArg(%+v) = %q, want %q", tc.o, got, tc.want)
		}
	}
}

func TestFillFormNamesTheSubmit(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_formcheck.html")})
	snap := c.ok("browser_snapshot", nil)
	place := refOf(t, snap, `button "Place order"`)
	// The form's default button, not the first button in it ("Add a note"
	// does not submit).
	res := c.ok("browser_fill_form", map[string]any{"fields": []map[string]any{
		{"ref": refOf(t, snap, `textbox "Email"`), "value": "ada@example.com"},
		{"ref": refOf(t, snap, `combobox "Delivery"`), "value": "std"},
	}})
	mustContain(t, res, `browser_click(ref="`+place+`") submits the form (button "Place order" [ref=`+place+`]).`)
	if regexp.MustCompile(`Add a note`).MatchString(res) {
		t.Errorf("a button that does not submit was named:\n%s", res)
	}
	// The named call submits that form.
	c.ok("browser_click", map[string]any{"ref": place})

	c.ok("browser_navigate", map[string]any{"url": fx.Page("_submitter.html")})
	snap = c.ok("browser_snapshot", nil)
	// An input of type submit is named by its value.
	search := refOf(t, snap, `button "Search"`)
	res = c.ok("browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": refOf(t, snap, `textbox "Query"`), "value": "shoes"}}})
	mustContain(t, res, `browser_click(ref="`+search+`") submits the form (button "Search" [ref=`+search+`]).`)
	// A form with no submit control names its buttons, shown and enabled
	// ones, without calling any of them a submit; the one named acts.
	res = c.ok("browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": refOf(t, snap, `textbox "Invitee"`), "value": "linus"}}})
	send, discard := refOf(t, snap, `button "Send invite"`), refOf(t, snap, `button "Discard"`)
	mustContain(t, res, `The form has no submit button; its buttons: button "Send invite" [ref=`+send+`], button "Discard" [ref=`+discard+`].`)
	if regexp.MustCompile(`Preview|Advanced|submits the form`).MatchString(res) {
		t.Errorf("a disabled or hidden button was named, or a button called a submit:\n%s", res)
	}
	mustContain(t, c.ok("browser_click", map[string]any{"ref": send}), "Sent")
	// A field in no form has nothing to name.
	res = c.ok("browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": refOf(t, snap, `textbox "Notes"`), "value": "call back"}}})
	if regexp.MustCompile(`submits the form|its buttons`).MatchString(res) {
		t.Errorf("a field in no form named a submit:\n%s", res)
	}
	// A disabled default button is not named; once the page enables it,
	// the change report shows it, and the note does not repeat it.
	res = c.ok("browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": refOf(t, snap, `textbox "Nickname"`), "value": "ad"}}})
	if regexp.MustCompile(`submits the form`).MatchString(res) {
		t.Errorf("a disabled submit was named:\n%s", res)
	}
	save := refOf(t, snap, `button "Save nickname"`)
	res = c.ok("browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": refOf(t, snap, `textbox "Nickname"`), "value": "ada"}}})
	mustContain(t, res, `changed: button "Save nickname" [ref=`+save+`]`)
	if regexp.MustCompile(`submits the form`).MatchString(res) {
		t.Errorf("the note repeated a button the change report shows:\n%s", res)
	}
}
