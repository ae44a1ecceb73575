package proctree

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// Fields 3 to 22 after the command name; the 20th of them is the start
	// time.
	rest := " S 7 7 7 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10"
	tests := []struct {
		name, stat string
		want       Proc
		ok         bool
	}{
		{"plain", "42 (sleep)" + rest, Proc{PID: 42, PPID: 7, Comm: "sleep", Start: 987654}, true},
		{"spaces and parentheses in the name", "42 (a (b) c))" + rest, Proc{PID: 42, PPID: 7, Comm: "a (b) c)", Start: 987654}, true},
		{"zombie", "42 (chrome) Z" + rest[2:], Proc{PID: 42, PPID: 7, Comm: "chrome", Start: 987654, Zombie: true}, true},
		{"cut short", "42 (sleep) S 7 7", Proc{}, false},
		{"no name", "42 sleep" + rest, Proc{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStat(tt.stat)
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseStat = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestChromium(t *testing.T) {
	for comm, want := range map[string]bool{
		"chrome": true, "chromium": true, "Chromium": true, "chrome_crashpad": true, "headless_shell": true,
		"node": false, "retrace": false, "sleep": false,
	} {
		if got := (Proc{Comm: comm}).Chromium(); got != want {
			t.Errorf("Proc{Comm: %q}.Chromium() = %v, want %v", comm, got, want)
		}
	}
}

// start runs name with args as a child of the test and stops it when the
// test ends.
func start(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// find returns the process of t with pid.
func find(t *testing.T, tree Tree, pid int) Proc {
	t.Helper()
	i := slices.IndexFunc(tree, func(p Proc) bool { return p.PID == pid })
	if i < 0 {
		t.Fatalf("no process %d in the tree of the test: %+v", pid, tree)
	}
	return tree[i]
}

func TestSampleAndKillLeft(t *testing.T) {
	sleep := start(t, "sleep", "5")
	tree := Sample(os.Getpid())
	if len(tree) < 2 || tree[0].PID != os.Getpid() {
		t.Fatalf("Sample(test) = %+v, want the test first and its child", tree)
	}
	child := find(t, tree, sleep.Process.Pid)
	if child.PPID != os.Getpid() || child.Comm != "sleep" || child.RSS <= 0 || !child.Running() {
		t.Errorf("the child is %+v (running %v), want sleep under the test, with VmRSS", child, child.Running())
	}
	if tree[0].RSS <= 0 || tree.RSS() < tree[0].RSS+child.RSS {
		t.Errorf("RSS: the test %d, the tree %d", tree[0].RSS, tree.RSS())
	}
	if got := tree.PSS(); got <= 0 {
		t.Errorf("PSS = %d, want more than 0", got)
	}
	if tree.Chromium() != 0 || tree.Browsers() != 0 {
		t.Errorf("Chromium, Browsers = %d, %d; want 0, 0", tree.Chromium(), tree.Browsers())
	}

	if n := (Tree{child}).KillLeft(); n != 1 {
		t.Errorf("KillLeft = %d, want 1", n)
	}
	// Killed and not yet waited for, the child is a zombie: in the tree,
	// marked, but not live and not running.
	var zombie Proc
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && !zombie.Zombie; time.Sleep(20 * time.Millisecond) {
		zombie = find(t, Sample(os.Getpid()), child.PID)
	}
	if !zombie.Zombie || zombie.RSS != 0 || zombie.Running() || child.Running() {
		t.Errorf("after KillLeft the child is %+v (running %v), want a zombie with no VmRSS", zombie, child.Running())
	}
	if slices.ContainsFunc(Sample(os.Getpid()).Live(), func(p Proc) bool { return p.PID == child.PID }) {
		t.Error("Live keeps the zombie")
	}
	if err := sleep.Wait(); err == nil {
		t.Error("sleep exited by itself, not killed")
	}
	if (Tree{child}).Running() != 0 {
		t.Error("the child still counts as running after it was reaped")
	}
	if n := (Tree{child}).KillLeft(); n != 0 {
		t.Errorf("KillLeft on a process that is gone = %d, want 0", n)
	}
}

// TestBrowsers runs a shell under the name chrome, once as a browser and
// once with --type=renderer, and counts one browser of two Chromium
// processes.
func TestBrowsers(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	data, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	chrome := filepath.Join(t.TempDir(), "chrome")
	if err := os.WriteFile(chrome, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// "; true" keeps the shell from replacing itself with sleep.
	browser := start(t, chrome, "-c", "sleep 5; true")
	renderer := start(t, chrome, "-c", "sleep 5; true", "chrome", "--type=renderer")
	// The kernel names the process after the executable once it has run.
	var tree Tree
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tree = Sample(browser.Process.Pid, renderer.Process.Pid)
		if tree.Chromium() == 2 {
			break
		}
	}
	if tree.Chromium() != 2 || tree.Browsers() != 1 {
		t.Errorf("Chromium, Browsers = %d, %d; want 2, 1 in %+v", tree.Chromium(), tree.Browsers(), tree)
	}
	if live := tree.Live(); len(live) != len(tree) {
		t.Errorf("Live dropped %d processes that are not zombies", len(tree)-len(live))
	}
}
