package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// perKind is how many controls of each kind the page has: buttons, text
// inputs, selects and links, 200 in all.
const perKind = 50

// pageServer serves the soak page on a loopback port.
type pageServer struct {
	url string
	srv *http.Server
}

// startPage serves the generated page at / on 127.0.0.1.
func startPage() (*pageServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte(pageHTML(r.URL.Query().Get("cycle"))))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return &pageServer{url: "http://" + ln.Addr().String() + "/", srv: srv}, nil
}

// Close stops the listener and its connections.
func (p *pageServer) Close() { p.srv.Close() }

// pageHTML is a form of 200 labelled controls. A click on a button writes
// into a status line, so every click changes the DOM the way a real one
// would.
func pageHTML(cycle string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>Soak page %s</title></head><body>", cycle)
	b.WriteString(`<h1>Soak</h1><p role="status" id="status">Nothing clicked yet</p><form onsubmit="return false">`)
	for i := 1; i <= perKind; i++ {
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
