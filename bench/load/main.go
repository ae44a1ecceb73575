// Command load puts concurrent MCP sessions over Streamable HTTP on three
// systems in one run, retrace with a local Chromium, retrace on two
// Playwright browser servers (--browser-endpoint) and playwright-mcp
// (pinned, from npm), and reports for each concurrency level calls per
// second, p50/p95/p99 latency per tool, errors and the peak RSS of the
// process trees, with the ratios and the targets of the load issue. It also
// measures, on retrace alone, the memory of an idle session and of an open
// tab, and that everything is given back when the clients leave.
//
//	go run ./bench/load [-levels 1,4,8,16] [-duration 30s] [-out docs/benchmarks.md]
//	go run ./bench/load -duration 5s -levels 1,4   # a quick run
//
// make bench-load runs it against bin/retrace. It is not part of make test.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/internal/benchpage"
	"github.com/retrace-dev/retrace/internal/peer"
)

// options are the command's flags.
type options struct {
	levels       []int
	duration     time.Duration
	systems      []string
	out          string
	bin          string
	peerDir      string
	idleSessions int
	tabs         int
	memory       bool
	callTimeout  time.Duration
	timeout      time.Duration
	raw          string // CSV of every successful timed call
	command      string // how the bench was run, for the report
}

// allSystems are the systems in the order they run.
var allSystems = []string{"retrace", "retrace-servers", "playwright-mcp"}

func main() {
	var o options
	levels := flag.String("levels", "1,4,8,16", "comma-separated numbers of concurrent sessions, one level each (run in increasing order)")
	systems := flag.String("systems", strings.Join(allSystems, ","), "comma-separated systems to measure: "+strings.Join(allSystems, ", "))
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "how long each level runs")
	flag.StringVar(&o.out, "out", "", "write the Load section into this Markdown file (between its load markers)")
	flag.StringVar(&o.raw, "raw", "", "also write every successful timed call (system, sessions, session, tool, start and round trip in ms) to this CSV file")
	flag.StringVar(&o.bin, "bin", "bin/retrace", "the retrace binary, relative to the module root unless absolute")
	flag.StringVar(&o.peerDir, "peer-dir", "", "where @playwright/mcp is installed (default: user cache dir, as for make bench)")
	flag.IntVar(&o.idleSessions, "idle-sessions", 16, "idle sessions opened to measure the memory of one")
	flag.IntVar(&o.tabs, "tabs", 8, "tabs opened to measure the memory of one")
	flag.BoolVar(&o.memory, "memory", true, "measure memory per idle session and per tab (retrace, local Chromium)")
	flag.DurationVar(&o.callTimeout, "call-timeout", time.Minute, "the longest one tool call (or session open) may take")
	flag.DurationVar(&o.timeout, "timeout", 45*time.Minute, "the longest the whole run may take")
	flag.Parse()
	var err error
	if o.levels, err = parseLevels(*levels); err != nil {
		fail(2, err)
	}
	if o.systems, err = parseSystems(*systems); err != nil {
		fail(2, err)
	}
	if o.duration <= 0 || o.idleSessions < 1 || o.tabs < 1 {
		fail(2, errors.New("-duration, -idle-sessions and -tabs must be positive"))
	}
	o.command = strings.TrimSpace("go run ./bench/load " + strings.Join(os.Args[1:], " "))
	if err := run(o); err != nil {
		fail(1, err)
	}
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "load:", err)
	os.Exit(code)
}

// parseLevels reads "1,4,8,16" and returns the levels in increasing order,
// each once.
func parseLevels(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-levels: %q is not a positive number", f)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseSystems reads a comma-separated subset of allSystems and returns it
// in the order of allSystems.
func parseSystems(s string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(allSystems, f) {
			return nil, fmt.Errorf("-systems: unknown system %q (want %s)", f, strings.Join(allSystems, ", "))
		}
		out = append(out, f)
	}
	var ordered []string
	for _, k := range allSystems {
		if slices.Contains(out, k) {
			ordered = append(ordered, k)
		}
	}
	return ordered, nil
}

func run(o options) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	go func() {
		<-ctx.Done()
		stopSignals() // a second Ctrl-C ends the bench at once
	}()

	root, err := fixture.ModuleRoot()
	if err != nil {
		return err
	}
	e := env{bin: o.bin}
	if !filepath.IsAbs(e.bin) {
		e.bin = filepath.Join(root, e.bin)
	}
	if _, err := os.Stat(e.bin); err != nil {
		return fmt.Errorf("%w (make build makes it)", err)
	}
	if e.chromium, err = browser.FindChromium(""); err != nil {
		return err
	}
	if e.driverDir, e.node, err = browser.FindDriver(browser.DefaultDriverDir()); err != nil {
		return err
	}
	if slices.Contains(o.systems, "playwright-mcp") {
		if e.peerCLI, err = peer.Install(o.peerDir, log.New(os.Stderr, "load: ", 0)); err != nil {
			return err
		}
	}
	if e.tmp, err = os.MkdirTemp("", "retrace-load-"); err != nil {
		return err
	}
	defer os.RemoveAll(e.tmp)
	pages, err := startPages()
	if err != nil {
		return err
	}
	defer pages.Close()

	start := time.Now()
	rep := report{opts: o, chromium: benchpage.ChromiumVersion(e.chromium), driver: driverVersion(e.driverDir)}
	for _, key := range o.systems {
		res, mem := runSystem(ctx, key, e, o, pages)
		rep.systems = append(rep.systems, res)
		if mem != nil {
			rep.memory = mem
		}
		if ctx.Err() != nil {
			return fmt.Errorf("stopped during %s: %w", res.name, context.Cause(ctx))
		}
	}
	rep.elapsed = time.Since(start)
	if o.raw != "" {
		if err := writeRaw(o.raw, rep.systems); err != nil {
			return err
		}
	}
	section := rep.markdown()
	fmt.Print(section)
	if o.out != "" {
		return writeSection(o.out, section)
	}
	return nil
}

// runSystem starts one system, measures memory on it first when it is
// retrace with a local Chromium, runs every level and stops it.
func runSystem(ctx context.Context, key string, e env, o options, pages *benchpage.Server) (systemResult, *memoryResult) {
	res := systemResult{key: key, name: key}
	fmt.Fprintf(os.Stderr, "load: %s: starting\n", key)
	sys, err := startSystem(ctx, key, e, o)
	if err != nil {
		res.err = "not run: " + err.Error()
		fmt.Fprintf(os.Stderr, "load: %s: %v\n", key, err)
		return res, nil
	}
	stopped := false
	defer func() {
		if !stopped {
			sys.stop()
		}
	}()
	res.name, res.how = sys.name, sys.how
	fmt.Fprintf(os.Stderr, "load: %s: up at %s, click takes the ref as %q (logs: %s)\n", sys.name, sys.endpoint, sys.refArg, sys.logs())
	var mem *memoryResult
	if key == "retrace" && o.memory {
		m := measureMemory(ctx, sys, o, pages)
		mem = &m
	}
	for _, n := range o.levels {
		if ctx.Err() != nil {
			break
		}
		l := runLevel(ctx, sys, o, pages.URL, n)
		if ctx.Err() != nil {
			break
		}
		res.levels = append(res.levels, l)
		fmt.Fprintf(os.Stderr, "load: %s, %s: %6.2f calls/s  navigate %s  snapshot %s  click %s ms (p50/p95/p99)  errors %d tool, %d transport  peak %.0f MB, %d procs  load %.1f\n",
			sys.name, sessions(n), l.rate(), latencies(l.tools["navigate"]), latencies(l.tools["snapshot"]), latencies(l.tools["click"]),
			l.toolErrs, l.transport, mb(l.peakRSS), l.peakProcs, l.load)
		for _, ex := range l.examples {
			fmt.Fprintf(os.Stderr, "load:   error: %s\n", clip(ex, 300))
		}
		if l.warmedUp == 0 {
			res.err = fmt.Sprintf("stopped at %s: no session got through its first cycle", sessions(n))
			break
		}
		time.Sleep(time.Second) // let the closed sessions' contexts go before the next level
	}
	stopped = true
	sys.stop()
	if res.errors() > 0 || ctx.Err() != nil {
		res.err = strings.TrimPrefix(res.err+"; server logs kept: "+sys.logs(), "; ")
		return res, mem
	}
	for _, c := range sys.children {
		os.Remove(c.logPath)
	}
	return res, mem
}
