package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/retrace-dev/retrace/internal/benchpage"
)

// The targets of the task benchmark (issue 17): retrace's tokens and calls
// per finished task over playwright-mcp's, on every task.
const (
	taskTokenTarget = 0.25
	taskCallTarget  = 0.8
)

const (
	tasksStart = "<!-- tasks:start -->"
	tasksEnd   = "<!-- tasks:end -->"
)

// taskSummary is one server's figures for one task over its runs.
type taskSummary struct {
	done, runs    int
	calls, tokens float64 // medians over the runs
	snapshots     float64
	wallMs        float64
	first         taskRun
	varied        bool // calls or tokens differed between runs
	errs          []string
}

func summarize(runs []taskRun) taskSummary {
	s := taskSummary{runs: len(runs)}
	var calls, tokens, snaps, walls []float64
	for i, r := range runs {
		if i == 0 {
			s.first = r
		} else if len(r.calls) != len(runs[0].calls) || r.tokens() != runs[0].tokens() {
			s.varied = true
		}
		if r.done {
			s.done++
		} else {
			s.errs = append(s.errs, r.err)
		}
		calls = append(calls, float64(len(r.calls)))
		tokens = append(tokens, float64(r.tokens()))
		snaps = append(snaps, float64(r.snapshots()))
		walls = append(walls, r.wallMs)
	}
	s.calls, s.tokens, s.snapshots, s.wallMs = median(calls), median(tokens), median(snaps), median(walls)
	return s
}

func verdict(r, target float64) string {
	if r <= target {
		return "met"
	}
	return "**missed**"
}

// renderTasks formats the task figures as the Tasks section of
// docs/benchmarks.md, between its markers.
func renderTasks(servers []server, figs map[string]taskFigures, runs int, chromium string, took time.Duration) string {
	a, p := servers[0].name, servers[1].name
	var b strings.Builder
	b.WriteString(tasksStart + "\n\n## Tasks\n\n")
	b.WriteString("`make bench` (`go run ./bench -out docs/benchmarks.md`; this section alone: `go run ./bench -tasks-only -out docs/benchmarks.md`) plays five scripted tasks on the fixture pages under `testdata/pages/tasks/` against retrace and playwright-mcp 0.0.83 in one run, the same client for both, the servers in turn for each task.\n\n")
	b.WriteString("The client reads only text. It keeps the last result it read and looks there for its next target by role and accessible name, in the line format both servers share (`- button \"Next page\" [ref=e12]`; lines under retrace's `removed from` are gone; of the rest the last is taken). When the last result does not show every target of the step, it calls `browser_snapshot` and looks there. A step is a click, a typed text, or several fields in one `browser_fill_form`; a failed action is tried once more after a snapshot. A task is finished when the page reports it to the fixture (`/eval/event`, out of band), not when the client thinks so. Calls count every call from the first `browser_navigate` on; tokens are o200k counts of every result the client read; wall time runs from the navigate to the fixture's event.\n\n")
	fmt.Fprintf(&b, "Measured %s at %s on %s/%s, %d cores (shared), %s; %d runs per task and server, medians; the run took %s. Targets (issue 17): tokens per finished task ≤ %.2f× playwright-mcp's and calls ≤ %.1f×, on every task, with both servers finishing the same tasks.\n\n",
		time.Now().UTC().Format("2006-01-02"), commitOf(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), benchpage.ChromiumVersion(chromium), runs, took.Round(time.Second), taskTokenTarget, taskCallTarget)

	b.WriteString("### Summary\n\n")
	fmt.Fprintf(&b, "| task | finished (%s / %s) | calls | tokens | wall ms | calls ratio | tokens ratio | wall ratio |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n", a, p)
	sums := map[string][2]taskSummary{}
	for _, t := range tasks {
		fa, fp := figs[a][t.name], figs[p][t.name]
		if len(fa) == 0 || len(fp) == 0 {
			continue
		}
		sa, sp := summarize(fa), summarize(fp)
		sums[t.name] = [2]taskSummary{sa, sp}
		cr, tr := sa.calls/sp.calls, sa.tokens/sp.tokens
		fmt.Fprintf(&b, "| %s | %d/%d / %d/%d | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f | **%.2f×** (%s) | **%.2f×** (%s) | %s |\n",
			t.name, sa.done, sa.runs, sp.done, sp.runs, sa.calls, sp.calls, sa.tokens, sp.tokens, sa.wallMs, sp.wallMs,
			cr, verdict(cr, taskCallTarget), tr, verdict(tr, taskTokenTarget), ratio(sa.wallMs, sp.wallMs))
	}
	for _, t := range tasks {
		s, ok := sums[t.name]
		if !ok {
			continue
		}
		sa, sp := s[0], s[1]
		fmt.Fprintf(&b, "\n### Task: %s (`%s`)\n\n", t.title, t.path)
		fmt.Fprintf(&b, "| figure | %s | %s | ratio | target |\n| --- | ---: | ---: | ---: | --- |\n", a, p)
		fmt.Fprintf(&b, "| finished | %d of %d | %d of %d | | both finish: %s |\n", sa.done, sa.runs, sp.done, sp.runs, map[bool]string{true: "met", false: "**missed**"}[sa.done == sa.runs && sp.done == sp.runs])
		cr, tr := sa.calls/sp.calls, sa.tokens/sp.tokens
		fmt.Fprintf(&b, "| calls | %.0f | %.0f | **%.2f×** | ≤ %.1f×: %s |\n", sa.calls, sp.calls, cr, taskCallTarget, verdict(cr, taskCallTarget))
		fmt.Fprintf(&b, "| of which snapshots | %.0f | %.0f | %s | |\n", sa.snapshots, sp.snapshots, ratio(sa.snapshots, sp.snapshots))
		fmt.Fprintf(&b, "| tokens read (o200k) | %.0f | %.0f | **%.2f×** | ≤ %.2f×: %s |\n", sa.tokens, sp.tokens, tr, taskTokenTarget, verdict(tr, taskTokenTarget))
		fmt.Fprintf(&b, "| wall time, ms | %.0f | %.0f | %s | |\n\n", sa.wallMs, sp.wallMs, ratio(sa.wallMs, sp.wallMs))
		for i, sm := range []taskSummary{sa, sp} {
			note := ""
			if sm.varied {
				note = " (calls or tokens differed in other runs)"
			}
			fmt.Fprintf(&b, "- %s, calls and the tokens of each result%s: %s\n", servers[i].name, note, callTrace(sm.first))
			for _, e := range sm.errs {
				fmt.Fprintf(&b, "  - not finished: %s\n", firstLines(e, 3))
			}
		}
	}
	b.WriteString("\n" + tasksEnd + "\n")
	return b.String()
}

// commitOf names the commit the bench built retrace from, marked when the
// working tree had changes on top of it.
func commitOf() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty=+changes", "--abbrev=7").Output()
	if err != nil {
		return "an unknown commit"
	}
	return "commit " + strings.TrimSpace(string(out))
}

// writeTasks puts the Tasks section into the Markdown file at path: in
// place of the part between its markers; or, when there is none, just
// above the part the page benchmark rewrites (so that part's rewrite keeps
// it), or at the end.
func writeTasks(path, section string) error {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return os.WriteFile(path, []byte("# Benchmarks\n\n"+section), 0o644)
	}
	if err != nil {
		return err
	}
	doc, err := spliceTasks(string(data), section)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}

func spliceTasks(doc, section string) (string, error) {
	if i := strings.Index(doc, tasksStart); i >= 0 {
		j := strings.Index(doc[i:], tasksEnd)
		if j < 0 {
			return "", fmt.Errorf("a %s marker but no %s", tasksStart, tasksEnd)
		}
		return doc[:i] + section + strings.TrimPrefix(doc[i+j+len(tasksEnd):], "\n"), nil
	}
	if j := strings.Index(doc, generatedMarker); j >= 0 {
		return doc[:j] + section + "\n" + doc[j:], nil
	}
	return strings.TrimRight(doc, "\n") + "\n\n" + section, nil
}
