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
	"slices"
	"strings"
	"time"

	"github.com/retrace-dev/retrace/browser"
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

// runEval is `retrace eval`: it runs the scenarios of testdata/eval with
// each policy and error style, and writes the report, JSON and chart to
// --out and the summary table to out.
func runEval(args []string, out io.Writer) error {
	fset := flag.NewFlagSet("retrace eval", flag.ContinueOnError)
	outDir := fset.String("out", "", "directory for report.md, report.json and recovery.svg (required)")
	k := fset.Int("k", 3, "runs per scenario, policy and style, each with its own timing (pass^k)")
	kinds := fset.String("kinds", "", "only these fault kinds, comma-separated (default: all)")
	only := fset.String("scenario", "", "only scenarios whose name contains this")
	packDir := fset.String("scenarios", "", "also run the scenario pack in DIR: DIR/*.json, their pages in DIR/pages served under /eval/ (docs/eval.md)")
	builtin := fset.Bool("builtin", true, "run the built-in scenarios (--builtin=false with --scenarios runs only the pack)")
	policies := fset.String("policies", "reader,naive", "policies to run: reader, naive, llm")
	styles := fset.String("styles", "recovery,plain", "error styles to compare")
	actionMs := fset.Int("timeout-action", 1500, "server action timeout in milliseconds")
	navMs := fset.Int("timeout-navigation", 2000, "server navigation timeout in milliseconds")
	quiet := fset.Bool("quiet", false, "do not print a line per run")
	parallel := fset.Int("parallel", 2, "runs at once, each with its own MCP session, browser context and origins")
	var llm eval.LLMOptions
	fset.StringVar(&llm.URL, "llm-url", "", "OpenAI-compatible chat completions base URL, for --policies llm (like http://localhost:11434/v1)")
	fset.StringVar(&llm.Model, "llm-model", "", "model name for --policies llm")
	fset.StringVar(&llm.KeyEnv, "llm-key-env", "OPENAI_API_KEY", "environment variable holding the API key for --policies llm")
	if err := fset.Parse(args); err != nil {
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
			return fmt.Errorf("retrace eval: unknown policy %q (reader, naive, llm)", p)
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
	fx, err := fixture.StartFS(pages)
	if err != nil {
		return err
	}
	defer fx.Close()
	browsers := browser.NewManager(browser.Options{Headless: true})
	defer browsers.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var progress io.Writer = os.Stderr
	if *quiet {
		progress = nil
	}
	start := time.Now()
	runs, err := eval.Evaluate(ctx, eval.Options{Scenarios: scs, Policies: pols, Styles: sts, K: *k,
		ActionTimeout: time.Duration(*actionMs) * time.Millisecond, NavigationTimeout: time.Duration(*navMs) * time.Millisecond,
		Parallel: *parallel, Progress: progress}, browsers, fx)
	if err != nil {
		return err
	}
	rep := eval.NewReport(runs, *k, len(scs), "retrace eval "+strings.Join(args, " "))
	if err := eval.Write(*outDir, rep); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d runs in %s; wrote %s/report.md, report.json and recovery.svg\n", len(runs), time.Since(start).Round(time.Second), *outDir)
	fmt.Fprint(out, eval.Markdown(rep))
	if len(rep.Targets) > 0 {
		fmt.Fprintln(out, "\nTargets missed:\n- "+strings.Join(rep.Targets, "\n- "))
	}
	return nil
}
