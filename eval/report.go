package eval

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Cell is the result of one fault kind (or "all") for one policy and style.
type Cell struct {
	Kind   string `json:"kind"`
	Policy string `json:"policy"`
	Style  string `json:"style"`
	Runs   int    `json:"runs"`
	// Recovered counts runs that reached the goal.
	Recovered int     `json:"recovered"`
	Rate      float64 `json:"recoveryRate"`
	// ExtraMedian and ExtraMax are over the runs that recovered.
	ExtraMedian float64 `json:"extraCallsMedian"`
	ExtraMax    int     `json:"extraCallsMax"`
	// PassK is the share of scenarios whose K runs all reached the goal.
	PassK float64 `json:"passK"`
}

// Report is what `retrace eval` writes.
type Report struct {
	Date      string   `json:"date"`
	Command   string   `json:"command"`
	K         int      `json:"k"`
	Scenarios int      `json:"scenarios"`
	Chromium  string   `json:"chromium,omitempty"`
	Cells     []Cell   `json:"cells"`
	Runs      []Run    `json:"runs"`
	Targets   []string `json:"targetsMissed,omitempty"`
}

// Summarize aggregates runs per kind, policy and style, plus "all" rows.
func Summarize(runs []Run, k int) []Cell {
	type key struct{ kind, policy, style string }
	groups := map[key][]Run{}
	var order []key
	add := func(kk key, r Run) {
		if _, ok := groups[kk]; !ok {
			order = append(order, kk)
		}
		groups[kk] = append(groups[kk], r)
	}
	for _, r := range runs {
		add(key{r.Kind, r.Policy, r.Style}, r)
		add(key{"all", r.Policy, r.Style}, r)
	}
	kindIdx := func(k string) int {
		if k == "all" {
			return len(Kinds)
		}
		return slices.Index(Kinds, k)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.policy != b.policy {
			return a.policy > b.policy // reader before naive
		}
		if a.style != b.style {
			return a.style > b.style // recovery before plain
		}
		return kindIdx(a.kind) < kindIdx(b.kind)
	})
	var cells []Cell
	for _, kk := range order {
		rs := groups[kk]
		c := Cell{Kind: kk.kind, Policy: kk.policy, Style: kk.style, Runs: len(rs)}
		var extra []int
		byScenario := map[string]bool{}
		for _, r := range rs {
			if _, ok := byScenario[r.Scenario]; !ok {
				byScenario[r.Scenario] = true
			}
			if r.Reached {
				c.Recovered++
				extra = append(extra, r.ExtraCalls)
			} else {
				byScenario[r.Scenario] = false
			}
		}
		c.Rate = float64(c.Recovered) / float64(max(1, c.Runs))
		if len(extra) > 0 {
			slices.Sort(extra)
			c.ExtraMax = extra[len(extra)-1]
			m := len(extra) / 2
			c.ExtraMedian = float64(extra[m])
			if len(extra)%2 == 0 {
				c.ExtraMedian = float64(extra[m-1]+extra[m]) / 2
			}
		}
		all := 0
		for _, ok := range byScenario {
			if ok {
				all++
			}
		}
		c.PassK = float64(all) / float64(max(1, len(byScenario)))
		cells = append(cells, c)
	}
	return cells
}

// CheckTargets returns the targets of docs/eval.md that the reader with
// recovery errors misses: at least 95% over all scenarios, 90% in every
// kind, and a median of at most 2 extra calls.
func CheckTargets(cells []Cell) []string {
	var missed []string
	for _, c := range cells {
		if c.Policy != "reader" || c.Style != "recovery" {
			continue
		}
		switch {
		case c.Kind == "all" && c.Rate < 0.95:
			missed = append(missed, fmt.Sprintf("recovery over all scenarios is %.0f%%, below 95%%", c.Rate*100))
		case c.Kind != "all" && c.Rate < 0.90:
			missed = append(missed, fmt.Sprintf("recovery for %s is %.0f%%, below 90%%", c.Kind, c.Rate*100))
		}
		if c.Kind == "all" && c.ExtraMedian > 2 {
			missed = append(missed, fmt.Sprintf("median extra calls is %.1f, above 2", c.ExtraMedian))
		}
	}
	return missed
}

// Markdown renders the cells as the table of docs/eval.md.
func Markdown(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| fault kind | policy | errors | recovered | recovery rate | extra calls (median / max) | pass^%d |\n", rep.K)
	b.WriteString("| --- | --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, c := range rep.Cells {
		kind := c.Kind
		if kind == "all" {
			kind = "**all**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d/%d | %.0f%% | %s / %d | %.0f%% |\n",
			kind, c.Policy, c.Style, c.Recovered, c.Runs, c.Rate*100, trimFloat(c.ExtraMedian), c.ExtraMax, c.PassK*100)
	}
	return b.String()
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}

// SVG draws recovery rate by fault kind, one bar per policy and style.
func SVG(cells []Cell) string {
	series := []struct{ policy, style, color, label string }{
		{"reader", "recovery", "#2e7d32", "reader, recovery plans"},
		{"reader", "plain", "#ef6c00", "reader, plain errors"},
		{"naive", "recovery", "#1565c0", "naive, recovery plans"},
		{"naive", "plain", "#9e9e9e", "naive, plain errors"},
	}
	rate := map[string]float64{}
	present := map[int]bool{}
	for _, c := range cells {
		for i, s := range series {
			if c.Policy == s.policy && c.Style == s.style {
				rate[c.Kind+"|"+s.policy+"|"+s.style] = c.Rate
				present[i] = true
			}
		}
	}
	var shown []int
	for i := range series {
		if present[i] {
			shown = append(shown, i)
		}
	}
	kinds := append(append([]string{}, Kinds...), "all")
	const (
		left, top, plotH = 50, 40, 220
		barW, gap        = 12, 18
	)
	groupW := len(shown)*barW + gap
	width := left + len(kinds)*groupW + 20
	height := top + plotH + 110
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">Recovery rate by fault kind</text>`+"\n", left)
	for p := 0; p <= 100; p += 25 {
		y := top + plotH - plotH*p/100
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/><text x="%d" y="%d" text-anchor="end">%d%%</text>`+"\n",
			left, y, width-10, y, left-4, y+4, p)
	}
	for gi, k := range kinds {
		x0 := left + gi*groupW + gap/2
		for si, i := range shown {
			s := series[i]
			r, ok := rate[k+"|"+s.policy+"|"+s.style]
			if !ok {
				continue
			}
			h := int(r*plotH + 0.5)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s, %s: %.0f%%</title></rect>`+"\n",
				x0+si*barW, top+plotH-h, barW-1, h, s.color, html.EscapeString(k), s.label, r*100)
		}
		cx := x0 + len(shown)*barW/2
		fmt.Fprintf(&b, `<text transform="translate(%d,%d) rotate(-40)" text-anchor="end">%s</text>`+"\n", cx, top+plotH+14, html.EscapeString(k))
	}
	for li, i := range shown {
		s := series[i]
		x := left + li*170
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			x, height-16, s.color, x+14, height-7, s.label)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// Write puts report.md, report.json and recovery.svg in dir.
func Write(dir string, rep *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# retrace eval\n\n%s, %d scenarios, k=%d. Command: `%s`\n\n", rep.Date, rep.Scenarios, rep.K, rep.Command)
	md.WriteString(Markdown(rep))
	if len(rep.Targets) > 0 {
		md.WriteString("\nTargets missed:\n")
		for _, t := range rep.Targets {
			md.WriteString("- " + t + "\n")
		}
	} else {
		md.WriteString("\nEvery target is met (reader with recovery plans: ≥ 95% overall, ≥ 90% per kind, median extra calls ≤ 2).\n")
	}
	md.WriteString("\n![Recovery rate by fault kind](recovery.svg)\n")
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	for name, body := range map[string][]byte{
		"report.md":    []byte(md.String()),
		"report.json":  append(data, '\n'),
		"recovery.svg": []byte(SVG(rep.Cells)),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// NewReport builds the report of runs.
func NewReport(runs []Run, k, scenarios int, command string) *Report {
	rep := &Report{Date: time.Now().UTC().Format("2006-01-02"), Command: command, K: k, Scenarios: scenarios,
		Runs: runs, Cells: Summarize(runs, k)}
	rep.Targets = CheckTargets(rep.Cells)
	return rep
}
