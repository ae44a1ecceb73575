package eval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retrace-dev/retrace/fixture"
)

// PackPages is the folder of a pack that holds its pages. Its files are
// served under /eval/, as testdata/pages/eval is: DIR/pages/shop.html is
// /eval/shop.html, next to the built-in /eval/_paid.js and /eval/event.
const PackPages = "pages"

// Pack is a directory of scenarios a user adds without rebuilding retrace
// (`retrace eval --scenarios DIR`): DIR/*.json in the format of
// testdata/eval, and the pages they use in DIR/pages.
type Pack struct {
	// Dir is the pack's directory, as given.
	Dir string
	// Scenarios are the pack's, named after their files, in report order.
	Scenarios []Scenario
	pages     fs.FS
}

// LoadPack reads the pack in dir and checks it against base, the built-in
// fixture pages (testdata/pages): every scenario file is valid, the page
// each one starts on is served (by the pack, by base or by a route of the
// fixture), and no page of the pack has the name of a built-in one. A file
// at fault is a *FileError naming it and its field.
func LoadPack(dir string, base fs.FS) (*Pack, error) {
	fsys := os.DirFS(dir)
	scs, err := Load(fsys, ".")
	var ferr *FileError
	if errors.As(err, &ferr) {
		ferr.File = filepath.Join(dir, ferr.File)
		return nil, ferr
	}
	if err != nil {
		return nil, fmt.Errorf("scenario pack: %w", err)
	}
	if len(scs) == 0 {
		return nil, fmt.Errorf("scenario pack %s: no scenario files (*.json)", dir)
	}
	p := &Pack{Dir: dir, Scenarios: scs, pages: base}
	if fi, err := fs.Stat(fsys, PackPages); err == nil && fi.IsDir() {
		own, _ := fs.Sub(fsys, PackPages)
		if err := shadows(dir, own, base); err != nil {
			return nil, err
		}
		p.pages = fixture.Mount(base, "eval", own)
	}
	for _, sc := range scs {
		if fixture.Serves(p.pages, sc.Start) {
			continue
		}
		hint := "the pack's pages are served under /eval/"
		if rel, ok := strings.CutPrefix(path.Clean(sc.pagePath()), "/eval/"); ok {
			hint = "the pack has no " + filepath.Join(dir, PackPages, filepath.FromSlash(rel)) + " and no built-in page has that name"
		}
		return nil, &FileError{File: filepath.Join(dir, sc.Name+".json"), Field: "start",
			Err: fmt.Errorf("no page at %s: %s", sc.Start, hint)}
	}
	return p, nil
}

// pagePath is the URL path of the start page, without query and without
// the slow-once prefix that serves the same page late.
func (sc *Scenario) pagePath() string {
	p, _, _ := strings.Cut(sc.Start, "?")
	if rest, ok := strings.CutPrefix(p, "/eval/slow-once/"); ok {
		return "/eval/" + rest
	}
	return p
}

// shadows refuses a pack page with the name of a built-in one, which would
// change the built-in scenarios that use it.
func shadows(dir string, own, base fs.FS) error {
	return fs.WalkDir(own, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, err := fs.Stat(base, path.Join("eval", name)); err == nil {
			return fmt.Errorf("%s: /eval/%s is a built-in page; give the pack's page another name",
				filepath.Join(dir, PackPages, filepath.FromSlash(name)), name)
		}
		return nil
	})
}

// Pages returns the pages to serve with fixture.StartFS: the built-in ones
// with the pack's under eval/.
func (p *Pack) Pages() fs.FS { return p.pages }

// With returns scs and the pack's scenarios together, in report order. A
// pack scenario named like one of scs is an error, since the report tells
// runs apart by name.
func (p *Pack) With(scs []Scenario) ([]Scenario, error) {
	out := slices.Clone(scs)
	for _, sc := range p.Scenarios {
		if slices.ContainsFunc(scs, func(b Scenario) bool { return b.Name == sc.Name }) {
			return nil, fmt.Errorf("%s: a built-in scenario is named %s; rename the file",
				filepath.Join(p.Dir, sc.Name+".json"), sc.Name)
		}
		out = append(out, sc)
	}
	sortScenarios(out)
	return out, nil
}
