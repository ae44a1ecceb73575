package eval

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/llmerr"
)

// A pack page reports its goal as the built-in pages do: to /eval/event.
const packPage = `<!doctype html>
<html><head><title>Newsletter</title></head>
<body>
  <h1>Newsletter</h1>
  <button id="send" onclick="fetch('/eval/event?e=sent'); document.title = 'Sent'">Send</button>
</body></html>
`

const packScenario = `{
  "kind": "rerender",
  "description": "After the agent's snapshot, the Send button is replaced by an identical new element.",
  "start": "/eval/newsletter.html",
  "goal": {"clicks": [{"role": "button", "name": "Send"}], "event": "sent"},
  "fault": {"after": "snapshot",
    "script": "() => { const b = document.getElementById('send'); b.replaceWith(b.cloneNode(true)); }"},
  "steps": 10
}
`

// writePack writes files (name → content, names with slashes) into a
// fresh directory and returns it.
func writePack(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPackRuns runs a user's pack the way `retrace eval --scenarios` does:
// its page is served next to the built-in ones and its run is in the
// report under its file's name.
func TestPackRuns(t *testing.T) {
	dir := writePack(t, map[string]string{
		"send-newsletter.json":    packScenario,
		"pages/newsletter.html":   packPage,
		"notes.txt":               "not a scenario",
		"pages/unused/other.html": packPage,
	})
	p, err := LoadPack(dir, os.DirFS("../testdata/pages"))
	if err != nil {
		t.Fatal(err)
	}
	builtin := loadAll(t)
	scs, err := p.With(builtin)
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != len(builtin)+1 {
		t.Fatalf("%d scenarios with the pack, want %d", len(scs), len(builtin)+1)
	}
	pfx, err := fixture.StartFS(p.Pages())
	if err != nil {
		t.Fatal(err)
	}
	defer pfx.Close()
	var log strings.Builder
	runs, err := Evaluate(context.Background(), Options{Scenarios: p.Scenarios, Policies: []Policy{Reader{}},
		Servers: []*Server{retrace}, Styles: []llmerr.Style{llmerr.StyleRecovery}, K: 1, Progress: &log}, pfx)
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := Write(out, NewReport(runs, []*Server{retrace}, 1, len(p.Scenarios), "retrace eval --scenarios "+dir)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 {
		t.Fatalf("report.json has %d runs, want 1", len(rep.Runs))
	}
	r := rep.Runs[0]
	if r.Scenario != "send-newsletter" || r.Kind != "rerender" {
		t.Errorf("run is %s (%s), want send-newsletter (rerender)", r.Scenario, r.Kind)
	}
	if !r.Reached || !r.Failed {
		t.Errorf("reached %v, met a failure %v; want both; trace: %v", r.Reached, r.Failed, r.Trace)
	}
}

// TestPackErrors: a broken pack is refused before anything runs, with the
// file and the field at fault.
func TestPackErrors(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(packScenario, old) {
			t.Fatalf("%q is not in the scenario", old)
		}
		return strings.Replace(packScenario, old, new, 1)
	}
	page := map[string]string{"pages/newsletter.html": packPage}
	for _, tc := range []struct {
		name, scenario string
		pages          map[string]string
		field          string // "" for an error that is not a *FileError
		want           string
	}{
		{"unknown field", edit(`"steps"`, `"step": 3, "steps"`), page, "step", "unknown field"},
		{"missing goal", edit(`"goal": {"clicks": [{"role": "button", "name": "Send"}], "event": "sent"},`, ""), page,
			"goal.clicks", "missing"},
		{"missing event", edit(`, "event": "sent"`, ""), page, "goal.event", "missing"},
		{"bad kind", edit(`"rerender"`, `"rerendering"`), page, "kind", `"rerendering" is not one of`},
		{"bad fault moment", edit(`"after": "snapshot"`, `"after": "click"`), page, "fault.after", `"click"`},
		{"wrong type", edit(`"steps": 10`, `"steps": "ten"`), page, "steps", "want int"},
		{"not JSON", edit(`"steps": 10`, `"steps": 10,`), page, "", "line 9, column 1"},
		{"missing page", packScenario, nil, "start", "newsletter.html"},
		{"missing late page", edit(`"/eval/newsletter.html"`, `"/eval/slow-once/other.html"`), page, "start", "other.html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"broken.json": tc.scenario}
			for k, v := range tc.pages {
				files[k] = v
			}
			dir := writePack(t, files)
			_, err := LoadPack(dir, os.DirFS("../testdata/pages"))
			t.Log(err)
			var ferr *FileError
			if !errors.As(err, &ferr) {
				t.Fatalf("error %v is not a *FileError", err)
			}
			if ferr.File != filepath.Join(dir, "broken.json") || ferr.Field != tc.field {
				t.Errorf("file %s, field %q; want %s, %q", ferr.File, ferr.Field, filepath.Join(dir, "broken.json"), tc.field)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), ferr.File+": ") {
				t.Errorf("error %q: want the file first and %q", err, tc.want)
			}
		})
	}
}

func TestPackRefuses(t *testing.T) {
	base := os.DirFS("../testdata/pages")
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no scenarios", map[string]string{"pages/newsletter.html": packPage}, "no scenario files"},
		{"built-in page name", map[string]string{"a.json": packScenario, "pages/newsletter.html": packPage,
			"pages/_pay.html": packPage}, "/eval/_pay.html is a built-in page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPack(writePack(t, tc.files), base)
			t.Log(err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	p, err := LoadPack(writePack(t, map[string]string{"rerender-button.json": packScenario,
		"pages/newsletter.html": packPage}), base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.With(loadAll(t)); err == nil || !strings.Contains(err.Error(), "rerender-button") {
		t.Errorf("a pack scenario named like a built-in one: error %v", err)
	}
}

// TestStartsServed checks fixture.Serves, which LoadPack relies on,
// against the built-in scenarios' start pages and the fixture's routes.
func TestStartsServed(t *testing.T) {
	pages := os.DirFS("../testdata/pages")
	for _, sc := range loadAll(t) {
		if !fixture.Serves(pages, sc.variant(0)) {
			t.Errorf("%s: start %s is not served", sc.Name, sc.variant(0))
		}
	}
	for _, p := range []string{"/eval/nothing.html", "/eval/slow-once/nothing.html", "/eval/", "eval/_pay.html"} {
		if fixture.Serves(pages, p) {
			t.Errorf("%s is served, want not", p)
		}
	}
}
