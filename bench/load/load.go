package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/internal/proctree"
)

// The tools of one cycle, in order, and their short names in the report.
var tools = []struct{ name, short string }{
	{"browser_navigate", "navigate"},
	{"browser_snapshot", "snapshot"},
	{"browser_click", "click"},
}

// recorder collects the outcome of every call of one level.
type recorder struct {
	mu         sync.Mutex
	timed      bool                 // false while the sessions warm up
	lat        map[string][]float64 // ms, successful timed calls, by tool
	calls      int                  // successful timed calls
	toolErrs   int                  // results with isError, or a snapshot without the button
	transport  int                  // transport errors and call timeouts
	reconnects int
	lost       int      // sessions that could not be (re)opened
	warmedUp   int      // sessions whose untimed first cycle succeeded
	examples   []string // the first few errors, for the report
	start      time.Time
	raw        []rawCall // every successful timed call, for -raw
}

// rawCall is one successful timed call.
type rawCall struct {
	session int
	tool    string
	at, ms  float64 // start since the level began, and round trip, in ms
}

func newRecorder() *recorder { return &recorder{lat: map[string][]float64{}} }

func (r *recorder) ok(session int, tool string, start time.Time, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timed {
		r.lat[tool] = append(r.lat[tool], ms(d))
		r.calls++
		r.raw = append(r.raw, rawCall{session: session, tool: tool, at: ms(start.Sub(r.start)), ms: ms(d)})
	}
}

// failed counts an error: a transport error when transport is true, else
// a tool error.
func (r *recorder) failed(transport bool, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if transport {
		r.transport++
	} else {
		r.toolErrs++
	}
	if len(r.examples) < 5 {
		r.examples = append(r.examples, firstLines(msg, 3))
	}
}

func (r *recorder) add(f func(*recorder)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

// worker is one client session looping navigate → snapshot → click.
type worker struct {
	id      int
	sys     *system
	o       options
	pageURL string
	rec     *recorder
	cs      *mcp.ClientSession
	cycle   int
}

// errTransport marks a call that failed below MCP (HTTP, the session, a
// timeout); a tool error is a result with isError.
var errTransport = errors.New("transport")

// call runs one tool with its own deadline and records the outcome.
func (w *worker) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, w.o.callTimeout)
	defer cancel()
	start := time.Now()
	res, err := w.cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	d := time.Since(start)
	if err != nil {
		if ctx.Err() != nil { // the run is ending, not the server failing
			return "", ctx.Err()
		}
		w.rec.failed(true, fmt.Sprintf("%s: %v", tool, err))
		return "", fmt.Errorf("%s: %w: %v", tool, errTransport, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		w.rec.failed(false, fmt.Sprintf("%s: %s", tool, text.String()))
		return text.String(), fmt.Errorf("%s failed", tool)
	}
	w.rec.ok(w.id, tool, start, d)
	return text.String(), nil
}

// runCycle is one navigate → snapshot → click. Each session clicks a
// different button each cycle.
func (w *worker) runCycle(ctx context.Context) error {
	w.cycle++
	url := fmt.Sprintf("%s?c=%d-%d", w.pageURL, w.id, w.cycle)
	if _, err := w.call(ctx, "browser_navigate", map[string]any{"url": url}); err != nil {
		return err
	}
	text, err := w.call(ctx, "browser_snapshot", map[string]any{})
	if err != nil {
		return err
	}
	name := fmt.Sprintf("Button %d", (w.id+w.cycle)%rows+1)
	ref := refAfter(text, `button "`+name+`"`)
	if ref == "" {
		w.rec.failed(false, fmt.Sprintf("browser_snapshot has no %q: %s", name, firstLines(text, 5)))
		return fmt.Errorf("no %s in the snapshot", name)
	}
	_, err = w.call(ctx, "browser_click", map[string]any{w.sys.refArg: ref, "element": name})
	return err
}

// maxTransportInARow reopens a session whose calls keep failing below MCP.
const maxTransportInARow = 3

// loop runs cycles until the deadline.
func (w *worker) loop(ctx context.Context, deadline time.Time) {
	inARow := 0
	for time.Now().Before(deadline) && ctx.Err() == nil {
		err := w.runCycle(ctx)
		if !errors.Is(err, errTransport) {
			inARow = 0
			continue
		}
		inARow++
		if inARow < maxTransportInARow {
			continue
		}
		// The session is likely gone: open a new one.
		w.cs.Close()
		w.cs = nil
		cs, err := w.sys.connect(ctx, w.o.callTimeout)
		if err != nil {
			w.rec.failed(true, fmt.Sprintf("reopen session: %v", err))
			w.rec.add(func(r *recorder) { r.lost++ })
			return
		}
		w.cs, inARow = cs, 0
		w.rec.add(func(r *recorder) { r.reconnects++ })
	}
}

// levelResult is what one system did at one concurrency level.
type levelResult struct {
	sessions   int
	elapsed    time.Duration // from the start signal to the last call's end
	calls      int
	tools      map[string]dist // by short tool name
	toolErrs   int
	transport  int
	reconnects int
	lost       int
	peakRSS    int64 // bytes, summed over the process trees
	peakProcs  int
	endPSS     int64   // bytes, summed Pss of the trees as the level ends, all sessions open
	browsers   int     // Chromium browser processes as the level ends
	warmedUp   int     // sessions whose untimed first cycle succeeded
	load       float64 // the machine's 1-minute load average at the end
	examples   []string
	raw        []rawCall
}

// rate is successful calls per second.
func (l levelResult) rate() float64 {
	if l.elapsed <= 0 {
		return 0
	}
	return float64(l.calls) / l.elapsed.Seconds()
}

func (l levelResult) errors() int { return l.toolErrs + l.transport }

// runLevel opens n sessions, warms each up with one untimed cycle, then
// lets all of them loop for the duration together, and closes them.
func runLevel(ctx context.Context, sys *system, o options, pageURL string, n int) levelResult {
	rec := newRecorder()
	sys.sampler.reset()
	workers := make([]*worker, n)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{id: i, sys: sys, o: o, pageURL: pageURL, rec: rec}
		workers[i] = w
		wg.Go(func() {
			cs, err := sys.connect(ctx, o.callTimeout)
			if err != nil {
				if ctx.Err() == nil {
					rec.failed(true, fmt.Sprintf("open session: %v", err))
					rec.add(func(r *recorder) { r.lost++ })
				}
				return
			}
			w.cs = cs
			// Warm-up: errors count, times do not.
			if w.runCycle(ctx) == nil {
				rec.add(func(r *recorder) { r.warmedUp++ })
			}
		})
	}
	wg.Wait()
	start := time.Now()
	rec.add(func(r *recorder) { r.timed, r.start = true, start })
	if rec.warmedUp == 0 {
		// Not one session got through a cycle: timing it would only wait
		// out call timeouts.
		o.duration = 0
	}
	deadline := start.Add(o.duration)
	for _, w := range workers {
		if w.cs == nil {
			continue
		}
		wg.Go(func() { w.loop(ctx, deadline) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	peak, procs := sys.sampler.peaks()
	end := proctree.Sample(sys.roots()...).Live()
	endPSS, endBrowsers := end.PSS(), end.Browsers()
	for _, w := range workers {
		if w.cs != nil {
			wg.Go(func() { w.cs.Close() })
		}
	}
	wg.Wait()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	l := levelResult{sessions: n, elapsed: elapsed, calls: rec.calls, tools: map[string]dist{},
		toolErrs: rec.toolErrs, transport: rec.transport, reconnects: rec.reconnects, lost: rec.lost,
		peakRSS: peak, peakProcs: procs, endPSS: endPSS, browsers: endBrowsers, warmedUp: rec.warmedUp, load: loadAvg(), examples: rec.examples, raw: rec.raw}
	for _, t := range tools {
		l.tools[t.short] = summarize(rec.lat[t.name])
	}
	return l
}

var refRe = regexp.MustCompile(`\[ref=([a-zA-Z0-9_-]+)\]`)

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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// mb is bytes in megabytes (10^6 bytes).
func mb(b int64) float64 { return float64(b) / 1e6 }

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}

// loadAvg is the machine's 1-minute load average, from /proc/loadavg.
func loadAvg() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var v float64
	fmt.Sscanf(string(data), "%f", &v)
	return v
}
