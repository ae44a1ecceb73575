package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The targets the run is judged against.
const (
	maxGrowthMB = 5.0 // MB per 100 cycles after warm-up
	maxDrift    = 0.2 // rise of the snapshot median after warm-up, as a share of its mean
)

// The markers around the section this program owns in the Markdown file.
const (
	startMarker = "<!-- soak:start (written by make bench-soak) -->"
	endMarker   = "<!-- soak:end -->"
)

// report renders the samples of one run.
type report struct {
	opts     options
	samples  []sample
	elapsed  time.Duration
	chromium string
}

// settled returns the samples taken at or after the end of the warm-up.
func (r report) settled() []sample {
	var out []sample
	for _, s := range r.samples {
		if s.cycle >= r.opts.warmup {
			out = append(out, s)
		}
	}
	return out
}

// slope fits y = a + b·cycle by least squares and returns b, or false
// with fewer than two points.
func slope(ss []sample, y func(sample) float64) (float64, bool) {
	if len(ss) < 2 {
		return 0, false
	}
	var mx, my float64
	for _, s := range ss {
		mx += float64(s.cycle)
		my += y(s)
	}
	n := float64(len(ss))
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for _, s := range ss {
		dx := float64(s.cycle) - mx
		sxy += dx * (y(s) - my)
		sxx += dx * dx
	}
	return sxy / sxx, true
}

func mean(ss []sample, y func(sample) float64) float64 {
	var t float64
	for _, s := range ss {
		t += y(s)
	}
	return t / float64(len(ss))
}

func serverMB(s sample) float64 { return mb(s.serverRSS) }
func treeMB(s sample) float64   { return mb(s.treeRSS) }
func snapP50(s sample) float64  { return s.snap.p50 }

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// markdown is the Soak section, markers included.
func (r report) markdown() string {
	o := r.opts
	var b strings.Builder
	b.WriteString(startMarker + "\n\n## Soak\n\n")
	fmt.Fprintf(&b, "`make bench-soak` (`go run ./bench/soak -cycles %d -warmup %d -out %s -chart %s`) starts `%s` over stdio, as a client would, and drives one session through %s cycles of `browser_navigate` → `browser_snapshot` → `browser_click` on a generated page of 200 controls (50 each of buttons, text inputs, selects and links, served on 127.0.0.1; each cycle loads it anew and clicks the next button, by the ref the snapshot gave). Every %d cycles it records the resident memory (VmRSS) of the retrace process, the summed VmRSS of its whole process tree (retrace, the Playwright driver, every Chromium process, found by walking `/proc` by parent PID), the number of Chromium processes in that tree, and the median and 95th percentile of the snapshot and click round trips of the last %d cycles, as the client measured them. MB is 10⁶ bytes.\n\n",
		o.cycles, o.warmup, o.out, o.chart, o.bin, thousands(o.cycles), o.every, o.every)
	fmt.Fprintf(&b, "Measured %s on %s/%s, %d cores, %.0f GiB of memory, %s, %s; the run took %s.\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), memGiB(), r.chromium, runtime.Version(), r.elapsed.Round(time.Second))

	b.WriteString("| cycle | server RSS (MB) | tree RSS (MB) | processes | Chromium processes | snapshot p50 (ms) | snapshot p95 (ms) | click p50 (ms) | click p95 (ms) | failed cycles | load (1 min) |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var restarts []int
	for _, s := range r.samples {
		mark := ""
		if s.restarted {
			mark = " †"
			restarts = append(restarts, s.cycle)
		}
		fmt.Fprintf(&b, "| %s%s | %.1f | %.1f | %d | %d | %.1f | %.1f | %.1f | %.1f | %d | %.1f |\n",
			thousands(s.cycle), mark, mb(s.serverRSS), mb(s.treeRSS), s.procs, s.chromium, s.snap.p50, s.snap.p95, s.click.p50, s.click.p95, s.failures, s.load)
	}
	if len(restarts) > 0 {
		b.WriteString("\n† The Playwright driver or the browser was not the same process as at the sample before: it stopped during this window, the calls of that moment failed, and the next call started a new one. The tree's memory starts again from a fresh browser there.\n")
	}
	b.WriteString("\nThe tree figure sums VmRSS process by process, so pages shared between Chromium processes (the binary, shared libraries, shared memory) are counted once per process: it overstates what the tree costs the machine, and it is its trend that matters here. Chromium's crashpad handlers detach from the browser (their parent is init), so they are not in the tree. The load column is the machine's 1-minute load average when the sample was taken: other work on the machine shows in the latencies.\n")
	if o.chart != "" {
		rel, err := filepath.Rel(filepath.Dir(o.out), o.chart)
		if err != nil || o.out == "" {
			rel = o.chart
		}
		fmt.Fprintf(&b, "\n![RSS of the retrace process and of its process tree over the cycles](%s)\n", filepath.ToSlash(rel))
	}

	settled := r.settled()
	fmt.Fprintf(&b, "\n### After warm-up (cycles %s to %s)\n\n", thousands(o.warmup), thousands(r.samples[len(r.samples)-1].cycle))
	if len(settled) < 2 {
		b.WriteString("Too few samples after the warm-up to fit a trend: run more cycles.\n\n" + endMarker + "\n")
		return b.String()
	}
	first, last := settled[0], settled[len(settled)-1]
	span := float64(last.cycle - first.cycle)
	restart := 0 // the first sample after the warm-up whose window had a restart
	for _, s := range settled[1:] {
		if s.restarted && restart == 0 {
			restart = s.cycle
		}
	}
	b.WriteString("Growth is the least-squares slope over the samples from the end of the warm-up on, so one noisy sample does not decide it; the change between the first and the last of those samples is shown beside it.\n\n")
	b.WriteString("| figure | from | to | change | trend | target | met |\n| --- | ---: | ---: | ---: | ---: | --- | --- |\n")
	for _, m := range []struct {
		name string
		y    func(sample) float64
		part bool // a share of the tree, shown to say where its growth is
	}{
		{"server RSS (MB)", serverMB, false},
		{"tree RSS (MB)", treeMB, false},
		{"of which the driver (node)", func(s sample) float64 { return mb(s.driverRSS) }, true},
		{"of which Chromium", func(s sample) float64 { return mb(s.chromeRSS) }, true},
	} {
		k, _ := slope(settled, m.y)
		trend := fmt.Sprintf("%+.2f MB per 100 cycles", k*100)
		target, met := fmt.Sprintf("under %.0f MB per 100 cycles", maxGrowthMB), yesNo(k*100 < maxGrowthMB)
		if m.part {
			target, met = "(part of the tree)", ""
		}
		if restart > 0 && m.name != "server RSS (MB)" {
			// The browser's memory started again from nothing: a slope across
			// the restart measures the restart, not growth.
			trend = fmt.Sprintf("none: the browser restarted in the window ending at cycle %s", thousands(restart))
			if !m.part {
				met = "not measured"
			}
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %+.1f | %s | %s | %s |\n",
			m.name, m.y(first), m.y(last), m.y(last)-m.y(first), trend, target, met)
	}
	k, _ := slope(settled, snapP50)
	drift := k * span / mean(settled, snapP50)
	fmt.Fprintf(&b, "| snapshot p50 (ms) | %.1f | %.1f | %+.1f | %s over the %s cycles | flat: rises less than %.0f%% | %s |\n",
		first.snap.p50, last.snap.p50, last.snap.p50-first.snap.p50, percent(drift), thousands(int(span)), maxDrift*100, yesNo(drift < maxDrift))
	kc, _ := slope(settled, func(s sample) float64 { return s.click.p50 })
	clickDrift := kc * span / mean(settled, func(s sample) float64 { return s.click.p50 })
	fmt.Fprintf(&b, "| click p50 (ms) | %.1f | %.1f | %+.1f | %s over the %s cycles | (no target) | |\n",
		first.click.p50, last.click.p50, last.click.p50-first.click.p50, percent(clickDrift), thousands(int(span)))
	failed := 0
	for _, s := range r.samples {
		failed += s.failures
	}
	fmt.Fprintf(&b, "\n%s of %s cycles had a failed call.\n\n%s\n", thousands(failed), thousands(o.cycles), endMarker)
	return b.String()
}

// svg draws the RSS of the tree and of the server over the cycles, one
// panel each with its own scale: the server is a few percent of the tree,
// and on one scale its trend would not show.
func (r report) svg() string {
	const (
		width, left, right = 640, 60, 20
		title, panelH, gap = 56, 150, 46
		height             = title + 2*panelH + gap + 44
		plotW              = width - left - right
		xTicks             = 5
	)
	maxCycle := r.samples[len(r.samples)-1].cycle
	x := func(c int) float64 { return left + float64(plotW)*float64(c)/float64(maxCycle) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">Resident memory (VmRSS, MB) over %s soak cycles</text>`+"\n", left, thousands(maxCycle))
	panels := []struct {
		label, color string
		y            func(sample) float64
	}{
		{"process tree: retrace + driver + Chromium", "#ef6c00", treeMB},
		{"retrace server", "#1565c0", serverMB},
	}
	for i, p := range panels {
		top := title + i*(panelH+gap)
		var maxMB float64
		for _, s := range r.samples {
			maxMB = max(maxMB, p.y(s))
		}
		step := niceStep(maxMB / 4)
		yMax := math.Ceil(maxMB*1.05/step) * step // headroom above the highest point
		if yMax == 0 {
			yMax = step
		}
		y := func(v float64) float64 { return float64(top) + panelH*(1-v/yMax) }
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s" font-weight="bold">%s</text>`+"\n", left, top-8, p.color, p.label)
		for v := 0.0; v <= yMax+step/2; v += step {
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
				left, y(v), width-right, y(v), left-4, y(v)+4, strconv.FormatFloat(v, 'f', -1, 64))
		}
		if w := r.opts.warmup; w > 0 && w < maxCycle {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#9e9e9e" stroke-dasharray="4 3"/><text x="%.1f" y="%d" fill="#757575">end of warm-up</text>`+"\n",
				x(w), top, x(w), top+panelH, x(w)+4, top+panelH-6)
		}
		var pts []string
		for _, s := range r.samples {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.cycle), y(p.y(s))))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), p.color)
		for _, s := range r.samples {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>cycle %d, %s: %.1f MB</title></circle>`+"\n",
				x(s.cycle), y(p.y(s)), p.color, s.cycle, p.label, p.y(s))
		}
		for t := 0; t <= xTicks; t++ {
			c := maxCycle * t / xTicks
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(c), top+panelH+15, thousands(c))
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">cycle</text>`+"\n", left+plotW/2, height-8)
	b.WriteString("</svg>\n")
	return b.String()
}

// percent writes a share as a signed whole percentage, never "-0%".
func percent(v float64) string {
	return fmt.Sprintf("%+.0f%%", math.Round(v*100)+0) // +0 turns -0 into 0
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// thousands writes n with a comma between thousands: 1,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// loadAvg is the machine's 1-minute load average, from /proc/loadavg.
func loadAvg() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// memGiB is the machine's memory from /proc/meminfo, in GiB.
func memGiB() float64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / (1 << 20)
			}
		}
	}
	return 0
}

// writeSection puts section into the Markdown file at path: in place of
// the part between the soak markers, or at the end when there is none, or
// in a new file with a title.
func writeSection(path, section string) error {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return writeFile(path, []byte("# Reliability\n\nHow retrace holds up over long sessions.\n\n"+section))
	}
	if err != nil {
		return err
	}
	doc := string(data)
	i := strings.Index(doc, "<!-- soak:start")
	if i < 0 {
		return os.WriteFile(path, []byte(strings.TrimRight(doc, "\n")+"\n\n"+section), 0o644)
	}
	j := strings.Index(doc[i:], endMarker)
	if j < 0 {
		return fmt.Errorf("%s has a soak start marker but no %s", path, endMarker)
	}
	rest := doc[i+j+len(endMarker):]
	rest = strings.TrimPrefix(rest, "\n")
	return os.WriteFile(path, []byte(doc[:i]+section+rest), 0o644)
}
