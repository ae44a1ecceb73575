// Package benchpage serves the generated pages the soak and load
// benchmarks drive: a form of labelled controls in rows, on a loopback
// port of its own, so that a run needs no fixture files and its pages do
// not change under it.
package benchpage

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Server serves pages on a loopback port.
type Server struct {
	URL string // http://127.0.0.1:P/, ending in a slash
	srv *http.Server
}

// Start serves each pattern of pages (a ServeMux pattern such as "/{$}")
// with the HTML its function returns for the request, on 127.0.0.1. Pages
// are not cached, so every navigation loads one anew.
func Start(pages map[string]func(*http.Request) string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	for pattern, html := range pages {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.Write([]byte(html(r)))
		})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return &Server{URL: "http://" + ln.Addr().String() + "/", srv: srv}, nil
}

// Close stops the listener and its connections.
func (s *Server) Close() { s.srv.Close() }

// Controls is a form of rows labelled rows, each with a button, a text
// input, a select and a link, under the title "<name> page <tag>" (tag
// tells the loads of a run apart). A click on a button writes into a
// status line, so every click changes the DOM the way a real one would.
func Controls(name string, rows int, tag string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>%s page %s</title></head><body>", name, tag)
	fmt.Fprintf(&b, `<h1>%s</h1><p role="status" id="status">Nothing clicked yet</p><form onsubmit="return false">`, name)
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, `<fieldset><legend>Row %d</legend>`, i)
		fmt.Fprintf(&b, `<button type="button">Button %d</button> `, i)
		fmt.Fprintf(&b, `<label>Input %d <input name="in%d" value="value %d"></label> `, i, i, i)
		fmt.Fprintf(&b, `<label>Select %d <select name="sel%d"><option>One</option><option selected>Two</option><option>Three</option></select></label> `, i, i)
		fmt.Fprintf(&b, `<a href="/item/%d">Link %d</a></fieldset>`, i, i)
	}
	b.WriteString(`</form><script>
let clicks = 0;
document.addEventListener("click", (e) => {
  const button = e.target.closest("button");
  if (button) document.getElementById("status").textContent = button.textContent + " clicked (" + (++clicks) + ")";
});
</script></body></html>`)
	return b.String()
}
