// Command bench compares retrace with a peer browser MCP server
// (@playwright/mcp, pinned) side by side: both are started over stdio and
// driven by the same go-sdk client against the same generated pages, and the
// figures are printed with the retrace/peer ratio for each.
//
//	go run ./bench [-runs 7] [-out docs/benchmarks.md]
//	go run ./bench -fence-only   # what fences cost, retrace alone
//	go run ./bench -tasks-only [-task NAME] [-task-runs 3] [-out docs/benchmarks.md]
//	                             # the scripted tasks alone (Tasks section)
//
// make bench runs it. It is not part of make test.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/internal/peer"
)

func main() {
	runs := flag.Int("runs", 7, "timed repetitions per figure (the median is reported)")
	coldRuns := flag.Int("cold-runs", 3, "cold starts per server")
	out := flag.String("out", "", "also write the report as Markdown to this file")
	peerDir := flag.String("peer-dir", "", "where @playwright/mcp is installed (default: user cache dir)")
	fences := flag.Bool("fence-only", false, "only measure what fencing page text costs, on retrace alone, and print it")
	tasksOnly := flag.Bool("tasks-only", false, "only play the scripted tasks on both servers, and write only their section")
	taskRuns := flag.Int("task-runs", 3, "plays of each task per server (medians are reported)")
	only := flag.String("task", "", "play only this task (form, list, orders, wizard, dialog)")
	flag.Parse()
	opts := taskOpts{only: *tasksOnly, runs: *taskRuns, task: *only}
	if err := run(*runs, *coldRuns, *out, *peerDir, *fences, opts); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// server is one MCP server under test.
type server struct {
	name string
	cmd  func() *exec.Cmd
	// refArg is the argument name the server's click takes the ref in.
	refArg string
}

// page is one benchmark page.
type page struct {
	name string
	path string
	// click names an element on the page whose click changes nothing in
	// its elements; typ, a text field to type into.
	click, typ string
}

// The pages other than the long form are asked for with controls=1, which
// adds a text field (and, to the soup, a button) to click and type into.
var pages = []page{
	{"table 100 rows", "/table?rows=100&controls=1", `button "Edit"`, `textbox "Search"`},
	{"table 1,000 rows", "/table?rows=1000&controls=1", `button "Edit"`, `textbox "Search"`},
	{"table 5,000 rows", "/table?rows=5000&controls=1", `button "Edit"`, `textbox "Search"`},
	{"long form (200 fields)", "/long-form?fields=200", `textbox "Field 5"`, `textbox "Field 10"`},
	{"div soup (3,000 links)", "/soup?links=3000&controls=1", `button "Menu"`, `textbox "Search"`},
	{"nested iframes (same + cross origin, depth 3)", "/nested-frames?depth=3&controls=1", `button "Button at level 0"`, `textbox "Search"`},
}

// result holds one server's figures for one page.
type result struct {
	snapMs  float64
	bytes   int
	tokens  int
	refs    int
	clickMs float64
	typeMs  float64
}

// taskOpts says whether and how to play the scripted tasks.
type taskOpts struct {
	only bool   // the tasks alone
	runs int    // plays per task and server
	task string // one task by name, or all
}

func run(runs, coldRuns int, out, peerDir string, fencesOnly bool, to taskOpts) error {
	root, err := fixture.ModuleRoot()
	if err != nil {
		return err
	}
	fx, err := fixture.Start(filepath.Join(root, "testdata", "pages"))
	if err != nil {
		return err
	}
	defer fx.Close()
	chromium, err := browser.FindChromium("")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "retrace-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "retrace")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build retrace: %w", err)
	}
	retrace := server{name: "retrace", refArg: "ref", cmd: func() *exec.Cmd { return exec.Command(bin, "--executable-path", chromium, "--snapshot-budget", "0") }}
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return err
	}
	var fences []fenceRow
	if !to.only {
		fmt.Fprintln(os.Stderr, "bench: retrace: fence cost")
		if fences, err = measureFences(&retrace, fx, enc); err != nil {
			return fmt.Errorf("fence cost: %w", err)
		}
		if fencesOnly {
			fmt.Print(renderFences(fences))
			return nil
		}
	}
	peerCLI, err := peer.Install(peerDir, log.New(os.Stderr, "bench: ", 0))
	if err != nil {
		return err
	}
	servers := []server{
		retrace,
		{name: "playwright-mcp " + peer.Version, cmd: func() *exec.Cmd {
			c := exec.Command("node", peerCLI, "--headless", "--isolated", "--executable-path", chromium, "--no-sandbox")
			c.Dir = tmp // it writes snapshot files into its working directory
			return c
		}},
	}
	start := time.Now()
	figs, err := measureTasks(servers, fx, to.runs, enc, to.task)
	if err != nil {
		return fmt.Errorf("tasks: %w", err)
	}
	tasksReport := renderTasks(servers, figs, to.runs, chromium, time.Since(start))
	fmt.Print(tasksReport)
	if out != "" {
		if err := writeTasks(out, tasksReport); err != nil {
			return err
		}
	}
	if to.only {
		return nil
	}
	results := map[string]map[string]result{}
	cold := map[string]float64{}
	peak := map[string]int64{}
	for i := range servers {
		s := &servers[i]
		fmt.Fprintf(os.Stderr, "bench: %s: cold start ×%d\n", s.name, coldRuns)
		var colds []float64
		for r := 0; r < coldRuns; r++ {
			ms, err := coldStart(s, fx.Page("form.html"))
			if err != nil {
				return fmt.Errorf("%s cold start: %w", s.name, err)
			}
			colds = append(colds, ms)
		}
		cold[s.name] = median(colds)
		res, pk, err := measure(s, fx, runs, enc)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		results[s.name] = res
		peak[s.name] = pk
	}
	report := render(servers, results, cold, peak, runs, chromium) + renderFences(fences)
	fmt.Print(report)
	if out != "" {
		return writeReport(out, report)
	}
	return nil
}

func connectServer(s *server) (*mcp.ClientSession, *exec.Cmd, error) {
	cmd := s.cmd()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "retrace-bench", Version: "0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, nil, err
	}
	return cs, cmd, nil
}

func call(cs *mcp.ClientSession, tool string, args map[string]any) (string, time.Duration, error) {
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	d := time.Since(start)
	if err != nil {
		return "", d, err
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

// coldStart times spawn → initialize → navigate → first snapshot.
func coldStart(s *server, url string) (float64, error) {
	start := time.Now()
	cs, _, err := connectServer(s)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	if _, _, err := call(cs, "browser_navigate", map[string]any{"url": url}); err != nil {
		return 0, err
	}
	if _, _, err := call(cs, "browser_snapshot", map[string]any{}); err != nil {
		return 0, err
	}
	return float64(time.Since(start).Microseconds()) / 1000, nil
}

var refRe = regexp.MustCompile(`\[ref=[a-z0-9]+\]`)

// measure runs every page against one server process, sampling the memory
// of its process tree throughout.
func measure(s *server, fx *fixture.Server, runs int, enc tokenizer.Codec) (map[string]result, int64, error) {
	cs, cmd, err := connectServer(s)
	if err != nil {
		return nil, 0, err
	}
	defer cs.Close()
	rss := sampleRSS(cmd.Process.Pid, 100*time.Millisecond)
	if s.refArg == "" {
		s.refArg = peer.ClickRefArg(context.Background(), cs)
	}
	out := map[string]result{}
	for _, p := range pages {
		fmt.Fprintf(os.Stderr, "bench: %s: %s\n", s.name, p.name)
		if _, _, err := call(cs, "browser_navigate", map[string]any{"url": fx.URL + p.path}); err != nil {
			return nil, 0, err
		}
		var r result
		var times []float64
		var text string
		for i := 0; i <= runs; i++ { // the first run warms up and is not counted
			t, d, err := call(cs, "browser_snapshot", map[string]any{})
			if err != nil {
				return nil, 0, err
			}
			if i > 0 {
				times = append(times, float64(d.Microseconds())/1000)
			}
			text = t
		}
		r.snapMs = median(times)
		r.bytes = len(text)
		ids, _, _ := enc.Encode(text)
		r.tokens = len(ids)
		r.refs = len(refRe.FindAllString(text, -1))
		// Clicks, then typing, each timed after one warm-up; the click's
		// target changes nothing, the text typed differs every time.
		for _, act := range []struct {
			what, tool string
			ms         *float64
		}{{p.click, "browser_click", &r.clickMs}, {p.typ, "browser_type", &r.typeMs}} {
			if act.what == "" {
				continue
			}
			ref := refAfter(text, act.what)
			if ref == "" {
				return nil, 0, fmt.Errorf("no %s on %s", act.what, p.name)
			}
			var times []float64
			for i := 0; i <= runs; i++ {
				args := map[string]any{s.refArg: ref, "element": act.what}
				if act.tool == "browser_type" {
					args["text"] = fmt.Sprintf("text %d", i)
				}
				_, d, err := call(cs, act.tool, args)
				if err != nil {
					return nil, 0, err
				}
				if i > 0 {
					times = append(times, float64(d.Microseconds())/1000)
				}
			}
			*act.ms = median(times)
		}
		out[p.name] = r
	}
	return out, rss.Peak(), nil
}

// refAfter returns the first ref on the first line containing what.
func refAfter(text, what string) string {
	for _, line := range strings.Split(text, "\n") {
		i := strings.Index(line, what)
		if i < 0 {
			continue
		}
		if m := refRe.FindString(line[i:]); m != "" {
			return strings.TrimSuffix(strings.TrimPrefix(m, "[ref="), "]")
		}
	}
	return ""
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}
