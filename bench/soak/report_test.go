package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteSection(t *testing.T) {
	section := startMarker + "\n\n## Soak\n\nnew\n\n" + endMarker + "\n"
	tests := []struct {
		name, before, want string
	}{
		{"no file", "", "# Reliability\n\nHow retrace holds up over long sessions.\n\n" + section},
		{"no markers", "# Reliability\n\nBy hand.\n", "# Reliability\n\nBy hand.\n\n" + section},
		{"replaced, the rest kept",
			"# Reliability\n\nAbove.\n\n<!-- soak:start -->\nold\n<!-- soak:end -->\n\n## Later\n",
			"# Reliability\n\nAbove.\n\n" + section + "\n## Later\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "docs", "reliability.md")
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

func TestLatency(t *testing.T) {
	var xs []float64
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	if got := latency(xs); got != (stats{p50: 50.5, p95: 95}) {
		t.Errorf("latency(1..100) = %+v", got)
	}
	if got := latency([]float64{3}); got != (stats{p50: 3, p95: 3}) {
		t.Errorf("latency([3]) = %+v", got)
	}
}

func TestSlope(t *testing.T) {
	var ss []sample
	for c := 200; c <= 1000; c += 50 {
		ss = append(ss, sample{cycle: c, serverRSS: int64(20e6 + 3e4*c)}) // 3 MB per 100 cycles
	}
	k, ok := slope(ss, serverMB)
	if !ok || k*100 < 2.999 || k*100 > 3.001 {
		t.Errorf("slope = %v per 100 cycles, want 3", k*100)
	}
}

func TestRefAfter(t *testing.T) {
	snap := strings.Join([]string{
		`- button "Button 17" [ref=e40]`,
		`- button "Button 1" [ref=e5]`,
	}, "\n")
	if got := refAfter(snap, `button "Button 1"`); got != "e5" {
		t.Errorf("refAfter = %q, want e5", got)
	}
}

func TestPercent(t *testing.T) {
	for v, want := range map[float64]string{-0.003: "+0%", 0.32: "+32%", -0.13: "-13%"} {
		if got := percent(v); got != want {
			t.Errorf("percent(%v) = %q, want %q", v, got, want)
		}
	}
}
