package server

import (
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestCookiesTool(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Caps: []string{"storage"}})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_storage.html")})
	mustContain(t, c.ok("browser_cookies", nil), "The role has no cookies.")
	res := c.ok("browser_cookies", map[string]any{"action": "set", "name": "session", "value": "tok-123456"})
	mustContain(t, res, `Set cookie "session" (10 characters) for `+fx.URL)
	if strings.Contains(res, "tok-123456") {
		t.Errorf("set repeated the value:\n%s", res)
	}
	snap := c.ok("browser_snapshot", nil)
	show := refOf(t, snap, `button "Show storage"`)
	mustContain(t, c.ok("browser_click", map[string]any{"ref": show}), "cookies: session=tok-123456")

	// Listed with its length, the value only when asked.
	list := c.ok("browser_cookies", nil)
	mustContain(t, list, "1 cookie:", "session", "(10 characters) on 127.0.0.1/", "session]", "Values are hidden; values=true shows them.")
	if strings.Contains(list, "tok-123456") {
		t.Errorf("list showed a value without values=true:\n%s", list)
	}
	mustContain(t, c.ok("browser_cookies", map[string]any{"values": true}), "tok-123456")

	// Errors never repeat a value.
	r := c.fail("browser_cookies", map[string]any{"action": "set", "name": "bad name;", "value": "secret-value-42"}, llmerr.InvalidParams)
	if strings.Contains(r.Text, "secret-value-42") {
		t.Errorf("an error repeated the cookie's value:\n%s", r.Text)
	}
	c.fail("browser_cookies", map[string]any{"action": "set", "value": "x"}, llmerr.InvalidParams)
	c.fail("browser_cookies", map[string]any{"action": "eat"}, llmerr.InvalidParams)

	mustContain(t, c.ok("browser_cookies", map[string]any{"action": "delete", "name": "session"}), `Deleted 1 cookie named "session".`)
	mustContain(t, c.ok("browser_cookies", map[string]any{"action": "delete", "name": "session"}), "nothing was deleted")
	mustContain(t, c.ok("browser_click", map[string]any{"ref": show}), "cookies: none")

	c.ok("browser_cookies", map[string]any{"action": "set", "name": "a", "value": "1"})
	c.ok("browser_cookies", map[string]any{"action": "set", "name": "b", "value": "2"})
	mustContain(t, c.ok("browser_cookies", map[string]any{"action": "clear"}), "Deleted all 2 cookies")
}

func TestLocalStorageTool(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Caps: []string{"storage"}})
	// A tab with no site has no storage.
	r := c.fail("browser_local_storage", nil, llmerr.InvalidParams)
	mustContain(t, r.Text, "browser_navigate(")
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_storage.html")})
	mustContain(t, c.ok("browser_local_storage", nil), "localStorage of "+fx.URL+" is empty.")
	mustContain(t, c.ok("browser_local_storage", map[string]any{"action": "set", "key": "theme", "value": "dark"}), `Set localStorage "theme" (4 characters)`, "1 entry")
	mustContain(t, c.ok("browser_local_storage", map[string]any{"action": "set", "key": "tab", "value": "billing", "session": true}), `Set sessionStorage "tab"`)
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Show storage"`)}), "theme: dark | tab: billing")

	list := c.ok("browser_local_storage", nil)
	mustContain(t, list, "localStorage of "+fx.URL+", 1 entry:", "theme", "(4 characters)", "Values are hidden")
	if strings.Contains(list, "dark") {
		t.Errorf("list showed a value without values=true:\n%s", list)
	}
	mustContain(t, c.ok("browser_local_storage", map[string]any{"values": true}), "dark")
	mustContain(t, c.ok("browser_local_storage", map[string]any{"action": "get", "key": "theme"}), `localStorage "theme" of `+fx.URL+" (4 characters):", "dark")
	mustContain(t, c.ok("browser_local_storage", map[string]any{"action": "get", "key": "nope"}), `has no key "nope"`)
	mustContain(t, c.ok("browser_local_storage", map[string]any{"action": "remove", "key": "theme"}), `Removed "theme"`)
	mustContain(t, c.ok("browser_local_storage", map[string]any{"action": "clear", "session": true}), "Cleared sessionStorage", "(1 entry)")
	c.fail("browser_local_storage", map[string]any{"action": "get"}, llmerr.InvalidParams)
	c.fail("browser_local_storage", map[string]any{"action": "wipe"}, llmerr.InvalidParams)
}
