package server

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/retrace-dev/retrace/llmerr"
)

// Sessions as Playwright tests. While recording is on (--caps testing, or
// retrace record), each successful action of a role is kept as the lines
// of Playwright test code that do it again: the element by the locator
// browser_generate_locator would give (checked on the page to match it
// alone, before the action), the value typed checked with toHaveValue, a
// text waited for with toBeVisible. browser_generate_test writes the lines
// since the role's last navigation (or since its mark) as a test file;
// retrace record writes the whole session when the server stops.

type generateTestArgs struct {
	Name string `json:"name,omitempty" jsonschema:"Test name; the file is <name>.spec.ts in --output-dir (default: the page title)"`
	Mark bool   `json:"mark,omitempty" jsonschema:"Only mark here the start of the next test"`
	roleArg
}

func (s *Server) addTestingTools() {
	addTool(s, def("browser_generate_test", "Generate a Playwright test", 0, "Write the actions since the last navigation (or mark) as a Playwright test with verified locators and assertions."), s.generateTest)
}

// recording reports whether actions are kept as test code: computing a
// verified locator costs a few round trips per action.
func (s *Server) recording() bool {
	return s.hasCap("testing") || s.cfg.RecordTo != ""
}

// actionLog is what a role recorded (its own lock: the server's end reads it
// from another goroutine).
type actionLog struct {
	mu sync.Mutex
	// since are the lines since the last navigation or mark; marked is
	// set from browser_generate_test(mark) to the next test written.
	since  []string
	marked bool
	// all are the lines of the whole session.
	all []string
	// start is where since began, for a name.
	start string
}

// add keeps lines of one action; a navigation starts the lines since.
func (l *actionLog) add(navigation bool, url string, lines []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if navigation && !l.marked {
		l.since, l.start = nil, url
	}
	l.since = append(l.since, lines...)
	l.all = append(l.all, lines...)
}

// locatorOf returns the code that finds t's element in a test ("page." and
// a locator), verified to match it alone; computed once per target, before
// the action changes the page.
func (a *acting) locatorOf(t *target) string {
	if !a.srv.recording() {
		// It costs a few round trips, more on a large page.
		return ""
	}
	if t.code != "" {
		return t.code
	}
	code := ""
	if st, err := evalJSON[structureInfo](t.el, structureJS); err == nil {
		code, _, _ = a.srv.locate(t, &st)
	}
	if code == "" {
		// Nothing matched it alone: its role and name, first of those,
		// says so.
		code = byRole(t.rec.Role, t.rec.Name).code + ".first() /* not unique on the page */"
	}
	t.code = "page." + code
	return t.code
}

// testCode adds the test lines of the action to the result's record.
func (a *acting) testCode(format string, args ...any) {
	if a.srv.recording() {
		a.code = append(a.code, fmt.Sprintf(format, args...))
	}
}

func (s *Server) generateTest(ctx context.Context, c *call, in generateTestArgs) (*response, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	log := &r.tests
	log.mu.Lock()
	defer log.mu.Unlock()
	if in.Mark {
		log.since, log.marked = nil, true
		return textResponse("Marked: the next browser_generate_test writes the actions from here on."), nil
	}
	if len(log.since) == 0 {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "There is no action to write as a test yet.", Cause: "no action succeeded in this role since its last navigation or mark",
			Actions: []llmerr.Action{llmerr.Call("browser_navigate", "start where the test starts, then act", llmerr.A("url", "https://example.com/"))}}
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = "recorded from " + log.start
		if r.tab != nil {
			if title, ok := bounded(titleWait, func() string { t, _ := r.tab.Page.Title(); return t }); ok && title != "" {
				name = title
			}
		}
	}
	code := testFile([]namedTest{{name: name, lines: log.since}})
	dir, err := s.outputDir()
	if err != nil {
		return nil, err
	}
	path := uniquePath(dir, slug(name)+".spec.ts")
	if err := os.WriteFile(path, []byte(code), 0o600); err != nil {
		return nil, err
	}
	log.marked = false
	res := textResponse(fmt.Sprintf("Wrote the test %q (%d lines) to %s; run it with: npx playwright test %s\n%s",
		name, len(log.since), path, filepath.Base(path), code))
	return res, nil
}

// namedTest is one test of a file.
type namedTest struct {
	name    string
	lines   []string
	comment string
}

// testFile renders tests as a Playwright test file in TypeScript.
func testFile(tests []namedTest) string {
	var b strings.Builder
	b.WriteString("// Recorded by retrace: each locator was checked on the page to match its element alone.\n")
	b.WriteString("import { test, expect } from '@playwright/test';\n")
	for _, t := range tests {
		b.WriteString("\n")
		if t.comment != "" {
			b.WriteString("// " + t.comment + "\n")
		}
		fmt.Fprintf(&b, "test(%s, async ({ page }) => {\n", jsString(t.name))
		for _, l := range t.lines {
			b.WriteString("  " + l + "\n")
		}
		b.WriteString("});\n")
	}
	return b.String()
}

// writeSessionTest writes every role's recorded session to path as a test
// file (retrace record): a test per role that acted.
func (s *Server) writeSessionTest(path string) error {
	s.mu.Lock()
	sessions := slices.Clone(s.recorded)
	s.mu.Unlock()
	var tests []namedTest
	for _, sess := range sessions {
		sess.mu.Lock()
		names := slices.Sorted(maps.Keys(sess.roles))
		roles := make([]*role, len(names))
		for i, n := range names {
			roles[i] = sess.roles[n]
		}
		sess.mu.Unlock()
		for _, r := range roles {
			r.tests.mu.Lock()
			lines := slices.Clone(r.tests.all)
			r.tests.mu.Unlock()
			if len(lines) == 0 {
				continue
			}
			t := namedTest{name: "session of role " + r.name, lines: lines}
			if r.name != defaultRole {
				t.comment = "The role signed in through its auth file; give the test the same storageState (test.use) to replay it."
			}
			tests = append(tests, t)
		}
	}
	if len(tests) == 0 {
		tests = []namedTest{{name: "empty session", lines: []string{"// The session made no action."}}}
	}
	return os.WriteFile(path, []byte(testFile(tests)), 0o644)
}

// slug is a test name as a file name: lower case, words joined by "-".
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], "-")
	}
	if s == "" {
		s = "recorded"
	}
	return safeFileName(s)
}
