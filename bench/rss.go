package main

import (
	"sync"
	"time"

	"github.com/retrace-dev/retrace/internal/proctree"
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
			if v := proctree.Sample(s.root).RSS(); v > 0 {
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
