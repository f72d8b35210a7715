package control

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"
)

// progress reports a job's advance, by stage and over the whole job (see
// etaModel): as log events (msg "progress" every few seconds, "stage
// done" at each stage's end) when it has a logger, else a redrawn bar on
// a terminal (live), else a plain line every few seconds. Stages are the
// user's: the cluster stage's steps are one stage, "cluster".
type progress struct {
	w      io.Writer
	live   bool
	events *slog.Logger

	mu       sync.Mutex
	model    etaModel
	jobStart time.Time
	cur      *stageProgress // nil between stages
	took     map[string]time.Duration
	stop     chan struct{}
	wg       sync.WaitGroup
}

// stageProgress is what is known of the running stage.
type stageProgress struct {
	name         string // user-facing: map, reduce, gather, verify, cluster
	tasks, n     int    // planned and finished (done or failed); cluster: over its steps so far
	steps        int    // cluster: steps begun
	docs, bytes  int64  // read by its finished tasks (map)
	totalBytes   int64  // map: the input bytes of its tasks; 0 measures by tasks
	replayedN    int    // finished by an earlier run of the job
	replayedByte int64
	start        time.Time
}

// newProgress reports on w (a terminal when live), or, with events set,
// as events on that logger; with neither it reports nothing.
func newProgress(w io.Writer, live bool, events *slog.Logger) *progress {
	return &progress{w: w, live: live, events: events, took: map[string]time.Duration{}}
}

func (p *progress) enabled() bool { return p.w != nil || p.events != nil }

// interval is how often progress is reported.
func (p *progress) interval() time.Duration {
	if p.live && p.events == nil {
		return 200 * time.Millisecond
	}
	return 5 * time.Second
}

// start begins the reports of a job that started at jobStart and whose
// remaining time model estimates.
func (p *progress) start(jobStart time.Time, model etaModel) {
	if !p.enabled() {
		return
	}
	p.mu.Lock()
	p.jobStart, p.model = jobStart, model
	stop := make(chan struct{})
	p.stop = stop
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(p.interval())
		defer t.Stop()
		for {
			select {
			case <-stop: // not p.stop: finish sets it to nil, maybe before this runs
				return
			case <-t.C:
				p.mu.Lock()
				if p.cur != nil {
					p.report(false)
				}
				p.mu.Unlock()
			}
		}
	}()
}

// begin starts a stage of tasks tasks holding inputBytes of input (0 when
// not measured by bytes), or, for a step of the cluster stage, adds the
// step's tasks to that stage.
func (p *progress) begin(name string, tasks int, inputBytes int64) {
	if !p.enabled() {
		return
	}
	user := metricStage(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil && p.cur.name == user && user != name {
		p.cur.tasks += tasks
		p.cur.steps++
		return
	}
	p.endLocked()
	p.cur = &stageProgress{name: user, tasks: tasks, totalBytes: inputBytes, start: time.Now()}
	if user != name {
		p.cur.steps = 1
	}
}

// done counts a finished task that read docs documents and bytes of input;
// replayed: an earlier run of the job finished it.
func (p *progress) done(docs, bytes int64, replayed bool) {
	if !p.enabled() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return
	}
	p.cur.n++
	p.cur.docs += docs
	p.cur.bytes += bytes
	if replayed {
		p.cur.replayedN++
		p.cur.replayedByte += bytes
	}
}

// end ends the stage named name; a cluster step leaves its stage running
// until the next stage begins or finish.
func (p *progress) end(name string) {
	if !p.enabled() || metricStage(name) != name {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
}

// finish ends the running stage and the reports.
func (p *progress) finish() {
	if !p.enabled() {
		return
	}
	p.mu.Lock()
	p.endLocked()
	stop := p.stop
	p.stop = nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		p.wg.Wait()
	}
}

// endLocked reports the running stage's end and records what it took.
func (p *progress) endLocked() {
	if p.cur == nil {
		return
	}
	s := p.cur
	frac, base := s.fractions()
	if done := frac - base; done > 0 {
		// What the whole stage would have taken in this run.
		p.took[s.name] = time.Duration(float64(time.Since(s.start)) / done)
	}
	p.report(true)
	p.cur = nil
}

// fractions are the share of the stage finished, and the share an earlier
// run of the job had finished: of its input bytes, else of its tasks. The
// cluster stage, planned step by step, has no fraction (-1).
func (s *stageProgress) fractions() (frac, base float64) {
	switch {
	case s.steps > 0:
		return -1, 0
	case s.totalBytes > 0:
		return min(float64(s.bytes)/float64(s.totalBytes), 1), float64(s.replayedByte) / float64(s.totalBytes)
	case s.tasks > 0:
		return float64(s.n) / float64(s.tasks), float64(s.replayedN) / float64(s.tasks)
	}
	return 1, 0
}

// report reports the running stage: final at its end.
func (p *progress) report(final bool) {
	s := p.cur
	now := time.Now()
	stageEl, jobEl := now.Sub(s.start), now.Sub(p.jobStart)
	frac, base := s.fractions()
	est := p.model.estimate(etaInput{stage: s.name, elapsed: stageEl, frac: frac, base: base, took: p.took, finished: final})
	if p.events != nil {
		p.event(s, final, stageEl, jobEl, est)
		return
	}
	p.line(s, final, stageEl, jobEl, est)
}

// event logs the report as one event.
func (p *progress) event(s *stageProgress, final bool, stageEl, jobEl time.Duration, est estimate) {
	attrs := []slog.Attr{slog.String("stage", s.name), slog.Int("stage_number", p.model.number(s.name)), slog.Int("stages", len(p.model.stages)),
		slog.Int("tasks_done", s.n), slog.Int("tasks_total", s.tasks)}
	if s.steps > 0 {
		attrs = append(attrs, slog.Int("steps", s.steps))
	}
	if s.docs > 0 || s.bytes > 0 {
		attrs = append(attrs, slog.Int64("docs", s.docs), slog.Int64("bytes", s.bytes),
			slog.Float64("mb_per_s", round(float64(s.bytes)/1e6/max(stageEl.Seconds(), 1e-9), 1)))
	}
	attrs = append(attrs, slog.Float64("stage_elapsed_s", round(stageEl.Seconds(), 1)))
	if est.stageOK && !final {
		attrs = append(attrs, slog.Float64("stage_eta_s", round(est.stageLeft.Seconds(), 1)))
	}
	attrs = append(attrs, slog.Float64("elapsed_s", round(jobEl.Seconds(), 1)))
	if est.jobOK {
		attrs = append(attrs, slog.Float64("eta_s", round(est.jobLeft.Seconds(), 1)),
			slog.Float64("fraction", round(jobEl.Seconds()/max(jobEl.Seconds()+est.jobLeft.Seconds(), 1e-9), 3)))
	}
	msg := "progress"
	switch {
	case final && s.n < s.tasks:
		// Interrupted, or failed: some tasks neither done nor failed.
		msg = "stage stopped"
	case final:
		msg = "stage done"
	}
	p.events.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
}

// line writes the report as a line of text, or redraws the bar.
func (p *progress) line(s *stageProgress, final bool, stageEl, jobEl time.Duration, est estimate) {
	line := fmt.Sprintf("%-7s %d/%d tasks", s.name, s.n, s.tasks)
	if s.docs > 0 {
		line += fmt.Sprintf("  %d docs", s.docs)
	}
	if s.bytes > 0 && stageEl > 0 {
		line += fmt.Sprintf("  %.1f MB/s", float64(s.bytes)/1e6/stageEl.Seconds())
	}
	if est.stageOK && !final {
		line += "  ETA " + est.stageLeft.Round(time.Second).String()
	}
	line += "  " + stageEl.Round(100*time.Millisecond).String()
	line += fmt.Sprintf("  | job %d/%d", p.model.number(s.name), len(p.model.stages))
	if est.jobOK {
		line += fmt.Sprintf(" %d%%  ETA %s", int(100*jobEl.Seconds()/max(jobEl.Seconds()+est.jobLeft.Seconds(), 1e-9)),
			est.jobLeft.Round(time.Second))
	}
	if !p.live {
		fmt.Fprintln(p.w, line)
		return
	}
	const width = 24
	filled := 0
	if s.tasks > 0 {
		filled = width * s.n / s.tasks
	}
	bar := "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "] "
	end := ""
	if final {
		end = "\n"
	}
	fmt.Fprintf(p.w, "\r\033[K%s%s%s", bar, line, end)
}

// round rounds x to digits decimals.
func round(x float64, digits int) float64 {
	m := math.Pow(10, float64(digits))
	return math.Round(x*m) / m
}
