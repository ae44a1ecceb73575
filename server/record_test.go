package server

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestGenerateTest(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	c := connect(t, Config{Caps: []string{"testing"}, OutputDir: out})
	if c.listedArgs()["browser_generate_test"] == nil {
		t.Fatal("browser_generate_test is not listed with --caps testing")
	}
	c.fail("browser_generate_test", nil, llmerr.InvalidParams)
	// A first page and an action, which the navigation after it leaves out.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Load fares"`)})

	c.ok("browser_navigate", map[string]any{"url": fx.Page("_formcheck.html")})
	snap = c.ok("browser_snapshot", nil)
	c.ok("browser_fill_form", map[string]any{"fields": []map[string]any{
		{"ref": refOf(t, snap, `textbox "Email"`), "value": "ada@example.com"},
		{"ref": refOf(t, snap, `combobox "Delivery"`), "value": "Standard delivery (3–5 days)"},
		{"ref": refOf(t, snap, `radio "Invoice"`), "value": "true"},
		{"ref": refOf(t, snap, `checkbox "I accept the terms"`), "value": "true"},
	}})
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Place order"`)})
	c.ok("browser_wait_for", map[string]any{"text": "Order placed"})
	res := c.ok("browser_generate_test", map[string]any{"name": "place an order"})
	m := regexp.MustCompile(`Wrote the test "place an order" \(\d+ lines\) to (\S+/place-an-order\.spec\.ts); run it with: npx playwright test place-an-order\.spec\.ts`).FindStringSubmatch(res)
	if m == nil {
		t.Fatalf("generate_test:\n%s", res)
	}
	b, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	code := string(b)
	want := []string{
		"import { test, expect } from '@playwright/test';",
		"test('place an order', async ({ page }) => {",
		"  await page.goto('" + fx.Page("_formcheck.html") + "');",
		"  await page.getByRole('textbox', { name: 'Email', exact: true }).fill('ada@example.com');",
		"  await expect(page.getByRole('textbox', { name: 'Email', exact: true })).toHaveValue('ada@example.com');",
		"  await page.getByRole('combobox', { name: 'Delivery', exact: true }).selectOption('std');",
		"  await page.getByRole('radio', { name: 'Invoice', exact: true }).setChecked(true);",
		"  await expect(page.getByRole('radio', { name: 'Invoice', exact: true })).toBeChecked();",
		"  await page.getByRole('checkbox', { name: 'I accept the terms', exact: true }).setChecked(true);",
		"  await page.getByRole('button', { name: 'Place order', exact: true }).click();",
		"  await expect(page.getByText('Order placed').first()).toBeVisible();",
	}
	for _, w := range want {
		if !strings.Contains(code, w+"\n") {
			t.Errorf("the test lacks the line %q:\n%s", w, code)
		}
	}
	if strings.Contains(code, "_api.html") || strings.Contains(code, "Load fares") {
		t.Errorf("the test holds actions from before its navigation:\n%s", code)
	}
	if !strings.Contains(res, strings.TrimSpace(code)) {
		t.Errorf("the result does not show the test it wrote")
	}

	// A mark starts the next test where it is, across navigations.
	mustContain(t, c.ok("browser_generate_test", map[string]any{"mark": true}), "Marked")
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	snap = c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Load fares"`)})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_storage.html")})
	res = c.ok("browser_generate_test", map[string]any{"name": "two pages"})
	mustContain(t, res, "await page.goto('"+fx.Page("_api.html")+"');", "await page.getByRole('button', { name: 'Load fares', exact: true }).click();",
		"await page.goto('"+fx.Page("_storage.html")+"');")
}
