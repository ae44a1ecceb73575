package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssSampler records the peak resident memory of a process and all its
// descendants (a server, its driver, and every Chromium process), sampled
// from /proc.
type rssSampler struct {
	root int
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	peak int64 // bytes
}

func sampleRSS(root int, every time.Duration) *rssSampler {
	s := &rssSampler{root: root, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if v := treeRSS(s.root); v > 0 {
				s.mu.Lock()
				s.peak = max(s.peak, v)
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Peak stops sampling and returns the peak in bytes.
func (s *rssSampler) Peak() int64 {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// treeRSS sums VmRSS over root and its descendants.
func treeRSS(root int) int64 {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may contain spaces, so cut at ')'.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		pid, _ := strconv.Atoi(strings.Fields(s[:i])[0])
		children[ppid] = append(children[ppid], pid)
	}
	var total int64
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		total += rssOf(pid)
		queue = append(queue, children[pid]...)
	}
	return total
}

func rssOf(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
