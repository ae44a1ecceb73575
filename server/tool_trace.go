package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

// Recording. --save-trace records a Playwright trace of each role's
// context from its start to browser_close (or the session's end), and
// --save-video a video of each page; both go to --output-dir. The tools
// of --caps tracing record a part of a session: with --save-trace on, as a
// chunk of the running trace.

type startTracingArgs struct {
	roleArg
}

type stopTracingArgs struct {
	Filename string `json:"filename,omitempty" jsonschema:"File name in --output-dir (default: trace-<role>-<time>.zip)"`
	roleArg
}

func (s *Server) addTracingTools() {
	addTool(s, def("browser_start_tracing", "Start tracing", 0, "Record a Playwright trace (actions, DOM snapshots, screenshots, network) of this role until browser_stop_tracing."), s.startTracing)
	addTool(s, def("browser_stop_tracing", "Stop tracing", 0, "Stop the trace of browser_start_tracing and save it to --output-dir, for npx playwright show-trace."), s.stopTracing)
}

// traceWait bounds writing a trace file: a long session's trace holds many
// screenshots.
const traceWait = 30 * time.Second

// tracing is what a role records.
type tracing struct {
	// session is set while --save-trace records the context's whole life.
	session bool
	// part is set between browser_start_tracing and browser_stop_tracing.
	part bool
}

// startRecording starts the trace of --save-trace on a new context.
func (r *role) startRecording(bctx playwright.BrowserContext) error {
	r.rec = tracing{}
	if !r.srv.cfg.SaveTrace {
		return nil
	}
	if err := bctx.Tracing().Start(playwright.TracingStartOptions{
		Name: playwright.String(r.name), Title: playwright.String("retrace: role " + r.name),
		Screenshots: playwright.Bool(true), Snapshots: playwright.Bool(true), Sources: playwright.Bool(false),
	}); err != nil {
		return fmt.Errorf("starting the trace of --save-trace: %w", err)
	}
	r.rec.session = true
	return nil
}

// traceName is the default file name of a trace of the role.
func (r *role) traceName() string {
	return fmt.Sprintf("trace-%s-%s.zip", safeFileName(r.name), time.Now().Format("20060102-150405.000"))
}

// stopRecording saves what the role's context recorded, before it closes,
// and notes where it went: the trace of --save-trace, and the videos of
// --save-video (written once the context has closed).
func (r *role) stopRecording() (videos []string) {
	if r.bctx == nil {
		return nil
	}
	if r.rec.session || r.rec.part {
		path, err := r.saveTrace(r.traceName(), false)
		switch {
		case err != nil:
			r.note("The trace could not be saved: " + llmerr.FirstLine(err.Error()))
		default:
			r.note(traceSaved(path))
		}
		r.rec = tracing{}
	}
	if r.srv.cfg.SaveVideo == nil {
		return nil
	}
	for _, t := range r.tabs {
		if v := t.Page.Video(); v != nil {
			if p, err := v.Path(); err == nil && p != "" {
				videos = append(videos, p)
			}
		}
	}
	return videos
}

// saveTrace saves the role's trace into name in --output-dir and returns
// the file's path: the current chunk alone, the trace going on (chunk), or
// everything since the last save, the trace ending.
func (r *role) saveTrace(name string, chunk bool) (string, error) {
	dir, err := r.srv.outputDir()
	if err != nil {
		return "", err
	}
	name = safeFileName(name)
	if !strings.HasSuffix(strings.ToLower(name), ".zip") {
		name += ".zip"
	}
	path := uniquePath(dir, name)
	tr := r.bctx.Tracing()
	err, ok := bounded(traceWait, func() error {
		if chunk {
			return tr.StopChunk(path)
		}
		return tr.Stop(path)
	})
	if !ok {
		return "", fmt.Errorf("the trace was not written within %s", traceWait)
	}
	return path, err
}

// traceSaved is the line that says where a trace went and how to read it.
func traceSaved(path string) string {
	size := ""
	if st, err := os.Stat(path); err == nil {
		size = " (" + browser.HumanSize(st.Size()) + ")"
	}
	return fmt.Sprintf("Trace saved to %s%s; a person opens it with: npx playwright show-trace %s", path, size, path)
}

func (s *Server) startTracing(ctx context.Context, c *call, _ startTracingArgs) (*response, error) {
	r, _, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if r.rec.part {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "A trace is already being recorded in this role.", Cause: "browser_start_tracing was called before, and not stopped",
			Actions: []llmerr.Action{llmerr.Call("browser_stop_tracing", "save it, then start another if needed")}}
	}
	tr := r.bctx.Tracing()
	res := &response{}
	if r.rec.session {
		// --save-trace records already: what it recorded so far is saved,
		// and this part is a chunk of its own.
		path, err := r.saveTrace(r.traceName(), true)
		if err != nil {
			return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool})
		}
		res.addDid("The session's trace so far (--save-trace) is saved to %s.", path)
		err = tr.StartChunk(playwright.TracingStartChunkOptions{Title: playwright.String("retrace: part of role " + r.name)})
	} else {
		err = tr.Start(playwright.TracingStartOptions{Name: playwright.String(r.name), Title: playwright.String("retrace: role " + r.name),
			Screenshots: playwright.Bool(true), Snapshots: playwright.Bool(true), Sources: playwright.Bool(false)})
	}
	if err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool})
	}
	r.rec.part = true
	res.addDid("Tracing this role: actions, DOM snapshots, screenshots and network until browser_stop_tracing(), which saves the file.")
	return res, nil
}

func (s *Server) stopTracing(ctx context.Context, c *call, in stopTracingArgs) (*response, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !r.rec.part || r.bctx == nil {
		cause := "browser_start_tracing was not called in this role"
		if r.rec.session {
			cause += "; --save-trace saves the whole session's trace at browser_close"
		}
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "No trace is being recorded in this role.", Cause: cause,
			Actions: []llmerr.Action{llmerr.Call("browser_start_tracing", "start one, then act, then stop it")}}
	}
	name := in.Filename
	if name == "" {
		name = r.traceName()
	}
	path, err := r.saveTrace(name, r.rec.session)
	r.rec.part = false
	if err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool})
	}
	res := textResponse(traceSaved(path))
	if r.rec.session {
		// The session's trace goes on, in a chunk of its own.
		if err := r.bctx.Tracing().StartChunk(playwright.TracingStartChunkOptions{Title: playwright.String("retrace: role " + r.name)}); err != nil {
			r.rec.session = false
			res.addDid("The session's trace (--save-trace) could not go on: %s", llmerr.FirstLine(err.Error()))
		}
	}
	return res, nil
}
