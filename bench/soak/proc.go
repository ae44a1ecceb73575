package main

import "github.com/retrace-dev/retrace/internal/proctree"

// treeSample is the memory of the server and of its process tree at one
// moment.
type treeSample struct {
	serverRSS   int64 // bytes
	treeRSS     int64 // bytes
	driverRSS   int64 // the Playwright driver (node), bytes
	chromiumRSS int64 // all Chromium processes, bytes
	chromium    int   // Chromium processes in the tree
	procs       proctree.Tree
	// browser is the PID of the driver and of the Chromium browser process
	// it started: a change between samples is a restart.
	browser [2]int
}

// sampleTree reads the process tree of root, zombies included, and splits
// its VmRSS between the server, the driver and Chromium.
func sampleTree(root int) treeSample {
	s := treeSample{procs: proctree.Sample(root)}
	for _, pr := range s.procs {
		s.treeRSS += pr.RSS
		if pr.PID == root {
			s.serverRSS = pr.RSS
		}
		switch {
		case pr.Chromium():
			s.chromium++
			s.chromiumRSS += pr.RSS
			if pr.PPID == s.browser[0] && s.browser[1] == 0 {
				s.browser[1] = pr.PID
			}
		case pr.Comm == "node":
			s.driverRSS += pr.RSS
			if pr.PPID == root && s.browser[0] == 0 {
				s.browser[0] = pr.PID
			}
		}
	}
	return s
}
