package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalComparesServers runs `retrace eval` as a user would, on two
// servers started from their commands (both this binary: the evaluation
// knows them only through MCP), and reads the side-by-side report.
func TestEvalComparesServers(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	cmd := exec.Command(binary, "eval", "--server", "first="+binary, "--server", "second="+binary,
		"--scenario", "rerender-button", "--k", "1", "--policies", "generic", "--styles", "recovery", "--out", out)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("retrace eval: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"| fault kind | first, generic, recovery | second, generic, recovery |", "| rerender | 100% (1/1) | 100% (1/1) |"} {
		if !strings.Contains(string(stdout), want) {
			t.Errorf("the printed comparison lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Servers []struct{ Name, Version, Adapter string }
		Runs    []struct {
			Server  string
			Reached bool
			Failed  bool
		}
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 2 || rep.Servers[0].Adapter != "retrace" || !strings.HasPrefix(rep.Servers[1].Version, "retrace ") {
		t.Errorf("servers in report.json: %+v", rep.Servers)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Server != "first" || rep.Runs[1].Server != "second" {
		t.Fatalf("runs in report.json: %+v", rep.Runs)
	}
	for _, r := range rep.Runs {
		if !r.Reached || !r.Failed {
			t.Errorf("%s: reached %v, met the fault %v; want both", r.Server, r.Reached, r.Failed)
		}
	}
}

// TestEvalServerErrors: a --server that cannot be evaluated stops the
// command before any run, with an error naming it.
func TestEvalServerErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		server, want string
	}{
		{"no-equals-sign", "NAME=COMMAND"},
		{"gone=/nonexistent/retrace-server", "server gone"},
		{"shell=sh -c 'exit 3'", "server shell"},
	} {
		out := t.TempDir()
		cmd := exec.Command(binary, "eval", "--server", c.server, "--k", "1", "--out", out)
		msg, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("--server %q: exit 0, want an error", c.server)
			continue
		}
		if !strings.Contains(string(msg), c.want) {
			t.Errorf("--server %q: the error does not say %q:\n%s", c.server, c.want, msg)
		}
	}
}
