package main

import (
	"net/http"

	"github.com/retrace-dev/retrace/internal/benchpage"
)

// rows is how many rows of controls the load page has; each row holds a
// button, a text input, a select and a link, so 48 controls in all.
const rows = 12

// startPages serves the load page at / and a small page at /small on
// 127.0.0.1; ?c=<session>-<cycle> goes into the load page's title.
func startPages() (*benchpage.Server, error) {
	return benchpage.Start(map[string]func(*http.Request) string{
		"/{$}":   func(r *http.Request) string { return benchpage.Controls("Load", rows, r.URL.Query().Get("c")) },
		"/small": func(*http.Request) string { return smallPage },
	})
}

// smallPage is what idle sessions and extra tabs load.
const smallPage = `<!doctype html><html><head><title>Small page</title></head><body><h1>Small page</h1><p>Nothing to do here.</p><button type="button">OK</button></body></html>`
