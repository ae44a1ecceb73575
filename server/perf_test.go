package server

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestPerformanceTool(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Caps: []string{"performance"}})
	c.fail("browser_performance", nil, llmerr.InvalidParams)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_perf.html")})
	c.ok("browser_wait_for", map[string]any{"text": "Cookies?"})
	res := c.ok("browser_performance", nil)
	mustContain(t, res, "Performance of "+fx.Page("_perf.html"), "- TTFB ", "DOMContentLoaded", "load ",
		"- FCP ", "LCP ", `LCP `, `heading "Summer sale on every lamp and every shade in the shop"`)
	// The banner moved the content below it: CLS names what moved, by ref
	// where the snapshot gave one.
	m := regexp.MustCompile(`CLS (\d\.\d+) \((good|needs improvement|poor)\): moved most: (.*)`).FindStringSubmatch(res)
	if m == nil {
		t.Fatalf("no layout shift reported:\n%s", res)
	}
	if v, _ := strconv.ParseFloat(m[1], 64); v <= 0 {
		t.Errorf("CLS %s, want more than 0", m[1])
	}
	// Chromium attributes this shift to the body, whose content moved.
	if !regexp.MustCompile(`\[ref=e\d+\]|body|main|heading|paragraph`).MatchString(m[3]) {
		t.Errorf("the shift names no element of the page: %q", m[3])
	}
	// The script held the main thread 150 ms.
	lt := regexp.MustCompile(`Long tasks: (\d+), the longest (\d+) ms`).FindStringSubmatch(res)
	if lt == nil {
		t.Fatalf("no long task reported:\n%s", res)
	}
	if ms, _ := strconv.Atoi(lt[2]); ms < 140 {
		t.Errorf("the longest task took %d ms; the page held its thread 150 ms", ms)
	}
}
