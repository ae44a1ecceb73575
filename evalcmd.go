package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/retrace-dev/retrace/eval"
	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/llmerr"
)

// The evaluation's scenarios and the fixture pages they use travel in the
// binary, so `retrace eval` runs from anywhere.
//
//go:embed testdata/eval/*.json
//go:embed all:testdata/pages
var evalFiles embed.FS

// serverFlags is the repeatable --server NAME=COMMAND.
type serverFlags []eval.Server

func (f *serverFlags) String() string { return "" }

func (f *serverFlags) Set(v string) error {
	s, err := eval.ParseServer(v)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(*f, func(o eval.Server) bool { return o.Name == s.Name }) {
		return fmt.Errorf("--server %s: the name is given twice", s.Name)
	}
	*f = append(*f, s)
	return nil
}

// runEval is `retrace eval`: it runs the scenarios of testdata/eval on
// each server, with each policy and error style, and writes the report,
// JSON and chart to --out and the summary table to out.
func runEval(args []string, out io.Writer) error {
	fset := flag.NewFlagSet("retrace eval", flag.ContinueOnError)
	var servers serverFlags
	fset.Var(&servers, "server", "an MCP server to evaluate, NAME=COMMAND, started over stdio (repeatable; default: this retrace binary, as retrace)")
	outDir := fset.String("out", "", "directory for report.md, report.json and recovery.svg (required)")
	k := fset.Int("k", 3, "runs per scenario, policy and style, each with its own timing (pass^k)")
	kinds := fset.String("kinds", "", "only these fault kinds, comma-separated (default: all)")
	only := fset.String("scenario", "", "only scenarios whose name contains this")
	packDir := fset.String("scenarios", "", "also run the scenario pack in DIR: DIR/*.json, their pages in DIR/pages served under /eval/ (docs/eval.md)")
	builtin := fset.Bool("builtin", true, "run the built-in scenarios (--builtin=false with --scenarios runs only the pack)")
	policies := fset.String("policies", "generic,reader", "policies to run: generic, reader, naive, llm")
	styles := fset.String("styles", "recovery,plain", "error styles a retrace server runs with, one process each (other servers run as they are)")
	actionMs := fset.Int("timeout-action", 1500, "server action timeout in milliseconds")
	navMs := fset.Int("timeout-navigation", 2000, "server navigation timeout in milliseconds")
	quiet := fset.Bool("quiet", false, "do not print a line per run")
	parallel := fset.Int("parallel", 2, "runs at once, each with its own server process, browser context and origins")
	var llm eval.LLMOptions
	fset.StringVar(&llm.URL, "llm-url", "", "OpenAI-compatible chat completions base URL, for --policies llm (like http://localhost:11434/v1)")
	fset.StringVar(&llm.Model, "llm-model", "", "model name for --policies llm")
	fset.StringVar(&llm.KeyEnv, "llm-key-env", "OPENAI_API_KEY", "environment variable holding the API key for --policies llm")
	fset.Usage = func() {
		fmt.Fprintf(fset.Output(), "usage: retrace eval --out DIR [flags]\n\nRuns the fault scenarios on each --server (default: this binary) with each policy and error style, and writes the recovery rates side by side (docs/eval.md).\n\nFlags:\n")
		fset.PrintDefaults()
	}
	if wantsHelp(args) {
		fset.SetOutput(out)
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *outDir == "" {
		return errors.New("retrace eval: --out DIR is required")
	}
	pages, err := fs.Sub(evalFiles, "testdata/pages")
	if err != nil {
		return err
	}
	scs, err := eval.Load(evalFiles, "testdata/eval")
	if err != nil {
		return err
	}
	if !*builtin {
		if *packDir == "" {
			return errors.New("retrace eval: --builtin=false needs --scenarios DIR")
		}
		scs = nil
	}
	// A pack is checked whole here, before the fixture and the browser
	// start: a broken file is an error naming it and its field.
	if *packDir != "" {
		pack, err := eval.LoadPack(*packDir, pages)
		if err != nil {
			return err
		}
		if scs, err = pack.With(scs); err != nil {
			return err
		}
		pages = pack.Pages()
	}
	scs = slices.DeleteFunc(scs, func(sc eval.Scenario) bool {
		return (*kinds != "" && !slices.Contains(strings.Split(*kinds, ","), sc.Kind)) ||
			(*only != "" && !strings.Contains(sc.Name, *only))
	})
	if len(scs) == 0 {
		return errors.New("retrace eval: no scenario matches --kinds/--scenario")
	}
	var pols []eval.Policy
	for _, p := range strings.Split(*policies, ",") {
		switch strings.TrimSpace(p) {
		case "generic":
			pols = append(pols, eval.Generic{})
		case "reader":
			pols = append(pols, eval.Reader{})
		case "naive":
			pols = append(pols, eval.Naive{})
		case "llm":
			if llm.URL == "" || llm.Model == "" {
				return errors.New("retrace eval: --policies llm needs --llm-url and --llm-model")
			}
			pols = append(pols, eval.NewLLM(llm))
		default:
			return fmt.Errorf("retrace eval: unknown policy %q (generic, reader, naive, llm)", p)
		}
	}
	var sts []llmerr.Style
	for _, s := range strings.Split(*styles, ",") {
		st := llmerr.Style(strings.TrimSpace(s))
		if st != llmerr.StyleRecovery && st != llmerr.StylePlain {
			return fmt.Errorf("retrace eval: unknown error style %q (recovery, plain)", s)
		}
		sts = append(sts, st)
	}
	if len(servers) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("retrace eval: finding this binary to evaluate it: %w", err)
		}
		servers = serverFlags{{Name: "retrace", Command: exe}}
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return err
	}
	// The servers' own logs (stderr), for a run that went wrong.
	logFile, err := os.Create(filepath.Join(*outDir, "servers.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	serverLog := &lockedWriter{w: logFile}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	adapters, err := eval.Adapters()
	if err != nil {
		return err
	}
	var srvs []*eval.Server
	for i := range servers {
		s := &servers[i]
		s.Log = serverLog
		if err := s.Probe(ctx, adapters); err != nil {
			return fmt.Errorf("retrace eval: %w (its stderr is in %s)", err, logFile.Name())
		}
		fmt.Fprintf(os.Stderr, "eval: %s is %s\n", s.Name, s.Version())
		srvs = append(srvs, s)
	}
	fx, err := fixture.StartFS(pages)
	if err != nil {
		return err
	}
	defer fx.Close()
	var progress io.Writer = os.Stderr
	if *quiet {
		progress = nil
	}
	start := time.Now()
	runs, err := eval.Evaluate(ctx, eval.Options{Scenarios: scs, Policies: pols, Servers: srvs, Styles: sts, K: *k,
		ActionTimeout: time.Duration(*actionMs) * time.Millisecond, NavigationTimeout: time.Duration(*navMs) * time.Millisecond,
		Parallel: *parallel, Progress: progress}, fx)
	if err != nil {
		return err
	}
	rep := eval.NewReport(runs, srvs, *k, len(scs), "retrace eval "+strings.Join(args, " "))
	if err := eval.Write(*outDir, rep); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d runs in %s; wrote %s/report.md, report.json and recovery.svg\n", len(runs), time.Since(start).Round(time.Second), *outDir)
	fmt.Fprint(out, eval.Compare(rep))
	if len(rep.Targets) > 0 {
		fmt.Fprintln(out, "\nTargets missed:\n- "+strings.Join(rep.Targets, "\n- "))
	}
	return nil
}

// lockedWriter lets several server processes write one log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
