package control

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
)

// TestETAModel checks the estimate of the time left, stage by stage, on a
// model whose later stages cost a fixed share of map.
func TestETAModel(t *testing.T) {
	m := etaModel{stages: []string{"map", "reduce", "verify", "cluster"},
		ratio: map[string]float64{"reduce": 0.2, "verify": 0.3, "cluster": 0.5, finishStage: 0.1}}
	s := time.Second
	tests := []struct {
		name               string
		in                 etaInput
		stageLeft, jobLeft time.Duration // -1: unknown
	}{
		{name: "map, nothing finished yet", in: etaInput{stage: "map", elapsed: 3 * s, frac: 0},
			stageLeft: -1, jobLeft: -1},
		// Map's whole cost is 20 s: the later stages and the end 1.1 of it.
		{name: "map half done", in: etaInput{stage: "map", elapsed: 10 * s, frac: 0.5},
			stageLeft: 10 * s, jobLeft: 10*s + 22*s},
		{name: "map a quarter done", in: etaInput{stage: "map", elapsed: 5 * s, frac: 0.25},
			stageLeft: 15 * s, jobLeft: 15*s + 22*s},
		// Half of map was done by an earlier run: the quarter done in 5 s
		// of this run measures it.
		{name: "map resumed", in: etaInput{stage: "map", elapsed: 5 * s, frac: 0.75, base: 0.5},
			stageLeft: 5 * s, jobLeft: 5*s + 22*s},
		// reduce expected 4 s: 2 s in at half done, its own rate and its
		// expectation agree.
		{name: "reduce half done as expected", in: etaInput{stage: "reduce", elapsed: 2 * s, frac: 0.5,
			took: map[string]time.Duration{"map": 20 * s}},
			stageLeft: 2 * s, jobLeft: 2*s + 6*s + 10*s + 2*s},
		// At 3/4 done after 6 s (own rate: 2 s left; expected: 0 left)
		// the own rate weighs 3/4; having run 6 s, not 4, it scales the
		// stages left by (6+5)/(4+5).
		{name: "reduce slower than expected", in: etaInput{stage: "reduce", elapsed: 6 * s, frac: 0.75,
			took: map[string]time.Duration{"map": 20 * s}},
			stageLeft: 1500 * time.Millisecond, jobLeft: 1500*time.Millisecond + 18*s*11/9},
		// reduce took 8 s, not 4: the stages left are expected to take
		// (8+5)/(4+5) of their share (shrunk by a quarter of map's 20 s).
		{name: "verify after a slow reduce", in: etaInput{stage: "verify", elapsed: 0, frac: 0,
			took: map[string]time.Duration{"map": 20 * s, "reduce": 8 * s}},
			stageLeft: 6 * s * 13 / 9, jobLeft: (6*s + 10*s + 2*s) * 13 / 9},
		// A stage that has just finished counts in the correction.
		{name: "reduce just finished, slow", in: etaInput{stage: "reduce", elapsed: 8 * s, frac: 1, finished: true,
			took: map[string]time.Duration{"map": 20 * s, "reduce": 8 * s}},
			stageLeft: 0, jobLeft: (6*s + 10*s + 2*s) * 13 / 9},
		// The correction is bounded to 4.
		{name: "bounded correction", in: etaInput{stage: "verify", elapsed: 0, frac: 0,
			took: map[string]time.Duration{"map": 20 * s, "reduce": 400 * s}},
			stageLeft: 24 * s, jobLeft: 24*s + 40*s + 8*s},
		// The cluster stage has no share done: expected less elapsed.
		{name: "cluster", in: etaInput{stage: "cluster", elapsed: 4 * s, frac: -1,
			took: map[string]time.Duration{"map": 20 * s, "reduce": 4 * s, "verify": 6 * s}},
			stageLeft: 6 * s, jobLeft: 6*s + 2*s},
		// 15 s where 10 were expected: (4+6+15+5)/(4+6+10+5) = 1.2.
		{name: "cluster past its expected time", in: etaInput{stage: "cluster", elapsed: 15 * s, frac: -1,
			took: map[string]time.Duration{"map": 20 * s, "reduce": 4 * s, "verify": 6 * s}},
			stageLeft: 0, jobLeft: 2 * s * 12 / 10},
		// A resumed job whose map was all done before: no measure of
		// map, so only the running stage's own rate.
		{name: "map done by an earlier run", in: etaInput{stage: "reduce", elapsed: 2 * s, frac: 0.5},
			stageLeft: 2 * s, jobLeft: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := m.estimate(tt.in)
			check := func(what string, got time.Duration, ok bool, want time.Duration) {
				t.Helper()
				switch {
				case want < 0 && ok:
					t.Errorf("%s left %v, want unknown", what, got)
				case want >= 0 && !ok:
					t.Errorf("%s left unknown, want %v", what, want)
				case want >= 0 && (got-want > time.Millisecond || want-got > time.Millisecond):
					t.Errorf("%s left %v, want %v", what, got, want)
				}
			}
			check("stage", e.stageLeft, e.stageOK, tt.stageLeft)
			check("job", e.jobLeft, e.jobOK, tt.jobLeft)
		})
	}
}

// TestRatiosFor checks the interpolation of the measured ratios in the
// logarithm of the input's size.
func TestRatiosFor(t *testing.T) {
	points := measuredRatios(true)
	tests := []struct {
		name   string
		bytes  int64
		verify float64
	}{
		{"below the smallest job", 1000, points[0].ratio["verify"]},
		{"the smallest job", int64(points[0].inputBytes), points[0].ratio["verify"]},
		{"between the first two, in the logarithm", int64(math.Sqrt(points[0].inputBytes * points[1].inputBytes)), (points[0].ratio["verify"] + points[1].ratio["verify"]) / 2},
		{"the largest job", int64(points[2].inputBytes), points[2].ratio["verify"]},
		{"beyond it", 1e12, points[2].ratio["verify"]},
	}
	for _, tt := range tests {
		if got := ratiosFor(true, tt.bytes)["verify"]; math.Abs(got-tt.verify) > 1e-6 {
			t.Errorf("%s (%d bytes): verify ratio %.4f, want %.4f", tt.name, tt.bytes, got, tt.verify)
		}
	}
	if r := ratiosFor(false, 1e9); r["gather"] != 0 || r["verify"] == 0 {
		t.Errorf("without gather: %v", r)
	}
}

// TestEveryStageHasARatio checks that each stage after map of every job
// the options make (the gather stage or not, the paragraph pass, the kept
// corpus, the stages before map of --shingle-after-strip), at every size,
// has a cost in the ETA's model: one without counts as free, and the
// ETA of a job running it ends before the job.
func TestEveryStageHasARatio(t *testing.T) {
	for _, gather := range []job.Gather{job.GatherOn, job.GatherOff, job.GatherSets} {
		for _, kept := range []*job.KeptOutput{nil, {Dir: "/kept", Format: "auto"}} {
			for _, paragraphs := range []bool{false, true} {
				for _, strip := range []int{0, 5} {
					spec := &job.Spec{Params: job.DefaultParams(), Kept: kept}
					spec.Params.Gather, spec.Params.Paragraphs, spec.Params.ShingleAfterStrip = gather, paragraphs, strip
					for _, size := range []int64{1e6, 3e8, 1e11} {
						m := newETAModel(spec, size)
						after := slices.Index(m.stages, mapStageName)
						for _, s := range append(m.stages[after+1:], finishStage) {
							if m.ratio[s] <= 0 {
								t.Errorf("gather %s, kept %v, paragraphs %v, strip %d, %d bytes: stage %s has no cost in the ETA (ratio %g)",
									gather, kept != nil, paragraphs, strip, size, s, m.ratio[s])
							}
						}
					}
				}
			}
		}
	}
}

// TestEarlierRatios checks which earlier job of a series gives the
// stages' costs: the newest, when it ran the same stages on an input of
// about the same size.
func TestEarlierRatios(t *testing.T) {
	ctx := context.Background()
	stages := []string{"map", "reduce", "verify", "cluster"}
	timings := func(names ...string) []manifest.StageTiming {
		var out []manifest.StageTiming
		for i, n := range names {
			out = append(out, manifest.StageTiming{Name: n, Seconds: float64(10 / (i + 1))})
		}
		return out
	}
	type earlier struct {
		firstChunk int
		man        *manifest.Manifest // nil: none (a compacted index)
	}
	job := func(input int64, st []manifest.StageTiming) *manifest.Manifest {
		m := &manifest.Manifest{Status: manifest.StatusComplete, Stages: st}
		m.Counts.InputBytes = input
		return m
	}
	partial := func(m *manifest.Manifest) *manifest.Manifest { m.Status = manifest.StatusPartial; return m }
	tests := []struct {
		name    string
		earlier []earlier
		want    map[string]float64 // nil: none
	}{
		{name: "no earlier job"},
		{name: "the newest of two", earlier: []earlier{
			{10, job(1000, timings(stages...))},
			{0, job(1000, []manifest.StageTiming{{Name: "map", Seconds: 1}, {Name: "reduce", Seconds: 9}, {Name: "verify", Seconds: 9}, {Name: "cluster", Seconds: 9}})}},
			want: map[string]float64{"reduce": 0.5, "verify": 0.3, "cluster": 0.2}},
		{name: "other stages", earlier: []earlier{{0, job(1000, timings("map", "reduce", "gather", "verify", "cluster"))}}},
		{name: "a much smaller job", earlier: []earlier{{0, job(200, timings(stages...))}}},
		{name: "a much larger job", earlier: []earlier{{0, job(5000, timings(stages...))}}},
		{name: "no manifest", earlier: []earlier{{0, nil}}},
		{name: "partial", earlier: []earlier{{0, partial(job(1000, timings(stages...)))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var jobs []earlierJob
			for _, e := range tt.earlier {
				d, err := storage.Open(ctx, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				if e.man != nil {
					if err := manifest.Write(ctx, d, e.man); err != nil {
						t.Fatal(err)
					}
				}
				jobs = append(jobs, earlierJob{loc: d.Root(), dir: d, index: &index.Index{FirstChunk: e.firstChunk}})
			}
			got, _, ok := earlierRatios(ctx, jobs, stages, 1000)
			if ok != (tt.want != nil) {
				t.Fatalf("ratios %v (%v), want %v", got, ok, tt.want)
			}
			for s, w := range tt.want {
				if math.Abs(got[s]-w) > 1e-9 {
					t.Errorf("%s: ratio %v, want %v", s, got[s], w)
				}
			}
		})
	}
}
