//go:build pprof

package main

import (
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
)

// A binary built with -tags pprof serves net/http/pprof on
// $RETRACE_PPROF_ADDR, to profile the server's memory during a soak
// (bench/soak). Ordinary builds leave this file out.
func init() {
	if addr := os.Getenv("RETRACE_PPROF_ADDR"); addr != "" {
		runtime.MemProfileRate = 4096 // fine enough to see what each cycle keeps
		go http.ListenAndServe(addr, nil)
	}
}
