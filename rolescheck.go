package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/samber/lo"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
	"github.com/retrace-dev/retrace/server"
)

// `retrace roles check` runs the comparison of browser_compare_roles over a
// list of URLs without an agent, writes it as a permission matrix and, with
// --expect, checks it against what each role must see (docs/roles-check.md).

// The exit codes of `retrace roles check`.
const (
	checkPassed  = 0 // the matrix is written; every expectation is met
	checkDiffers = 1 // some expectation is not met
	checkUsage   = 2 // a flag, a file or the browser setup is wrong
)

const rolesUsage = `usage: retrace roles check --config FILE --urls FILE --out DIR [--expect FILE] [--roles a,b] [flags]
(retrace roles check --help lists the flags; docs/roles-check.md)`

// runRoles is `retrace roles SUBCOMMAND`; it returns the exit code.
func runRoles(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(stderr, rolesUsage)
		return checkUsage
	}
	return rolesCheck(args[1:], stdout, stderr)
}

// checkFlags are the flags of `retrace roles check` that are its own; the
// browser's are kept in options, as the server's are.
type checkFlags struct {
	config, urls, expect, out, roles, baseURL string
}

func rolesCheck(args []string, stdout, stderr io.Writer) int {
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "retrace roles check: "+format+"\n", a...)
		return checkUsage
	}
	fs := flag.NewFlagSet("retrace roles check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c checkFlags
	var o options
	fs.StringVar(&c.config, "config", "", "roles config file, as the server takes (required; docs/roles.md)")
	fs.StringVar(&c.urls, "urls", "", "text file of URLs to check, one a line; # comments and blank lines skipped (required)")
	fs.StringVar(&c.out, "out", "", "directory for matrix.md and matrix.json (required)")
	fs.StringVar(&c.expect, "expect", "", "JSON file of expected outcomes and controls per URL and role; any difference exits 1")
	fs.StringVar(&c.roles, "roles", "", "roles to compare, comma-separated (default: every configured role but default)")
	fs.StringVar(&c.baseURL, "base-url", "", "resolve URLs of --urls and --expect that start with / against this origin")
	fs.BoolVar(&o.headless, "headless", true, "run Chromium headless")
	fs.StringVar(&o.executablePath, "executable-path", "", "Chromium executable (default: found on the machine)")
	fs.StringVar(&o.driverDir, "driver-dir", "", "Playwright driver directory (default $RETRACE_DRIVER_DIR or the user cache dir)")
	fs.BoolVar(&o.noSandbox, "no-sandbox", false, "turn Chromium's sandbox off")
	fs.IntVar(&o.timeoutAction, "timeout-action", 5000, "action timeout in milliseconds (sign-in recipes)")
	fs.IntVar(&o.timeoutNavigation, "timeout-navigation", 60000, "navigation timeout in milliseconds")
	fs.Func("browser-endpoint", "run browsers on this endpoint instead of a local Chromium (repeatable), as the server's flag", func(v string) error {
		o.endpoints = append(o.endpoints, strings.Fields(v)...)
		return nil
	})
	fs.Func("browser-endpoint-header", "header sent to every --browser-endpoint, 'Name: value' (repeatable); write secrets as ${ENV_VAR}", func(v string) error {
		o.endpointHeaders = append(o.endpointHeaders, v)
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), strings.SplitN(rolesUsage, "\n", 2)[0]+"\n\nEvery flag can also be set as RETRACE_<FLAG>.\n\nFlags:")
		fs.PrintDefaults()
	}
	if wantsHelp(args) {
		fs.SetOutput(stdout)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return checkPassed
		}
		return checkUsage
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q", fs.Arg(0))
	}
	if err := applyEnv(fs); err != nil {
		return usage("%v", err)
	}
	for _, req := range []struct{ flag, val string }{{"--config FILE", c.config}, {"--urls FILE", c.urls}, {"--out DIR", c.out}} {
		if req.val == "" {
			return usage("%s is required\n%s", req.flag, rolesUsage)
		}
	}
	if o.timeoutAction <= 0 || o.timeoutNavigation <= 0 {
		return usage("--timeout-action and --timeout-navigation must be positive milliseconds")
	}

	// Every file and flag is checked before the browser starts.
	cfg, err := roles.Load(c.config)
	if err != nil {
		return usage("--config: %v", err)
	}
	names, err := checkedRoles(cfg, c.roles)
	if err != nil {
		return usage("%v", err)
	}
	base, err := parseBase(c.baseURL)
	if err != nil {
		return usage("--base-url: %v", err)
	}
	urls, err := readURLs(c.urls, base)
	if err != nil {
		return usage("--urls: %v", err)
	}
	var exp *expectations
	if c.expect != "" {
		if exp, err = loadExpect(c.expect, base, urls, names); err != nil {
			return usage("--expect: %v", err)
		}
	}
	endpoints, err := browserEndpoints(o, cfg)
	if err != nil {
		return usage("%v", err)
	}
	if len(endpoints) == 0 {
		if _, err := browser.Locate(o.driverDir, o.executablePath); err != nil {
			if e, ok := llmerr.As(err); ok {
				return usage("the browser is not set up: %s (%s); fix: %v", e.Message, e.Cause, e.Details["fix"])
			}
			return usage("the browser is not set up: %v", err)
		}
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return usage("--out: %v", err)
	}

	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mgr := browser.NewManager(browser.Options{
		DriverDir:         o.driverDir,
		ExecutablePath:    o.executablePath,
		Endpoints:         endpoints,
		Headless:          o.headless,
		NoSandbox:         o.noSandbox,
		ActionTimeout:     time.Duration(o.timeoutAction) * time.Millisecond,
		NavigationTimeout: time.Duration(o.timeoutNavigation) * time.Millisecond,
		DriverLog:         stderr,
		Logger:            logger,
	})
	defer mgr.Close()
	srv := server.New(server.Config{Roles: cfg, Logger: logger}, mgr)
	defer srv.Close()
	comparer := srv.NewRoleComparer()
	defer comparer.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := &matrix{Roles: names}
	for i, u := range urls {
		cmp, err := comparer.Compare(ctx, u, names)
		if ctx.Err() != nil {
			return usage("interrupted at %s; nothing written", u)
		}
		row := matrixRow(u, names, cmp, err)
		m.URLs = append(m.URLs, row)
		fmt.Fprintf(stderr, "[%d/%d] %s: %s\n", i+1, len(urls), u, strings.Join(lo.Map(row.Roles, func(c matrixCell, _ int) string {
			return c.Role + " " + c.text(u)
		}), ", "))
		for _, c := range row.Roles {
			for _, w := range c.Warnings {
				fmt.Fprintf(stderr, "  %s: %s\n", c.Role, w)
			}
		}
	}
	if exp != nil {
		m.Expect = c.expect
		m.Differences = exp.check(m)
	}
	if err := writeMatrix(c.out, m); err != nil {
		return usage("--out: %v", err)
	}

	for _, d := range m.Differences {
		fmt.Fprintln(stdout, d.line())
	}
	failed := lo.CountBy(m.URLs, func(r matrixURL) bool { return r.Error != nil })
	summary := fmt.Sprintf("Checked %d URL%s as %s", len(urls), plural(len(urls)), strings.Join(names, ", "))
	if failed > 0 {
		summary += fmt.Sprintf(" (%d could not be loaded by any role)", failed)
	}
	if exp != nil {
		summary += fmt.Sprintf(": %d difference%s from %s", len(m.Differences), plural(len(m.Differences)), c.expect)
	}
	fmt.Fprintf(stdout, "%s. Wrote %s and %s.\n", summary, filepath.Join(c.out, "matrix.md"), filepath.Join(c.out, "matrix.json"))
	if len(m.Differences) > 0 {
		return checkDiffers
	}
	return checkPassed
}

func plural(n int) string { return lo.Ternary(n == 1, "", "s") }

// checkedRoles returns the roles asked for with --roles, each configured,
// or every configured role but default.
func checkedRoles(cfg *roles.Config, asked string) ([]string, error) {
	known := slices.DeleteFunc(cfg.Names(), func(n string) bool { return n == roles.Default })
	if asked == "" {
		if len(known) == 0 {
			return nil, errors.New("--config configures no role but default: there is nothing to compare")
		}
		return known, nil
	}
	names := lo.Uniq(splitList(asked))
	for _, n := range names {
		if _, ok := cfg.Get(n); !ok {
			return nil, fmt.Errorf("--roles: no role %q in the config (there are: %s)", n, strings.Join(cfg.Names(), ", "))
		}
	}
	if len(names) == 0 {
		return nil, errors.New("--roles: no role named")
	}
	return names, nil
}

func parseBase(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", s)
	}
	return u, nil
}

// resolveURL checks that s is an http(s) URL, or a path starting with /
// when there is a base to resolve it against.
func resolveURL(s string, base *url.URL) (string, error) {
	if strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") {
		if base == nil {
			return "", fmt.Errorf("%q is a path: give --base-url, or a full URL", s)
		}
		ref, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("%q: %v", s, err)
		}
		return base.ResolveReference(ref).String(), nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", s)
	}
	return s, nil
}

// readURLs reads the --urls file: one URL a line, blank lines and lines
// starting with # skipped, repeats dropped.
func readURLs(path string, base *url.URL) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var urls []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, err := resolveURL(line, base)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		urls = append(urls, u)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%s lists no URL", path)
	}
	return lo.Uniq(urls), nil
}

// matrix is what `retrace roles check` found, written as matrix.json.
type matrix struct {
	// Roles are the roles compared, the matrix's columns.
	Roles []string    `json:"roles"`
	URLs  []matrixURL `json:"urls"`
	// Expect is the --expect file, Differences what it expected that was
	// not so; both absent without --expect.
	Expect      string       `json:"expect,omitempty"`
	Differences []difference `json:"differences,omitempty"`
}

// matrixURL is one URL's row: where each role ended, and the controls of
// the pages of the roles that were let in.
type matrixURL struct {
	URL string `json:"url"`
	// Error is set when no role could load the URL (each role's cell says
	// why) or it was refused before loading.
	Error *checkError  `json:"error,omitempty"`
	Roles []matrixCell `json:"roles"`
	// Compared are the roles whose pages were read and compared: those
	// reached or redirected to a page that let them in.
	Compared []string `json:"compared"`
	// Controls are every element of the compared pages (controls, headings,
	// landmarks), in document order.
	Controls []matrixControl `json:"controls"`
}

// matrixCell is where one role's load of the URL ended.
type matrixCell struct {
	Role    string         `json:"role"`
	Outcome server.Outcome `json:"outcome"`
	Status  int            `json:"status,omitempty"`
	// Landed is where the role's page ended, Title its title.
	Landed   string      `json:"landed,omitempty"`
	Title    string      `json:"title,omitempty"`
	Error    *checkError `json:"error,omitempty"`
	Warnings []string    `json:"warnings,omitempty"`
	Cut      bool        `json:"cut,omitempty"`
}

// checkError is an error's code and first line: the recovery plan is for
// an agent, not a report.
type checkError struct {
	Code    llmerr.Code `json:"code"`
	Message string      `json:"message"`
}

// matrixControl is one element of the compared pages, keyed by ARIA role,
// name and which one of that role and name it is.
type matrixControl struct {
	Role  string `json:"role"`
	Name  string `json:"name,omitempty"`
	Nth   int    `json:"nth"`
	Level int    `json:"level,omitempty"`
	// In maps each compared role that has it to its states ([] for none);
	// a compared role not in it does not have it.
	In      map[string][]string `json:"in"`
	Differs bool                `json:"differs"`
}

func errorOf(err error) *checkError {
	if err == nil {
		return nil
	}
	if e, ok := llmerr.As(err); ok {
		return &checkError{Code: e.Code, Message: llmerr.FirstLine(e.Message)}
	}
	return &checkError{Code: llmerr.Code("ERROR"), Message: llmerr.FirstLine(err.Error())}
}

// matrixRow is the row of u from its comparison, or from the error that
// stopped it (every role then failed with it).
func matrixRow(u string, names []string, cmp *server.RoleComparison, err error) matrixURL {
	row := matrixURL{URL: u, Compared: []string{}, Controls: []matrixControl{}}
	if err != nil {
		row.Error = errorOf(err)
		for _, n := range names {
			row.Roles = append(row.Roles, matrixCell{Role: n, Outcome: server.OutcomeFailed, Error: row.Error})
		}
		return row
	}
	for _, v := range cmp.Views {
		cell := matrixCell{Role: v.Role, Outcome: v.Outcome, Status: v.Status, Landed: v.URL, Title: v.Title,
			Warnings: v.Warnings, Cut: v.Cut}
		if v.Error != nil {
			cell.Error = errorOf(v.Error)
		}
		row.Roles = append(row.Roles, cell)
	}
	row.Compared = append(row.Compared, cmp.Compared...)
	for _, e := range cmp.Elements {
		c := matrixControl{Role: e.Role, Name: e.Name, Nth: e.Nth, Level: e.Level, Differs: e.Differs, In: map[string][]string{}}
		for r, st := range e.In {
			c.In[r] = append([]string{}, st.States...)
		}
		row.Controls = append(row.Controls, c)
	}
	return row
}

func (r *matrixURL) cell(role string) *matrixCell {
	for i := range r.Roles {
		if r.Roles[i].Role == role {
			return &r.Roles[i]
		}
	}
	return nil
}

// text is the cell as the matrix writes it.
func (c *matrixCell) text(target string) string {
	var s string
	switch c.Outcome {
	case server.OutcomeReached:
		s = "reached"
	case server.OutcomeRedirected:
		s = "redirected to " + shortURL(c.Landed, target)
	case server.OutcomeSignedOut:
		s = "signed out (" + shortURL(c.Landed, target) + ")"
	case server.OutcomeForbidden:
		s = fmt.Sprintf("forbidden (%d)", c.Status)
	case server.OutcomeHTTPError:
		s = fmt.Sprintf("error (HTTP %d)", c.Status)
	default:
		if c.Error != nil {
			return "error (" + string(c.Error.Code) + ")"
		}
		return "error"
	}
	if c.Error != nil && c.Outcome != server.OutcomeSignedOut {
		s += ", not read (" + string(c.Error.Code) + ")"
	}
	return s
}

// outcomeWord is the cell's outcome as an expectation writes it.
func (c *matrixCell) outcomeWord() string {
	switch c.Outcome {
	case server.OutcomeReached, server.OutcomeRedirected, server.OutcomeForbidden:
		return string(c.Outcome)
	case server.OutcomeSignedOut:
		return "signed-out"
	}
	return "error"
}

// shortURL writes landed as a path when it is on target's origin.
func shortURL(landed, target string) string {
	l, err1 := url.Parse(landed)
	t, err2 := url.Parse(target)
	if err1 != nil || err2 != nil || l.Scheme != t.Scheme || l.Host != t.Host {
		return landed
	}
	return l.RequestURI()
}

// label is how a control is written in the matrix and in differences:
// role "name" #nth.
func (c matrixControl) label() string {
	s := c.Role
	if c.Name != "" {
		s += " " + strconv.Quote(c.Name)
	}
	if c.Nth > 1 {
		s += fmt.Sprintf(" #%d", c.Nth)
	}
	if c.Level > 0 {
		s += fmt.Sprintf(" [level=%d]", c.Level)
	}
	return s
}

func statesText(states []string) string {
	return strings.Join(lo.Map(states, func(s string, _ int) string { return "[" + s + "]" }), " ")
}

// writeMatrix writes matrix.md and matrix.json into dir.
func writeMatrix(dir string, m *matrix) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "matrix.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "matrix.md"), []byte(m.markdown()), 0o644)
}

// mdCell makes page text safe in a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// markdown writes the matrix: the table of outcomes, the differences from
// the expectations, then per URL the controls that differ between roles.
func (m *matrix) markdown() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Role check\n\n%d URL%s checked as %s.\n\n", len(m.URLs), plural(len(m.URLs)), strings.Join(m.Roles, ", "))
	b.WriteString("| URL | " + strings.Join(lo.Map(m.Roles, func(r string, _ int) string { return mdCell(r) }), " | ") + " |\n")
	b.WriteString("| --- |" + strings.Repeat(" --- |", len(m.Roles)) + "\n")
	for _, row := range m.URLs {
		cells := lo.Map(m.Roles, func(r string, _ int) string { return mdCell(row.cell(r).text(row.URL)) })
		fmt.Fprintf(&b, "| %s | %s |\n", mdCell(row.URL), strings.Join(cells, " | "))
	}
	if m.Expect != "" {
		fmt.Fprintf(&b, "\n## Differences from %s\n\n", mdCell(m.Expect))
		if len(m.Differences) == 0 {
			b.WriteString("None: every expectation is met.\n")
		}
		for _, d := range m.Differences {
			b.WriteString("- " + mdCell(d.line()) + "\n")
		}
	}
	b.WriteString("\n## Controls that differ between roles\n")
	for _, row := range m.URLs {
		fmt.Fprintf(&b, "\n### %s\n\n", mdCell(row.URL))
		if row.Error != nil {
			fmt.Fprintf(&b, "Not compared: %s %s\n", row.Error.Code, mdCell(row.Error.Message))
			continue
		}
		left := lo.FilterMap(row.Roles, func(c matrixCell, _ int) (string, bool) {
			return c.Role + ": " + c.text(row.URL), !slices.Contains(row.Compared, c.Role)
		})
		note := ""
		if len(left) > 0 {
			note = " Left out: " + mdCell(strings.Join(left, "; ")) + "."
		}
		switch len(row.Compared) {
		case 0:
			fmt.Fprintf(&b, "No role was let in: nothing to compare.%s\n", note)
			continue
		case 1:
			fmt.Fprintf(&b, "Only %s was let in: nothing to compare.%s\n", row.Compared[0], note)
			continue
		}
		diff := lo.Filter(row.Controls, func(c matrixControl, _ int) bool { return c.Differs })
		fmt.Fprintf(&b, "Compared %s.%s", strings.Join(row.Compared, ", "), note)
		if len(diff) == 0 {
			b.WriteString(" No control differs.\n")
			continue
		}
		fmt.Fprintf(&b, " %d of %d elements differ:\n\n", len(diff), len(row.Controls))
		b.WriteString("| control | " + strings.Join(row.Compared, " | ") + " |\n")
		b.WriteString("| --- |" + strings.Repeat(" --- |", len(row.Compared)) + "\n")
		for _, c := range diff {
			cells := lo.Map(row.Compared, func(r string, _ int) string {
				st, ok := c.In[r]
				if !ok {
					return "—"
				}
				return strings.TrimSpace("✓ " + statesText(st))
			})
			fmt.Fprintf(&b, "| %s | %s |\n", mdCell(c.label()), strings.Join(cells, " | "))
		}
	}
	return b.String()
}

// The --expect file.

// expectFile is the JSON of --expect: per URL (as listed in --urls), per
// role, what the role must meet there.
type expectFile struct {
	URLs map[string]map[string]roleExpect `json:"urls"`
}

// roleExpect is what one role must meet at one URL; every field is
// optional.
type roleExpect struct {
	// Outcome is reached, redirected, signed-out, forbidden or error.
	Outcome string `json:"outcome,omitempty"`
	// Must are the controls the role must have, MustNot those it must not.
	Must    []string `json:"must,omitempty"`
	MustNot []string `json:"mustNot,omitempty"`
}

// expectations is a checked --expect file.
type expectations struct {
	// byURL holds per URL, per role, the parsed expectation.
	byURL map[string]map[string]parsedExpect
}

type parsedExpect struct {
	outcome       string
	must, mustNot []controlSpec
}

var outcomeWords = map[string]string{"reached": "reached", "redirected": "redirected", "signed-out": "signed-out",
	"signed out": "signed-out", "forbidden": "forbidden", "error": "error"}

// loadExpect reads and checks the --expect file: its URLs must be among
// urls and its roles among those compared, so a typo is not a silent pass.
func loadExpect(path string, base *url.URL, urls, names []string) (*expectations, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f expectFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	exp := &expectations{byURL: map[string]map[string]parsedExpect{}}
	for raw, byRole := range f.URLs {
		u, err := resolveURL(raw, base)
		if err != nil {
			return nil, fmt.Errorf("%s: urls: %v", path, err)
		}
		if !slices.Contains(urls, u) {
			return nil, fmt.Errorf("%s: urls[%q]: not in the --urls list", path, raw)
		}
		exp.byURL[u] = map[string]parsedExpect{}
		for role, e := range byRole {
			at := fmt.Sprintf("%s: urls[%q].%s", path, raw, role)
			if !slices.Contains(names, role) {
				return nil, fmt.Errorf("%s: role %q is not checked (checked: %s)", at, role, strings.Join(names, ", "))
			}
			var p parsedExpect
			if e.Outcome != "" {
				if p.outcome = outcomeWords[e.Outcome]; p.outcome == "" {
					return nil, fmt.Errorf("%s.outcome: %q is not reached, redirected, signed-out, forbidden or error", at, e.Outcome)
				}
			}
			for i, s := range e.Must {
				c, err := parseControl(s)
				if err != nil {
					return nil, fmt.Errorf("%s.must[%d]: %v", at, i, err)
				}
				p.must = append(p.must, c)
			}
			for i, s := range e.MustNot {
				c, err := parseControl(s)
				if err != nil {
					return nil, fmt.Errorf("%s.mustNot[%d]: %v", at, i, err)
				}
				p.mustNot = append(p.mustNot, c)
			}
			exp.byURL[u][role] = p
		}
	}
	return exp, nil
}

// controlSpec is a control as an expectation names it: `button Refund`,
// `textbox "Edit note" [readonly]`, `button "Print" []`.
type controlSpec struct {
	role, name string
	// states, when not nil, are the states the control must have, exactly
	// ([] for none); nil means any.
	states []string
}

// parseControl reads ARIA role, then the accessible name (quoted, or the
// rest of the text up to the first [), then states in brackets.
func parseControl(s string) (controlSpec, error) {
	s = strings.TrimSpace(s)
	role, rest, _ := strings.Cut(s, " ")
	if role == "" || strings.ContainsAny(role, `"[]`) {
		return controlSpec{}, fmt.Errorf("%q: want an ARIA role, then the name, as `button \"Refund\" [disabled]`", s)
	}
	c := controlSpec{role: strings.ToLower(role)}
	rest = strings.TrimSpace(rest)
	var states string
	if strings.HasPrefix(rest, `"`) {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return controlSpec{}, fmt.Errorf("%q: the name's quotes do not close", s)
		}
		c.name, _ = strconv.Unquote(q)
		states = strings.TrimSpace(rest[len(q):])
	} else {
		c.name = rest
		if i := strings.Index(rest, "["); i >= 0 {
			c.name, states = strings.TrimSpace(rest[:i]), rest[i:]
		}
	}
	if states == "" {
		return c, nil
	}
	c.states = []string{}
	for states != "" {
		if !strings.HasPrefix(states, "[") {
			return controlSpec{}, fmt.Errorf("%q: after the name, only states in brackets, as [disabled] [readonly]", s)
		}
		inner, after, ok := strings.Cut(states[1:], "]")
		if !ok {
			return controlSpec{}, fmt.Errorf("%q: a [ does not close", s)
		}
		c.states = append(c.states, strings.FieldsFunc(inner, func(r rune) bool { return r == ',' || r == ' ' })...)
		states = strings.TrimSpace(after)
	}
	slices.Sort(c.states)
	c.states = slices.Compact(c.states)
	return c, nil
}

func (c controlSpec) String() string {
	s := c.role
	if c.name != "" {
		s += " " + strconv.Quote(c.name)
	}
	if c.states != nil {
		s += " " + lo.Ternary(len(c.states) == 0, "[]", statesText(c.states))
	}
	return s
}

// find returns the controls of row that role has with c's ARIA role and
// name, and the first of them in c's states, if any.
func (c controlSpec) find(row *matrixURL, role string) (has []matrixControl, match *matrixControl) {
	for _, e := range row.Controls {
		st, ok := e.In[role]
		if !ok || !strings.EqualFold(e.Role, c.role) || e.Name != c.name {
			continue
		}
		has = append(has, e)
		if match == nil && (c.states == nil || slices.Equal(c.states, slices.Sorted(slices.Values(st)))) {
			match = &has[len(has)-1]
		}
	}
	return has, match
}

// difference is one expectation that was not met.
type difference struct {
	URL  string `json:"url"`
	Role string `json:"role"`
	// Kind is outcome, must or mustNot.
	Kind string `json:"kind"`
	// Expected is the outcome expected, or the control as written there
	// (normalized); Got is what the role met.
	Expected string `json:"expected"`
	Got      string `json:"got"`
}

// line is the difference on one line, naming its URL, role and control.
func (d difference) line() string {
	switch d.Kind {
	case "outcome":
		return fmt.Sprintf("%s as %s: expected %s, got %s", d.URL, d.Role, d.Expected, d.Got)
	case "mustNot":
		return fmt.Sprintf("%s as %s: must not see %s, got %s", d.URL, d.Role, d.Expected, d.Got)
	}
	return fmt.Sprintf("%s as %s: must see %s, got %s", d.URL, d.Role, d.Expected, d.Got)
}

// check compares the matrix with the expectations, in the order of the
// matrix's URLs and roles.
func (x *expectations) check(m *matrix) []difference {
	var out []difference
	for i := range m.URLs {
		row := &m.URLs[i]
		for _, role := range m.Roles {
			e, ok := x.byURL[row.URL][role]
			if !ok {
				continue
			}
			cell := row.cell(role)
			add := func(kind, expected, got string) {
				out = append(out, difference{URL: row.URL, Role: role, Kind: kind, Expected: expected, Got: got})
			}
			if e.outcome != "" && cell.outcomeWord() != e.outcome {
				add("outcome", e.outcome, cell.text(row.URL))
			}
			if !slices.Contains(row.Compared, role) {
				// The role's page was not read: it has no control, which
				// every mustNot allows and no must does.
				for _, c := range e.must {
					add("must", c.String(), "no controls read, the role's page was "+cell.text(row.URL))
				}
				continue
			}
			for _, c := range e.must {
				has, match := c.find(row, role)
				switch {
				case len(has) == 0:
					add("must", c.String(), "absent")
				case match == nil:
					add("must", c.String(), strings.Join(lo.Map(has, func(h matrixControl, _ int) string {
						return strings.TrimSpace(h.label() + " " + lo.Ternary(len(h.In[role]) == 0, "[]", statesText(h.In[role])))
					}), ", "))
				}
			}
			for _, c := range e.mustNot {
				if _, match := c.find(row, role); match != nil {
					add("mustNot", c.String(), strings.TrimSpace(match.label()+" "+statesText(match.In[role])))
				}
			}
		}
	}
	return out
}
