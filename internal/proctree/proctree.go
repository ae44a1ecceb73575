// Package proctree reads process trees from /proc: every process under a
// few root PIDs, found by parent PID, with its resident memory. The
// benchmarks use it to say what a server costs with everything it started
// (the Playwright driver, every Chromium process), and to kill, by PID and
// start time, whatever of that tree outlives the server.
//
// It reads Linux's /proc and nothing else; elsewhere a tree is empty.
package proctree

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Proc is one process of a tree, read from /proc.
type Proc struct {
	PID  int
	PPID int
	Comm string
	// Start is the start time in clock ticks since boot: it tells a reused
	// PID apart.
	Start  uint64
	Zombie bool
	RSS    int64 // VmRSS, bytes; 0 for a zombie
}

// Tree is processes of one or more process trees. Sample gives them as they
// are at one moment, the roots first, then their descendants breadth first.
type Tree []Proc

// Sample walks /proc for every root and its descendants (by parent PID)
// and reads the VmRSS of each. Zombies are in it, marked: Live leaves them
// out.
func Sample(roots ...int) Tree {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	all := map[int]Proc{}
	children := map[int][]int{}
	for _, p := range paths {
		if pr, ok := readStat(p); ok {
			all[pr.PID] = pr
			children[pr.PPID] = append(children[pr.PPID], pr.PID)
		}
	}
	var t Tree
	seen := map[int]bool{} // a root may be another root's descendant
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		pr, ok := all[pid]
		if !ok || seen[pid] {
			continue
		}
		seen[pid] = true
		queue = append(queue, children[pid]...)
		pr.RSS = vmRSS(pid)
		t = append(t, pr)
	}
	return t
}

// Live is t without its zombies: they hold no memory and are about to go.
func (t Tree) Live() Tree {
	var out Tree
	for _, p := range t {
		if !p.Zombie {
			out = append(out, p)
		}
	}
	return out
}

// RSS sums the VmRSS of t, in bytes. Pages shared between processes count
// once per process, so it overstates what the tree costs the machine.
func (t Tree) RSS() int64 {
	var n int64
	for _, p := range t {
		n += p.RSS
	}
	return n
}

// PSS sums the Pss of t, in bytes, read now: each shared page is split among
// the processes that map it, so it adds up to what the tree really holds.
// It costs the kernel a walk of the page tables of every process, so it is
// for a few moments, not for a sampling loop.
func (t Tree) PSS() int64 {
	var n int64
	for _, p := range t {
		n += pss(p.PID)
	}
	return n
}

// Chromium counts the Chromium processes of t.
func (t Tree) Chromium() int {
	n := 0
	for _, p := range t {
		if p.Chromium() {
			n++
		}
	}
	return n
}

// Browsers counts the Chromium browser processes of t: those started
// without --type= (renderers, zygotes, GPU and utility processes carry
// one).
func (t Tree) Browsers() int {
	n := 0
	for _, p := range t {
		if p.Browser() {
			n++
		}
	}
	return n
}

// Browser reports whether p is a Chromium browser process: one started
// without --type= (renderers, zygotes, GPU and utility processes carry
// one).
func (p Proc) Browser() bool {
	if !p.Chromium() {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
	if err != nil || len(data) == 0 {
		return false
	}
	// Chromium rewrites the command line of the processes it forks into
	// one space-separated string.
	return !strings.Contains(string(data), "\x00--type=") && !strings.Contains(string(data), " --type=")
}

// Running counts the processes of t still running as themselves.
func (t Tree) Running() int {
	n := 0
	for _, p := range t {
		if p.Running() {
			n++
		}
	}
	return n
}

// KillLeft sends SIGKILL to every process of t still running as itself and
// returns how many it killed. Checking the start time first keeps it from
// killing a stranger that was given a PID of the tree after it ended.
func (t Tree) KillLeft() int {
	n := 0
	for _, p := range t {
		if p.Running() && syscall.Kill(p.PID, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// Chromium tells Chromium's processes (browser, zygotes, renderers, GPU,
// utility, crashpad handler) by their command name.
func (p Proc) Chromium() bool {
	c := strings.ToLower(p.Comm)
	return strings.Contains(c, "chrom") || strings.Contains(c, "headless_shell")
}

// Running reports whether p is still running as itself: the same PID and
// start time, and not a zombie.
func (p Proc) Running() bool {
	now, ok := readStat("/proc/" + strconv.Itoa(p.PID) + "/stat")
	return ok && now.Start == p.Start && !now.Zombie
}

// readStat reads a /proc/<pid>/stat file.
func readStat(path string) (Proc, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Proc{}, false
	}
	return parseStat(string(data))
}

// parseStat reads pid, comm, state, ppid and start time from the text of
// /proc/<pid>/stat.
func parseStat(s string) (Proc, bool) {
	// pid (comm) state ppid ... starttime is field 22; comm may hold spaces
	// and parentheses, so split at the last ')'.
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Proc{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return Proc{}, false
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return Proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return Proc{PID: pid, PPID: ppid, Comm: s[open+1 : end], Start: start, Zombie: f[0] == "Z"}, true
}

// vmRSS reads VmRSS from /proc/<pid>/status, in bytes (0 for a process that
// is gone or is a zombie).
func vmRSS(pid int) int64 {
	return statusKB("/proc/"+strconv.Itoa(pid)+"/status", "VmRSS:")
}

// pss reads Pss (proportional set size) from /proc/<pid>/smaps_rollup, in
// bytes (0 for a process that is gone).
func pss(pid int) int64 {
	return statusKB("/proc/"+strconv.Itoa(pid)+"/smaps_rollup", "Pss:")
}

// statusKB reads the line of path that starts with key, a figure in kB as
// /proc writes them, and returns it in bytes, or 0.
func statusKB(path, key string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
