package pipeline

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress reports a stage's advance: a redrawn bar on a terminal, a line
// every few seconds otherwise.
type progress struct {
	w    io.Writer
	live bool

	mu          sync.Mutex
	stage       string
	total, n    int
	docs, bytes int64
	start, last time.Time
	stop        chan struct{}
	wg          sync.WaitGroup
}

func newProgress(w io.Writer, live bool) *progress { return &progress{w: w, live: live} }

func (p *progress) begin(stage string, total int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	p.stage, p.total, p.n, p.docs, p.bytes = stage, total, 0, 0, 0
	p.start, p.last = time.Now(), time.Now()
	p.stop = make(chan struct{})
	p.mu.Unlock()
	every := 5 * time.Second
	if p.live {
		every = 200 * time.Millisecond
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.print(false)
			}
		}
	}()
}

func (p *progress) done(docs, bytes int64) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	p.n++
	p.docs += docs
	p.bytes += bytes
	p.mu.Unlock()
}

func (p *progress) end() {
	if p.w == nil || p.stop == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.stop = nil
	p.print(true)
}

func (p *progress) print(final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	el := time.Since(p.start)
	line := fmt.Sprintf("%-7s %d/%d tasks", p.stage, p.n, p.total)
	if p.docs > 0 {
		line += fmt.Sprintf("  %d docs", p.docs)
	}
	if p.bytes > 0 && el > 0 {
		line += fmt.Sprintf("  %.1f MB/s", float64(p.bytes)/1e6/el.Seconds())
	}
	if p.n > 0 && p.n < p.total {
		eta := time.Duration(float64(el) / float64(p.n) * float64(p.total-p.n))
		line += "  ETA " + eta.Round(time.Second).String()
	}
	line += "  " + el.Round(100*time.Millisecond).String()
	if p.live {
		const width = 24
		filled := 0
		if p.total > 0 {
			filled = width * p.n / p.total
		}
		bar := "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "] "
		end := ""
		if final {
			end = "\n"
		}
		fmt.Fprintf(p.w, "\r\033[K%s%s%s", bar, line, end)
		return
	}
	fmt.Fprintln(p.w, line)
}
