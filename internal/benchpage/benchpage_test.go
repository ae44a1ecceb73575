package benchpage

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestControls(t *testing.T) {
	html := Controls("Soak", 3, "7")
	for _, s := range []string{"<title>Soak page 7</title>", "<h1>Soak</h1>", `<button type="button">Button 3</button>`, `name="sel3"`, `<a href="/item/3">Link 3</a>`} {
		if !strings.Contains(html, s) {
			t.Errorf("the page lacks %q:\n%s", s, html)
		}
	}
	if n := strings.Count(html, "<fieldset>"); n != 3 {
		t.Errorf("%d rows, want 3", n)
	}
	if strings.Contains(html, "Button 4") {
		t.Error("the page has a fourth row")
	}
}

func TestStart(t *testing.T) {
	s, err := Start(map[string]func(*http.Request) string{
		"/{$}":   func(r *http.Request) string { return Controls("Load", 2, r.URL.Query().Get("c")) },
		"/small": func(*http.Request) string { return "small" },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || !strings.HasSuffix(s.URL, "/") {
		t.Errorf("URL = %q, want http://127.0.0.1:P/", s.URL)
	}
	tests := []struct{ path, want string }{
		{"?c=1-2", Controls("Load", 2, "1-2")},
		{"small", "small"},
	}
	for _, tt := range tests {
		resp, err := http.Get(s.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != tt.want {
			t.Errorf("GET %s = %q, want %q", tt.path, body, tt.want)
		}
		if got := resp.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("GET %s: Cache-Control %q, want no-store", tt.path, got)
		}
	}
	resp, err := http.Get(s.URL + "other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /other: %s, want 404", resp.Status)
	}
}
