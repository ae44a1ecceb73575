package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
)

// pipelineCase drives one page-changing tool into the page's reaction:
// prepare loads what the call needs and returns the call's arguments.
type pipelineCase struct {
	tool    string
	prepare func(p *pipelineRun) map[string]any
}

// pipelineRun is one case in one mode, with its own session.
type pipelineRun struct {
	t *testing.T
	c *client
	// then is the page's reaction: "login" or "dialog".
	then string
	// file is an upload the server may take.
	file string
}

var pipelineKeys atomic.Int64

// page loads _pipeline.html in the mode and returns its snapshot.
func (p *pipelineRun) page(extra string) string {
	p.c.ok("browser_navigate", map[string]any{"url": fx.Page("_pipeline.html?then=" + p.then + extra)})
	return p.c.ok("browser_snapshot", nil)
}

// away is a URL that, in login mode, shows a page on its first request
// and sends every later one to the sign-in page; in dialog mode, the page
// asks its confirm on its load number n.
func (p *pipelineRun) away(n int) string {
	if p.then == "login" {
		return fmt.Sprintf("%s/returns/away-%d", fx.URL, pipelineKeys.Add(1))
	}
	return fx.Page(fmt.Sprintf("_pipeline.html?then=dialog&onload=%d", n))
}

func (p *pipelineRun) ref(snap string, parts ...string) string { return refOf(p.t, snap, parts...) }

var pipelineCases = []pipelineCase{
	{"browser_click", func(p *pipelineRun) map[string]any {
		return map[string]any{"ref": p.ref(p.page(""), `button "Go"`)}
	}},
	{"browser_type", func(p *pipelineRun) map[string]any {
		return map[string]any{"ref": p.ref(p.page(""), `textbox "Field"`), "text": "x"}
	}},
	{"browser_hover", func(p *pipelineRun) map[string]any {
		return map[string]any{"ref": p.ref(p.page(""), `button "Hover me"`)}
	}},
	{"browser_select_option", func(p *pipelineRun) map[string]any {
		return map[string]any{"ref": p.ref(p.page(""), `combobox "Choice"`), "values": []string{"Two"}}
	}},
	{"browser_press_key", func(p *pipelineRun) map[string]any {
		p.page("")
		return map[string]any{"key": "Enter"}
	}},
	{"browser_drag", func(p *pipelineRun) map[string]any {
		snap := p.page("")
		return map[string]any{"startRef": p.ref(snap, `button "Drag me"`), "endRef": p.ref(snap, `button "Drop here"`)}
	}},
	{"browser_fill_form", func(p *pipelineRun) map[string]any {
		return map[string]any{"fields": []map[string]any{{"ref": p.ref(p.page(""), `textbox "Field"`), "value": "x"}}}
	}},
	{"browser_file_upload", func(p *pipelineRun) map[string]any {
		return map[string]any{"ref": p.ref(p.page(""), `"Attachment"`), "paths": []string{p.file}}
	}},
	{"browser_evaluate", func(p *pipelineRun) map[string]any {
		p.page("")
		return map[string]any{"function": "() => react()"}
	}},
	{"browser_navigate", func(p *pipelineRun) map[string]any {
		u := p.away(1)
		if p.then == "login" {
			p.c.ok("browser_navigate", map[string]any{"url": u}) // its first request is served
		}
		return map[string]any{"url": u}
	}},
	{"browser_navigate_back", func(p *pipelineRun) map[string]any {
		p.c.ok("browser_navigate", map[string]any{"url": p.away(2)})
		p.c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
		return nil
	}},
	{"browser_navigate_forward", func(p *pipelineRun) map[string]any {
		p.c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
		p.c.ok("browser_navigate", map[string]any{"url": p.away(2)})
		p.c.ok("browser_navigate_back", nil)
		return nil
	}},
	{"browser_reload", func(p *pipelineRun) map[string]any {
		p.c.ok("browser_navigate", map[string]any{"url": p.away(2)})
		return nil
	}},
	{"browser_tabs", func(p *pipelineRun) map[string]any {
		u := p.away(1)
		if p.then == "login" {
			p.c.ok("browser_navigate", map[string]any{"url": u})
		}
		return map[string]any{"action": "new", "url": u}
	}},
}

// TestEveryActionGoesThroughThePipeline drives each page-changing tool
// into a sign-in redirect and into a dialog, and checks that every one of
// them reports it in the same words: the steps after an action exist once.
func TestEveryActionGoesThroughThePipeline(t *testing.T) {
	t.Parallel()
	for _, then := range []string{"login", "dialog"} {
		reports := map[string]string{}
		t.Run(then, func(t *testing.T) {
			results := make([]string, len(pipelineCases))
			t.Run("tools", func(t *testing.T) {
				for i, pc := range pipelineCases {
					t.Run(pc.tool, func(t *testing.T) {
						t.Parallel()
						results[i] = runPipelineCase(t, pc, then)
					})
				}
			})
			for i, pc := range pipelineCases {
				reports[pc.tool] = results[i]
			}
		})
		// The part of each report that comes from the pipeline is the same
		// for every tool.
		var first, firstTool string
		for _, pc := range pipelineCases {
			got := reports[pc.tool]
			if got == "" {
				continue // that case failed and said why
			}
			if first == "" {
				first, firstTool = got, pc.tool
				continue
			}
			if got != first {
				t.Errorf("%s: %s reports\n%s\nbut %s reports\n%s", then, pc.tool, got, firstTool, first)
			}
		}
		t.Logf("%s, as every tool reports it:\n%s", then, first)
	}
}

// runPipelineCase runs one case and returns the part of its result that
// the pipeline wrote, with the tool's own words taken out.
func runPipelineCase(t *testing.T, pc pipelineCase, then string) string {
	dir := t.TempDir()
	writeState(t, filepath.Join(dir, "member.json"), fx.NewSession("ada"), "")
	cfg, err := roles.Load(writeConfig(t, dir, `{"roles": {
		"member": {"authFile": "member.json", "authRequired": true, "loginCheck": {"signedOutUrl": "/login"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := connect(t, Config{Roles: cfg, UploadDirs: []string{dir}})
	c.ok("select_role", map[string]any{"role": "member"})
	p := &pipelineRun{t: t, c: c, then: then, file: file}
	args := pc.prepare(p)
	if then == "login" {
		r := c.fail(pc.tool, args, llmerr.AuthenticationFailed)
		mustContain(t, r.Text, "Role member is signed out: the site sent it to its sign-in page.", "URL: "+fx.URL+"/login?next=")
		// The plan, without the URL (which names the page left).
		return r.Text[strings.Index(r.Text, "Cause:"):]
	}
	r := c.call(pc.tool, args)
	if r.IsError {
		t.Fatalf("%s failed:\n%s", pc.tool, r.Text)
	}
	ds, _ := r.Structured["dialogs"].([]any)
	if len(ds) != 1 || fmt.Sprint(ds[0]) != "map[accepted:false message:Proceed? type:confirm]" {
		t.Errorf("%s: structured dialogs = %v", pc.tool, ds)
	}
	from := strings.Index(r.Text, "Dialog: ")
	if from < 0 {
		t.Fatalf("%s did not report the dialog:\n%s", pc.tool, r.Text)
	}
	// The dialog and the steps that accept it, with this tool's own retry
	// named generically.
	report := r.Text[from:]
	mustContain(t, report, "If it should have been accepted:\n1. browser_handle_dialog(accept=true) — answer the next dialog with OK\n2. "+pc.tool+"(")
	retry := strings.Index(report, "2. "+pc.tool+"(")
	end := strings.Index(report[retry:], " — do the action again")
	if end < 0 {
		t.Fatalf("%s: no retry step:\n%s", pc.tool, report)
	}
	// What follows the steps (a hint, a listing) is the tool's own.
	return report[:retry] + "2. <the same call>" + " — do the action again"
}
