// Command soak runs one retrace session through many cycles of
// browser_navigate → browser_snapshot → browser_click on a page of 200
// controls and records, every few cycles, the resident memory of the server
// and of its whole process tree (driver and Chromium included), the number
// of Chromium processes and the latency of snapshots and clicks. It writes a
// Markdown section and an SVG chart.
//
//	go run ./bench/soak [-cycles 1000] [-every 50] [-out docs/reliability.md] [-chart docs/soak-rss.svg]
//
// make bench-soak runs it against bin/retrace, started as a subprocess and
// driven over stdio by the go-sdk client. It is not part of make test.
//
// To see what the server's heap holds during a run, build it with pprof
// (pprof.go) and take /debug/pprof/heap at two cycles:
//
//	go build -tags pprof -o /tmp/retrace-pprof . && RETRACE_PPROF_ADDR=127.0.0.1:6060 go run ./bench/soak -bin /tmp/retrace-pprof
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/internal/benchpage"
	"github.com/retrace-dev/retrace/internal/proctree"
)

// options are the command's flags.
type options struct {
	cycles      int
	every       int
	warmup      int
	out         string
	chart       string
	bin         string
	callTimeout time.Duration
	timeout     time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.cycles, "cycles", 2000, "navigate → snapshot → click cycles to run")
	flag.IntVar(&o.every, "every", 50, "record a sample every this many cycles")
	flag.IntVar(&o.warmup, "warmup", 1000, "cycles of warm-up left out of the growth figures (Chromium grows for its first minutes whatever drives it)")
	flag.StringVar(&o.out, "out", "", "write the Soak section into this Markdown file (between its soak markers)")
	flag.StringVar(&o.chart, "chart", "", "write the RSS chart as SVG to this file")
	flag.StringVar(&o.bin, "bin", "bin/retrace", "the retrace binary, relative to the module root unless absolute")
	flag.DurationVar(&o.callTimeout, "call-timeout", time.Minute, "the longest one tool call may take")
	flag.DurationVar(&o.timeout, "timeout", 45*time.Minute, "the longest the whole run may take")
	flag.Parse()
	if o.cycles < 1 || o.every < 1 {
		fmt.Fprintln(os.Stderr, "soak: -cycles and -every must be positive")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// sample is what one window of cycles ends with.
type sample struct {
	cycle     int
	serverRSS int64 // bytes
	treeRSS   int64 // bytes
	driverRSS int64 // bytes
	chromeRSS int64 // bytes, all Chromium processes
	procs     int   // processes in the tree
	chromium  int
	load      float64 // the machine's 1-minute load average
	snap      stats
	click     stats
	failures  int // cycles of the window with a failed call
	// restarted is true when the driver or the browser is not the process
	// of the sample before: memory starts again from a fresh browser.
	restarted bool
}

// stats are the latencies of one tool over a window, in milliseconds.
type stats struct{ p50, p95 float64 }

// maxFailedInARow ends the run early: the session is unusable.
const maxFailedInARow = 5

func run(o options) (err error) {
	root, err := fixture.ModuleRoot()
	if err != nil {
		return err
	}
	bin := o.bin
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(root, bin)
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%w (make build makes it)", err)
	}
	chromium, err := browser.FindChromium("")
	if err != nil {
		return err
	}
	page, err := startPage()
	if err != nil {
		return err
	}
	defer page.Close()

	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	logf, err := os.CreateTemp("", "retrace-soak-*.log")
	if err != nil {
		return err
	}
	failedRun := 0
	defer func() {
		logf.Close()
		if err == nil && failedRun == 0 {
			os.Remove(logf.Name())
			return
		}
		fmt.Fprintf(os.Stderr, "soak: the server's log is kept in %s\n", logf.Name()) // to read why calls failed
	}()
	cmd := exec.Command(bin, "--executable-path", chromium)
	cmd.Stderr = logf
	connectCtx, cancelConnect := context.WithTimeout(ctx, o.callTimeout)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "retrace-soak", Version: "0"}, nil).
		Connect(connectCtx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	cancelConnect()
	if err != nil {
		return fmt.Errorf("start %s: %w (log: %s)", bin, err, logf.Name())
	}
	pid := cmd.Process.Pid
	defer stop(cs, pid)

	fmt.Fprintf(os.Stderr, "soak: retrace pid %d, page %s, %d cycles, a sample every %d (server log: %s)\n", pid, page.URL, o.cycles, o.every, logf.Name())
	start := time.Now()
	var samples []sample
	var snaps, clicks []float64
	failures, inARow := 0, 0
	var prevBrowser [2]int // driver and browser PIDs at the last sample
	for c := 1; c <= o.cycles; c++ {
		snapMs, clickMs, err := cycle(ctx, cs, o.callTimeout, page.URL, c)
		if snapMs > 0 {
			snaps = append(snaps, snapMs)
		}
		if clickMs > 0 {
			clicks = append(clicks, clickMs)
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("cycle %d: the run took longer than -timeout %s: %w", c, o.timeout, err)
			}
			failures++
			failedRun++
			inARow++
			fmt.Fprintf(os.Stderr, "soak: cycle %d: %v\n", c, err)
			if inARow >= maxFailedInARow {
				return fmt.Errorf("%d cycles in a row failed, the last at cycle %d: %w (log: %s)", inARow, c, err, logf.Name())
			}
		} else {
			inARow = 0
		}
		if c%o.every == 0 || c == o.cycles {
			t := sampleTree(pid)
			s := sample{cycle: c, serverRSS: t.serverRSS, treeRSS: t.treeRSS, driverRSS: t.driverRSS, chromeRSS: t.chromiumRSS, procs: len(t.procs), chromium: t.chromium,
				snap: latency(snaps), click: latency(clicks), failures: failures, load: loadAvg()}
			s.restarted = len(samples) > 0 && t.browser != prevBrowser
			prevBrowser = t.browser
			if s.restarted {
				fmt.Fprintf(os.Stderr, "soak: the driver or browser was restarted since the last sample (driver, browser PIDs now %v)\n", t.browser)
			}
			samples = append(samples, s)
			fmt.Fprintf(os.Stderr, "soak: cycle %4d  server %6.1f MB  tree %7.1f MB  %2d procs (%2d chromium)  snapshot p50 %5.1f p95 %5.1f ms  click p50 %5.1f p95 %5.1f ms  failed %d  load %.1f  (%s)\n",
				c, mb(s.serverRSS), mb(s.treeRSS), s.procs, s.chromium, s.snap.p50, s.snap.p95, s.click.p50, s.click.p95, failures, s.load, time.Since(start).Round(time.Second))
			snaps, clicks, failures = snaps[:0], clicks[:0], 0
		}
	}
	elapsed := time.Since(start)

	rep := report{opts: o, samples: samples, elapsed: elapsed, chromium: benchpage.ChromiumVersion(chromium)}
	section := rep.markdown()
	fmt.Print(section)
	if o.chart != "" {
		if err := writeFile(o.chart, []byte(rep.svg())); err != nil {
			return err
		}
	}
	if o.out != "" {
		return writeSection(o.out, section)
	}
	return nil
}

// writeFile writes data to path, making its directory first.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// cycle runs navigate → snapshot → click once and returns the snapshot and
// click latencies in milliseconds (0 for a call that failed or did not run).
func cycle(ctx context.Context, cs *mcp.ClientSession, timeout time.Duration, url string, n int) (snapMs, clickMs float64, err error) {
	if _, _, err := call(ctx, cs, timeout, "browser_navigate", map[string]any{"url": fmt.Sprintf("%s?cycle=%d", url, n)}); err != nil {
		return 0, 0, err
	}
	text, d, err := call(ctx, cs, timeout, "browser_snapshot", map[string]any{})
	if err != nil {
		return 0, 0, err
	}
	snapMs = ms(d)
	// Walk the buttons in turn so each cycle clicks a different one.
	name := fmt.Sprintf("Button %d", (n-1)%perKind+1)
	ref := refAfter(text, `button "`+name+`"`)
	if ref == "" {
		return snapMs, 0, fmt.Errorf("the snapshot has no %q: %s", name, firstLines(text, 5))
	}
	if _, d, err = call(ctx, cs, timeout, "browser_click", map[string]any{"ref": ref, "element": name}); err != nil {
		return snapMs, 0, err
	}
	return snapMs, ms(d), nil
}

// call runs one tool with its own deadline and returns its text and the
// round trip as the client saw it. A tool error is an error.
func call(ctx context.Context, cs *mcp.ClientSession, timeout time.Duration, tool string, args map[string]any) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	d := time.Since(start)
	if err != nil {
		return "", d, fmt.Errorf("%s: %w", tool, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return text.String(), d, fmt.Errorf("%s failed: %s", tool, firstLines(text.String(), 5))
	}
	return text.String(), d, nil
}

// stop ends the session (retrace exits when its stdin closes) and then kills,
// by PID, whatever of its process tree is still running.
func stop(cs *mcp.ClientSession, pid int) {
	tree := proctree.Sample(pid)
	cs.Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && tree.Running() > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	if n := tree.KillLeft(); n > 0 {
		fmt.Fprintf(os.Stderr, "soak: killed %d processes left after retrace exited\n", n)
	}
}

var refRe = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

// refAfter returns the first ref on the first line containing what.
func refAfter(text, what string) string {
	for line := range strings.SplitSeq(text, "\n") {
		if _, rest, ok := strings.Cut(line, what); ok {
			if m := refRe.FindStringSubmatch(rest); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// latency is the median and 95th percentile (nearest rank) of xs.
func latency(xs []float64) stats {
	if len(xs) == 0 {
		return stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var p50 float64
	if len(s)%2 == 1 {
		p50 = s[len(s)/2]
	} else {
		p50 = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	rank := (95*len(s) + 99) / 100 // ceil(0.95 n)
	return stats{p50: p50, p95: s[rank-1]}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// mb is bytes in megabytes (10^6 bytes), the unit of the targets.
func mb(b int64) float64 { return float64(b) / 1e6 }

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}
