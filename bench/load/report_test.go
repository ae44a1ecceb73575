package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var xs []float64
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	if got, want := summarize(xs), (dist{n: 100, p50: 50, p95: 95, p99: 99}); got != want {
		t.Errorf("summarize(1..100) = %+v, want %+v", got, want)
	}
	if got, want := summarize([]float64{7}), (dist{n: 1, p50: 7, p95: 7, p99: 7}); got != want {
		t.Errorf("summarize([7]) = %+v, want %+v", got, want)
	}
	if got := summarize(nil); got != (dist{}) {
		t.Errorf("summarize(nil) = %+v, want zero", got)
	}
	// Nearest rank on ten values: p95 and p99 are both the largest.
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for p, want := range map[float64]float64{50: 5, 90: 9, 95: 10, 99: 10, 0: 1} {
		if got := percentile(ten, p); got != want {
			t.Errorf("percentile(1..10, %v) = %v, want %v", p, got, want)
		}
	}
}

func TestParseLevels(t *testing.T) {
	got, err := parseLevels("16,1, 4,4")
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != 4 || got[2] != 16 {
		t.Errorf("parseLevels = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-2"} {
		if _, err := parseLevels(bad); err == nil {
			t.Errorf("parseLevels(%q) gave no error", bad)
		}
	}
	sys, err := parseSystems("playwright-mcp,retrace")
	if err != nil || strings.Join(sys, ",") != "retrace,playwright-mcp" {
		t.Errorf("parseSystems = %v, %v", sys, err)
	}
	if _, err := parseSystems("retrace,chrome"); err == nil {
		t.Error("parseSystems accepted an unknown system")
	}
}

func TestRefAfter(t *testing.T) {
	snap := strings.Join([]string{
		`- button "Button 10" [ref=e40]`,
		`  - button "Button 1" [ref=e5] [cursor=pointer]`,
	}, "\n")
	if got := refAfter(snap, `button "Button 1"`); got != "e5" {
		t.Errorf("refAfter = %q, want e5", got)
	}
	if got := refAfter(snap, `button "Button 2"`); got != "" {
		t.Errorf("refAfter of a missing button = %q", got)
	}
}

// level makes a level whose three tools all have the given p95.
func level(n int, callsPerSec, p95 float64, errs int) levelResult {
	d := dist{n: 10, p50: p95 / 2, p95: p95, p99: p95}
	return levelResult{sessions: n, elapsed: 10 * time.Second, calls: int(callsPerSec * 10), toolErrs: errs,
		tools: map[string]dist{"navigate": d, "snapshot": d, "click": d}}
}

func TestTargets(t *testing.T) {
	r := report{opts: options{levels: []int{1, 16}, duration: 10 * time.Second}, systems: []systemResult{
		{key: "retrace", name: "retrace local", levels: []levelResult{level(1, 10, 100, 0), level(16, 40, 250, 0)}},
		{key: "retrace-servers", name: "retrace remote", err: "stopped", levels: []levelResult{level(1, 0, 0, 1)}},
		{key: "retrace-servers", name: "retrace never", err: "not run: no flag"},
		{key: "playwright-mcp", name: "peer", levels: []levelResult{level(1, 5, 100, 0), level(16, 10, 900, 2)}},
	}}
	got := map[string]string{}
	for _, tg := range r.targets() {
		got[tg.system+": "+tg.what] = tg.value + " " + tg.met
	}
	want := map[string]string{
		"retrace local: snapshot p95 at 16 sessions ≤ 3× its value at 1 session": "2.50× met",
		"retrace local: click p95 at 16 sessions ≤ 3× its value at 1 session":    "2.50× met",
		"retrace local: throughput at 16 sessions ≥ 3× playwright-mcp's":         "4.00× met",
		"retrace local: no errors": "0 met",
		"retrace remote: snapshot p95 at 16 sessions ≤ 3× its value at 1 session": "n/a not measured",
		"retrace remote: click p95 at 16 sessions ≤ 3× its value at 1 session":    "n/a not measured",
		"retrace remote: throughput at 16 sessions ≥ 3× playwright-mcp's":         "n/a not measured",
		"retrace remote: no errors":  "1 **not met**",
		"retrace never: all targets": "not run not measured",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d targets, want %d: %v", len(got), len(want), got)
	}

	r.memory = &memoryResult{sessions: 2, tabs: 4,
		idle:         memState{label: "idle", procs: 2, rss: 100e6, server: 30e6, driver: 70e6},
		base:         memState{label: "base", procs: 10, chromium: 8, rss: 1000e6, pss: 400e6},
		withSessions: memState{label: "sessions", procs: 14, chromium: 12, rss: 1600e6, pss: 500e6},
		withTabs:     memState{label: "tabs", procs: 18, chromium: 16, rss: 2000e6, pss: 540e6},
		after:        memState{label: "after", procs: 2, rss: 125e6, server: 50e6, driver: 75e6}}
	md := r.markdown()
	for _, s := range []string{startMarker, endMarker,
		"**300.0 MB** RSS ((1600.0 − 1000.0) / 2), **50.0 MB** PSS", "**100.0 MB** RSS ((2000.0 − 1600.0) / 4), **10.0 MB** PSS",
		"against 2 idle: **back to idle**", "(+25.0 MB: retrace +20.0 MB, the driver +5.0 MB): **not back to idle**", "| peer | 1 | 5.00 |", "| 16 | 4.00× |", "| peer | 9.00× | 9.00× | 9.00× |", "not run"} {
		if !strings.Contains(md, s) {
			t.Errorf("the section lacks %q:\n%s", s, md)
		}
	}
}

func TestWriteSection(t *testing.T) {
	section := startMarker + "\n\n## Load\n\nnew\n\n" + endMarker + "\n"
	tests := []struct {
		name, before, want string
	}{
		{"no file", "", "# Benchmarks\n\n" + section},
		{"no markers", "# Benchmarks\n\nBy hand.\n", "# Benchmarks\n\nBy hand.\n\n" + section},
		{"above make bench's part",
			"# Benchmarks\n\nBy hand.\n\n<!-- generated by make bench: everything below is rewritten -->\n\nTables.\n",
			"# Benchmarks\n\nBy hand.\n\n" + section + "\n<!-- generated by make bench: everything below is rewritten -->\n\nTables.\n"},
		{"replaced, the rest kept",
			"# Benchmarks\n\nAbove.\n\n<!-- load:start -->\nold\n<!-- load:end -->\n\n## Later\n",
			"# Benchmarks\n\nAbove.\n\n" + section + "\n## Later\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "docs", "benchmarks.md")
			if tt.before != "" {
				if err := writeFile(path, []byte(tt.before)); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 { // writing twice gives the same file
				if err := writeSection(path, section); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
