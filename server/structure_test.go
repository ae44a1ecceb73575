package server

import (
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestInspect(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_plans.html")})
	snap := c.ok("browser_snapshot", nil)
	buys := refsOf(snap, `button "Buy"`)
	if len(buys) != 3 {
		t.Fatalf("want 3 Buy buttons:\n%s", snap)
	}
	res := c.ok("browser_inspect", map[string]any{"ref": buys[1]})
	mustContain(t, res, `Element: button "Buy" [ref=`+buys[1]+`] <button> button "Buy"`,
		"Ancestors (nearest first):",
		`1. <li class="card"> listitem "Pro 10 € a month Buy" data-testid="plan-pro"`,
		`2. <ul> list "Plans" id="plans" aria-label="Plans"`,
		`3. <main> main id="shop"`,
		`4. <body>`,
		`Repeated structure: Its ancestor 1 (<li class="card">`, `is item 2 of 3 with the same structure in <ul> list "Plans"`,
		`- "Free 0 € a month Buy"`, `- "Pro 10 € a month Buy"  ← this one`, `- "Team 30 € a month Buy"`)
	res = c.ok("browser_inspect", map[string]any{"ref": refOf(t, snap, `button "Check out"`)})
	mustContain(t, res, `data-testid="checkout"`, `region "Billing" id="billing"`)
	c.fail("browser_inspect", map[string]any{"ref": "e999"}, llmerr.UnknownRef)
}

// refsOf returns the refs of every line containing part.
func refsOf(snap, part string) []string {
	var out []string
	for _, l := range strings.Split(snap, "\n") {
		if i := strings.Index(l, "[ref="); i >= 0 && strings.Contains(l, part) {
			out = append(out, l[i+5:i+5+strings.IndexByte(l[i+5:], ']')])
		}
	}
	return out
}

func TestGenerateLocator(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_plans.html")})
	snap := c.ok("browser_snapshot", nil)
	buys := refsOf(snap, `button "Buy"`)
	page := c.srv.sessionForTest().role(defaultRole).tab.Page
	cases := []struct {
		ref, want, clicks string
	}{
		{refOf(t, snap, `button "Check out"`), "page.getByTestId('checkout')", ""},
		{refOf(t, snap, `button "Help"`), `page.locator('[data-cy="help"]')`, ""},
		{refOf(t, snap, `textbox "Coupon code"`), "page.getByRole('textbox', { name: 'Coupon code', exact: true })", ""},
		{buys[1], "page.getByTestId('plan-pro').getByRole('button', { name: 'Buy', exact: true })", "Picked Pro"},
		{buys[2], "page.getByRole('listitem').filter({ hasText: 'Team' }).getByRole('button', { name: 'Buy', exact: true })", "Picked Team"},
		{refOf(t, snap, `button "Contact sales"`), "page.getByRole('button', { name: 'Contact sales', exact: true })", ""},
		{refOf(t, snap, `button "Payment button"`), "page.locator('iframe[title=\"Payment\"]').contentFrame().getByRole('button', { name: 'Payment button', exact: true })", "Payment clicked 1"},
	}
	for _, tc := range cases {
		res := c.ok("browser_generate_locator", map[string]any{"ref": tc.ref})
		mustContain(t, res, "verified on the page", "\n"+tc.want)
		// The locator the tool returned, read as a test would use it,
		// finds one element, and clicking it acts on that element.
		loc, err := locatorFromCode(page, generatedLocator(t, res))
		if err != nil {
			t.Fatal(err)
		}
		if n, err := loc.Count(); err != nil || n != 1 {
			t.Errorf("%s matches %d elements (%v), want 1", tc.want, n, err)
		}
		if tc.clicks != "" {
			if err := loc.Click(playwright.LocatorClickOptions{Timeout: playwright.Float(2000)}); err != nil {
				t.Fatal(err)
			}
			mustContain(t, c.ok("browser_snapshot", nil), tc.clicks)
		}
	}
	// Why the plain role locator was not taken for a repeated button.
	mustContain(t, c.ok("browser_generate_locator", map[string]any{"ref": buys[0]}),
		"Rejected first:", "page.getByRole('button', { name: 'Buy', exact: true }) matches 3 elements",
		"page.getByRole('listitem').filter({ hasText: 'Free' }).getByRole('button', { name: 'Buy', exact: true })")
	c.fail("browser_generate_locator", map[string]any{"ref": "e999"}, llmerr.UnknownRef)
}

// generatedLocator returns the locator code of a browser_generate_locator
// result: the line after its header, from "page." on.
func generatedLocator(t *testing.T, res string) string {
	t.Helper()
	_, rest, ok := strings.Cut(res, "(exactly one match, this element):\n")
	if !ok {
		t.Fatalf("no verified locator in:\n%s", res)
	}
	line, _, _ := strings.Cut(rest, "\n")
	return line
}
