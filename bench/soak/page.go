package main

import (
	"net/http"

	"github.com/retrace-dev/retrace/internal/benchpage"
)

// perKind is how many controls of each kind the page has: buttons, text
// inputs, selects and links, 200 in all.
const perKind = 50

// startPage serves the soak page at / on 127.0.0.1; ?cycle=N goes into its
// title, so each cycle loads a page of its own.
func startPage() (*benchpage.Server, error) {
	return benchpage.Start(map[string]func(*http.Request) string{
		"/{$}": func(r *http.Request) string { return benchpage.Controls("Soak", perKind, r.URL.Query().Get("cycle")) },
	})
}
