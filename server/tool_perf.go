package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

// The tool of --caps performance: the page's loading and rendering
// figures, as the browser's own performance entries give them, with the
// elements behind them as refs.

type perfArgs struct {
	roleArg
}

func (s *Server) addPerfTools() {
	addTool(s, def("browser_performance", "Page performance", readOnly, "Load and render timings of the current page (TTFB, FCP, LCP, CLS, long tasks) with the elements involved."), s.performance)
}

// perfEl is an element the entries name.
type perfEl struct {
	Ref  string `json:"ref"`
	Role string `json:"role"`
	Name string `json:"name"`
	Tag  string `json:"tag"`
}

func (e *perfEl) String() string {
	if e == nil {
		return "an element no longer in the page"
	}
	s := e.Role
	if s == "" || s == "generic" || s == "none" {
		s = e.Tag
	}
	if e.Name != "" {
		s += fmt.Sprintf(" %q", e.Name)
	}
	if e.Ref != "" {
		s += " [ref=" + e.Ref + "]"
	}
	return s
}

// perfData is what the bridge's perf answers.
type perfData struct {
	Nav *struct {
		TTFB     float64 `json:"ttfb"`
		DCL      float64 `json:"dcl"`
		Load     float64 `json:"load"`
		Transfer float64 `json:"transfer"`
		Type     string  `json:"type"`
	} `json:"nav"`
	Paints map[string]float64 `json:"paints"`
	LCP    *struct {
		Time float64 `json:"time"`
		Size float64 `json:"size"`
		El   *perfEl `json:"el"`
		URL  string  `json:"url"`
	} `json:"lcp"`
	Shifts []struct {
		Time    float64  `json:"time"`
		Value   float64  `json:"value"`
		Sources []perfEl `json:"sources"`
	} `json:"shifts"`
	Long []struct {
		Time     float64 `json:"time"`
		Duration float64 `json:"duration"`
	} `json:"long"`
}

// rating is web.dev's word for a figure against its two thresholds.
func rating(v, good, poor float64) string {
	switch {
	case v <= good:
		return "good"
	case v <= poor:
		return "needs improvement"
	}
	return "poor"
}

func (s *Server) performance(ctx context.Context, c *call, _ perfArgs) (*response, error) {
	r, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	url := tab.URL()
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "file:") {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, URL: url,
			Message: "The current tab has loaded no page to measure.", Cause: "the tab shows " + url,
			Actions: []llmerr.Action{llmerr.Call("browser_navigate", "load the page to measure", llmerr.A("url", "https://example.com/"))}}
	}
	// The refs are those of the role's snapshots: a capture first, so the
	// elements the entries name have refs.
	if _, err := r.capture(tab.Page); err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: url})
	}
	raw, err := r.eng.Performance(tab.Page)
	if err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: url})
	}
	var d perfData
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return nil, fmt.Errorf("reading the performance entries: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Performance of %s (milliseconds from the start of its navigation; ratings are web.dev's):\n", url)
	if n := d.Nav; n != nil {
		line := fmt.Sprintf("- TTFB %.0f ms (%s)", n.TTFB, rating(n.TTFB, 800, 1800))
		if n.DCL > 0 {
			line += fmt.Sprintf(" · DOMContentLoaded %.0f ms", n.DCL)
		}
		if n.Load > 0 {
			line += fmt.Sprintf(" · load %.0f ms", n.Load)
		} else {
			line += " · load event not fired yet"
		}
		if n.Transfer > 0 {
			line += " · " + browser.HumanSize(int64(n.Transfer)) + " transferred"
		}
		if n.Type != "" && n.Type != "navigate" {
			line += " (" + n.Type + ")"
		}
		b.WriteString(line + "\n")
	} else {
		b.WriteString("- No navigation entry: the page was not loaded by a navigation of its own.\n")
	}
	fcp, hasFCP := d.Paints["first-contentful-paint"]
	switch {
	case hasFCP && d.LCP != nil:
		fmt.Fprintf(&b, "- FCP %.0f ms (%s) · LCP %.0f ms (%s): %s", fcp, rating(fcp, 1800, 3000), d.LCP.Time, rating(d.LCP.Time, 2500, 4000), d.LCP.El)
		if d.LCP.URL != "" {
			b.WriteString(" " + pageText(oneLineCut(d.LCP.URL, 120)))
		}
		b.WriteString("\n")
	case hasFCP:
		fmt.Fprintf(&b, "- FCP %.0f ms (%s) · no LCP entry yet\n", fcp, rating(fcp, 1800, 3000))
	default:
		b.WriteString("- Nothing painted yet (no FCP entry).\n")
	}
	cls, window := clsOf(d)
	if cls == 0 {
		b.WriteString("- CLS 0 (good): nothing moved on its own.\n")
	} else {
		fmt.Fprintf(&b, "- CLS %.3f (%s)", cls, rating(cls, 0.1, 0.25))
		if len(window) > 0 {
			names := make([]string, len(window))
			for i := range window {
				names[i] = window[i].String()
			}
			b.WriteString(": moved most: " + strings.Join(names, ", "))
		}
		b.WriteString("\n")
	}
	if len(d.Long) == 0 {
		b.WriteString("- No long tasks (none over 50 ms).\n")
	} else {
		var longest, blocking float64
		for _, t := range d.Long {
			longest = max(longest, t.Duration)
			blocking += t.Duration - 50
		}
		fmt.Fprintf(&b, "- Long tasks: %d, the longest %.0f ms; %.0f ms blocking in all (%s as total blocking time)\n",
			len(d.Long), longest, blocking, rating(blocking, 200, 600))
	}
	return textResponse(strings.TrimRight(b.String(), "\n")), nil
}

// clsOf is the page's cumulative layout shift: the largest session window
// (shifts less than a second apart, five seconds at most), with the
// elements that moved most in it.
func clsOf(d perfData) (float64, []perfEl) {
	shifts := d.Shifts
	sort.Slice(shifts, func(i, j int) bool { return shifts[i].Time < shifts[j].Time })
	best, sum := 0.0, 0.0
	var bestEls, els []perfEl
	start, last := 0.0, 0.0
	for i, s := range shifts {
		if i == 0 || s.Time-last > 1000 || s.Time-start > 5000 {
			start, sum, els = s.Time, 0, nil
		}
		sum += s.Value
		els = append(els, s.Sources...)
		last = s.Time
		if sum > best {
			best, bestEls = sum, append([]perfEl(nil), els...)
		}
	}
	seen := map[string]bool{}
	var out []perfEl
	for _, e := range bestEls {
		k := e.Ref + "|" + e.Role + "|" + e.Name
		if !seen[k] && len(out) < 3 {
			seen[k] = true
			out = append(out, e)
		}
	}
	return best, out
}
