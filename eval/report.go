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

// Cell is the result of one fault kind (or "all") for one server, policy
// and style.
type Cell struct {
	Kind   string `json:"kind"`
	Server string `json:"server"`
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

// ServerInfo says what one evaluated server was.
type ServerInfo struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	// Version is its name and version as initialize gave them.
	Version string `json:"version"`
	Adapter string `json:"adapter"`
}

// Report is what `retrace eval` writes.
type Report struct {
	Date      string       `json:"date"`
	Command   string       `json:"command"`
	K         int          `json:"k"`
	Scenarios int          `json:"scenarios"`
	Servers   []ServerInfo `json:"servers"`
	Cells     []Cell       `json:"cells"`
	Runs      []Run        `json:"runs"`
	Targets   []string     `json:"targetsMissed,omitempty"`
}

// Infos describes the servers for a report.
func Infos(servers []*Server) []ServerInfo {
	out := make([]ServerInfo, len(servers))
	for i, s := range servers {
		out[i] = ServerInfo{Name: s.Name, Command: s.Command, Version: s.Version()}
		if s.adapter != nil {
			out[i].Adapter = s.adapter.Name
		}
	}
	return out
}

// policyOrder and styleOrder are the report's orders; others come after.
var (
	policyOrder = []string{"generic", "reader", "naive", "llm"}
	styleOrder  = []string{"recovery", "plain", NativeStyle}
)

func orderOf(list []string, v string) int {
	if i := slices.Index(list, v); i >= 0 {
		return i
	}
	return len(list)
}

// Summarize aggregates runs per server, kind, policy and style, plus "all"
// rows. Servers keep the order in which the runs name them.
func Summarize(runs []Run, k int) []Cell {
	type key struct{ server, kind, policy, style string }
	groups := map[key][]Run{}
	var order []key
	var servers []string
	add := func(kk key, r Run) {
		if _, ok := groups[kk]; !ok {
			order = append(order, kk)
		}
		groups[kk] = append(groups[kk], r)
	}
	for _, r := range runs {
		if !slices.Contains(servers, r.Server) {
			servers = append(servers, r.Server)
		}
		add(key{r.Server, r.Kind, r.Policy, r.Style}, r)
		add(key{r.Server, "all", r.Policy, r.Style}, r)
	}
	kindIdx := func(k string) int {
		if k == "all" {
			return len(Kinds)
		}
		return slices.Index(Kinds, k)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.server != b.server {
			return slices.Index(servers, a.server) < slices.Index(servers, b.server)
		}
		if a.policy != b.policy {
			if oa, ob := orderOf(policyOrder, a.policy), orderOf(policyOrder, b.policy); oa != ob {
				return oa < ob
			}
			return a.policy < b.policy
		}
		if a.style != b.style {
			return orderOf(styleOrder, a.style) < orderOf(styleOrder, b.style)
		}
		return kindIdx(a.kind) < kindIdx(b.kind)
	})
	var cells []Cell
	for _, kk := range order {
		rs := groups[kk]
		c := Cell{Kind: kk.kind, Server: kk.server, Policy: kk.policy, Style: kk.style, Runs: len(rs)}
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

// target is one recovery target of docs/eval.md, for a policy on retrace
// with recovery plans.
type target struct {
	policy       string
	overall, per float64
	extraMedian  float64 // 0: none
}

var targets = []target{
	{policy: "reader", overall: 0.95, per: 0.90, extraMedian: 2},
	{policy: "generic", overall: 0.90, per: 0.80},
}

// CheckTargets returns the targets of docs/eval.md that retrace misses with
// recovery plans: the reader at least 95% over all scenarios, 90% in every
// kind, and a median of at most 2 extra calls; the generic policy at least
// 90% over all and 80% in every kind. retrace names the servers that are
// retrace (by their adapter); other servers have no targets.
func CheckTargets(cells []Cell, retrace []string) []string {
	var missed []string
	for _, c := range cells {
		if c.Style != "recovery" || !slices.Contains(retrace, c.Server) {
			continue
		}
		for _, t := range targets {
			if c.Policy != t.policy {
				continue
			}
			who := c.Server + ", " + c.Policy
			switch {
			case c.Kind == "all" && c.Rate < t.overall:
				missed = append(missed, fmt.Sprintf("%s: recovery over all scenarios is %.0f%%, below %.0f%%", who, c.Rate*100, t.overall*100))
			case c.Kind != "all" && c.Rate < t.per:
				missed = append(missed, fmt.Sprintf("%s: recovery for %s is %.0f%%, below %.0f%%", who, c.Kind, c.Rate*100, t.per*100))
			}
			if c.Kind == "all" && t.extraMedian > 0 && c.ExtraMedian > t.extraMedian {
				missed = append(missed, fmt.Sprintf("%s: median extra calls is %.1f, above %s", who, c.ExtraMedian, trimFloat(t.extraMedian)))
			}
		}
	}
	return missed
}

// Markdown renders the cells as the table of docs/eval.md.
func Markdown(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| server | fault kind | policy | errors | recovered | recovery rate | extra calls (median / max) | pass^%d |\n", rep.K)
	b.WriteString("| --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, c := range rep.Cells {
		kind := c.Kind
		if kind == "all" {
			kind = "**all**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d/%d | %.0f%% | %s / %d | %.0f%% |\n",
			c.Server, kind, c.Policy, c.Style, c.Recovered, c.Runs, c.Rate*100, trimFloat(c.ExtraMedian), c.ExtraMax, c.PassK*100)
	}
	return b.String()
}

// series is one column of the side-by-side table and one bar of the chart.
type series struct{ server, policy, style string }

func (s series) label() string {
	if s.style == NativeStyle {
		return s.server + ", " + s.policy
	}
	return s.server + ", " + s.policy + ", " + s.style
}

func seriesOf(cells []Cell) []series {
	var out []series
	for _, c := range cells {
		s := series{c.Server, c.Policy, c.Style}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Compare renders the servers side by side: a row per fault kind, a column
// per server, policy and style, each cell the recovery rate and runs.
func Compare(rep *Report) string {
	ss := seriesOf(rep.Cells)
	rate := map[string]Cell{}
	for _, c := range rep.Cells {
		rate[c.Kind+"|"+series{c.Server, c.Policy, c.Style}.label()] = c
	}
	var b strings.Builder
	b.WriteString("| fault kind |")
	for _, s := range ss {
		b.WriteString(" " + s.label() + " |")
	}
	b.WriteString("\n| --- |" + strings.Repeat(" ---: |", len(ss)) + "\n")
	for _, k := range append(slices.Clone(Kinds), "all") {
		row := "| " + k + " |"
		if k == "all" {
			row = "| **all** |"
		}
		any := false
		for _, s := range ss {
			c, ok := rate[k+"|"+s.label()]
			if !ok {
				row += " |"
				continue
			}
			any = true
			row += fmt.Sprintf(" %.0f%% (%d/%d) |", c.Rate*100, c.Recovered, c.Runs)
		}
		if any {
			b.WriteString(row + "\n")
		}
	}
	return b.String()
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}

// palette colours the chart's bars, one per series, in order.
var palette = []string{"#2e7d32", "#1565c0", "#ef6c00", "#6a1b9a", "#00838f", "#9e9e9e", "#c62828", "#5d4037"}

// SVG draws recovery rate by fault kind, one bar per server, policy and
// style.
func SVG(cells []Cell) string {
	ss := seriesOf(cells)
	rate := map[string]float64{}
	for _, c := range cells {
		rate[c.Kind+"|"+series{c.Server, c.Policy, c.Style}.label()] = c.Rate
	}
	var kinds []string
	for _, k := range append(slices.Clone(Kinds), "all") {
		if slices.ContainsFunc(cells, func(c Cell) bool { return c.Kind == k }) {
			kinds = append(kinds, k)
		}
	}
	const (
		left, top, plotH = 50, 40, 220
		gap              = 18
	)
	barW := 12
	if len(ss) > 4 {
		barW = 8
	}
	groupW := len(ss)*barW + gap
	width := max(left+len(kinds)*groupW+20, left+((len(ss)+1)/2)*260)
	legendRows := (len(ss) + 1) / 2
	height := top + plotH + 100 + legendRows*16
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
		for si, s := range ss {
			r, ok := rate[k+"|"+s.label()]
			if !ok {
				continue
			}
			h := int(r*plotH + 0.5)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s, %s: %.0f%%</title></rect>`+"\n",
				x0+si*barW, top+plotH-h, barW-1, h, palette[si%len(palette)], html.EscapeString(k), html.EscapeString(s.label()), r*100)
		}
		cx := x0 + len(ss)*barW/2
		fmt.Fprintf(&b, `<text transform="translate(%d,%d) rotate(-40)" text-anchor="end">%s</text>`+"\n", cx, top+plotH+14, html.EscapeString(k))
	}
	for li, s := range ss {
		x := left + (li%2)*260
		y := top + plotH + 90 + (li/2)*16
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			x, y, palette[li%len(palette)], x+14, y+9, html.EscapeString(s.label()))
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
	for _, sv := range rep.Servers {
		fmt.Fprintf(&md, "- **%s**: %s (adapter %s), `%s`\n", sv.Name, sv.Version, sv.Adapter, sv.Command)
	}
	md.WriteString("\n## Side by side\n\n" + Compare(rep) + "\n## Every cell\n\n")
	md.WriteString(Markdown(rep))
	if len(rep.Targets) > 0 {
		md.WriteString("\nTargets missed:\n")
		for _, t := range rep.Targets {
			md.WriteString("- " + t + "\n")
		}
	} else {
		md.WriteString("\nEvery target is met (retrace with recovery plans: reader ≥ 95% overall, ≥ 90% per kind, median extra calls ≤ 2; generic ≥ 90% overall, ≥ 80% per kind).\n")
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

// NewReport builds the report of runs on servers.
func NewReport(runs []Run, servers []*Server, k, scenarios int, command string) *Report {
	rep := &Report{Date: time.Now().UTC().Format("2006-01-02"), Command: command, K: k, Scenarios: scenarios,
		Servers: Infos(servers), Runs: runs, Cells: Summarize(runs, k)}
	var retrace []string
	for _, s := range rep.Servers {
		if s.Adapter == "retrace" {
			retrace = append(retrace, s.Name)
		}
	}
	rep.Targets = CheckTargets(rep.Cells, retrace)
	return rep
}
