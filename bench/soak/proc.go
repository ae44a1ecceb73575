package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// proc is one process of the tree under the server, read from /proc.
type proc struct {
	pid    int
	ppid   int
	comm   string
	start  uint64 // start time in clock ticks since boot: tells a reused PID apart
	zombie bool
	rss    int64 // bytes
}

// treeSample is the memory of the server and of its process tree at one
// moment.
type treeSample struct {
	serverRSS   int64 // bytes
	treeRSS     int64 // bytes
	driverRSS   int64 // the Playwright driver (node), bytes
	chromiumRSS int64 // all Chromium processes, bytes
	chromium    int   // Chromium processes in the tree
	procs       []proc
	// browser is the PID of the driver and of the Chromium browser process
	// it started: a change between samples is a restart.
	browser [2]int
}

// readStat reads pid, comm, ppid and start time from /proc/<pid>/stat.
func readStat(path string) (proc, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return proc{}, false
	}
	// pid (comm) state ppid ... starttime is field 22; comm may hold spaces
	// and parentheses, so split at the last ')'.
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return proc{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return proc{}, false
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return proc{pid: pid, ppid: ppid, comm: s[open+1 : end], start: start, zombie: f[0] == "Z"}, true
}

// vmRSS reads VmRSS from /proc/<pid>/status, in bytes (0 for a process that
// is gone or is a zombie).
func vmRSS(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// sampleTree walks /proc for root and every descendant (by PPid) and sums
// their VmRSS.
func sampleTree(root int) treeSample {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	all := map[int]proc{}
	children := map[int][]int{}
	for _, p := range paths {
		if pr, ok := readStat(p); ok {
			all[pr.pid] = pr
			children[pr.ppid] = append(children[pr.ppid], pr.pid)
		}
	}
	var s treeSample
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		pr, ok := all[pid]
		if !ok {
			continue
		}
		pr.rss = vmRSS(pid)
		s.procs = append(s.procs, pr)
		s.treeRSS += pr.rss
		if pid == root {
			s.serverRSS = pr.rss
		}
		switch {
		case isChromium(pr.comm):
			s.chromium++
			s.chromiumRSS += pr.rss
			if pr.ppid == s.browser[0] && s.browser[1] == 0 {
				s.browser[1] = pid
			}
		case pr.comm == "node":
			s.driverRSS += pr.rss
			if pr.ppid == root && s.browser[0] == 0 {
				s.browser[0] = pid
			}
		}
		queue = append(queue, children[pid]...)
	}
	return s
}

// isChromium tells Chromium's processes (browser, zygotes, renderers, GPU,
// utility, crashpad handler) by their command name.
func isChromium(comm string) bool {
	c := strings.ToLower(comm)
	return strings.Contains(c, "chrom") || strings.Contains(c, "headless_shell")
}

// killLeft sends SIGKILL to every process of procs still running as the
// same process (same PID and start time) and returns how many it killed.
func killLeft(procs []proc) int {
	n := 0
	for _, p := range procs {
		now, ok := readStat("/proc/" + strconv.Itoa(p.pid) + "/stat")
		if !ok || now.start != p.start || now.zombie {
			continue
		}
		if syscall.Kill(p.pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}
