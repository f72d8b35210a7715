package control

import (
	"context"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stages"
)

// etaModel estimates the time a job has left from what its stages showed
// so far.
//
// A later stage's cost is taken to be proportional to map's. Map's whole
// cost M is measured while it runs: the time it has run over the share of
// its input bytes finished in this run (what an earlier run of the job
// finished does not count), M = elapsed / share. Each stage s after the
// running one is expected to take ratio[s]·k·M, and the job's end (the
// index, the example pairs, the report) ratio["finish"]·k·M. The ratios
// were measured on whole jobs of three sizes and are interpolated at the
// job's input size (ratiosFor), unless the newest earlier job of a series
// (--against) ran the same stages on an input of about the same size: its
// manifest's stage times give them (earlierRatios). k corrects them once stages after map
// have finished: (A + M/4) / (E + M/4), A their actual times and E their
// expected ones, bounded to [1/4, 4]; 1 before. The running stage's own remaining
// time blends its rate (elapsed over share done, times the share left)
// with its expected time less its elapsed, weighted by its share done;
// the cluster stage, planned step by step, has no share, so its expected
// time less its elapsed is all there is. Until map has finished a share
// of its input in this run, the job's remaining time is unknown.
type etaModel struct {
	stages []string           // the job's stages, in order, as the user sees them
	ratio  map[string]float64 // expected seconds per second of map, by stage, and finishStage
}

// finishStage names the job's end in etaModel.ratio: what the coordinator
// does after the cluster stage.
const finishStage = "finish"

// mapStageName is the stage whose cost the others are measured by.
const mapStageName = "map"

// newETAModel is the model of the job spec reading inputBytes of input:
// its stages, and the ratios measured for its kind and size of job
// (ratiosFor).
func newETAModel(spec *job.Spec, inputBytes int64) etaModel {
	var names []string
	for _, s := range stages.Of(spec) {
		names = append(names, s.Name)
	}
	return etaModel{stages: names, ratio: ratiosFor(spec.Params.Gather == job.GatherOn, inputBytes)}
}

// ratioPoint is the stages' costs per second of map measured on a whole
// job reading inputBytes of input.
type ratioPoint struct {
	inputBytes float64
	ratio      map[string]float64
}

// measuredRatios are the stages' costs per second of map measured on
// whole embedded jobs (two in-process workers on 2 quiet cores) of the
// generated corpora of gzipped JSONL, each the mean of two runs
// (2026-11-25, `--log-format json`, the "stage done" events): with the
// gather stage (on by default above 64 MiB of text), on 100,000
// documents (115.6 MB: map 2.7 and 2.8 s, reduce 0.4 and 0.3, gather 0.4
// and 0.5, verify 1.2 and 1.1, cluster 0.7 and 0.7, the end 0.1 and
// 0.15) and 1,000,000 (1.16 GB: map 28.7 and 27.3 s, reduce 5.3 and 5.0,
// gather 6.3 and 6.6, verify 11.6 and 11.4, cluster 5.7 and 5.7, the end
// 0.7 and 0.8), and 10,000,000 (11.59 GB, one run after verify's block
// nested loops and parallel loading, `--quiet`: map 234 s, reduce 52,
// gather 63, verify 106, cluster 55; the end 8 in the run before, of map
// 289 s); without it, on 100,000 documents (an
// earlier build, docs/performance.md: map 2.3 s, reduce 0.26, verify
// 0.35, cluster 0.68, the end about 0.3). Under load the stages after
// map took up to 1.9 times map at 1M, against 1.05 quiet: the ETA is
// for a machine the job has to itself.
func measuredRatios(gather bool) []ratioPoint {
	if !gather {
		return []ratioPoint{{100e6, map[string]float64{"reduce": 0.11, "verify": 0.15, "cluster": 0.29, finishStage: 0.12}}}
	}
	return []ratioPoint{
		{115.6e6, map[string]float64{"reduce": 0.13, "gather": 0.16, "verify": 0.42, "cluster": 0.25, finishStage: 0.045}},
		{1.16e9, map[string]float64{"reduce": 0.18, "gather": 0.23, "verify": 0.41, "cluster": 0.20, finishStage: 0.028}},
		{11.59e9, map[string]float64{"reduce": 0.22, "gather": 0.27, "verify": 0.45, "cluster": 0.23, finishStage: 0.027}},
	}
}

// optionalRatios are the costs per second of map of the stages a job
// runs only when asked: the paragraph pass (--paragraphs) and the kept
// corpus (--write-kept, each input in its own format: a JSONL file's
// lines copied, recompressed). Measured 2026-11-28 on whole embedded jobs
// with both (`coordinator --quiet --paragraphs --write-kept DIR`, the
// manifest's stage times) on the generated corpora of gzipped JSONL,
// the machine shared (load 5): 100,000 documents (100.2 MB; two runs:
// map 5.1 and 4.9 s, paragraphs 0.55 and 0.79, write-kept 4.3 and 2.9)
// and 1,000,000 (1.0 GB, one run: map 55.2 s, paragraphs 4.9,
// write-kept 19.8). Their ratios with map hold as the core stages' do;
// those stages' own ratios are measuredRatios'. The two stages before
// map (--shingle-after-strip) need none: until map has run, the job's
// time left is unknown.
func optionalRatios() []ratioPoint {
	return []ratioPoint{
		{100.2e6, map[string]float64{"paragraphs": 0.13, "write-kept": 0.71}},
		{1.0e9, map[string]float64{"paragraphs": 0.09, "write-kept": 0.36}},
	}
}

// ratiosFor interpolates the measured ratios, of the core stages and of
// the optional ones, at inputBytes.
func ratiosFor(gather bool, inputBytes int64) map[string]float64 {
	ratio := interpolate(measuredRatios(gather), inputBytes)
	for s, r := range interpolate(optionalRatios(), inputBytes) {
		ratio[s] = r
	}
	return ratio
}

// interpolate interpolates the ratios of points, in the order of their
// input sizes, at inputBytes, linearly in the logarithm of the input's
// size, holding the ends beyond them. The map is new.
func interpolate(points []ratioPoint, inputBytes int64) map[string]float64 {
	x := math.Log(max(float64(inputBytes), 1))
	i := sort.Search(len(points), func(i int) bool { return math.Log(points[i].inputBytes) >= x })
	switch {
	case i == 0:
		return maps.Clone(points[0].ratio)
	case i == len(points):
		return maps.Clone(points[len(points)-1].ratio)
	}
	lo, hi := points[i-1], points[i]
	t := (x - math.Log(lo.inputBytes)) / (math.Log(hi.inputBytes) - math.Log(lo.inputBytes))
	out := map[string]float64{}
	for k, v := range lo.ratio {
		out[k] = v + t*(hi.ratio[k]-v)
	}
	return out
}

// etaInput is what is known of a job at one moment.
type etaInput struct {
	stage   string        // the running stage
	elapsed time.Duration // since it began
	// frac is the share of the running stage finished, base the share an
	// earlier run of the job had finished; frac is -1 when unknown.
	frac, base float64
	// took is what each finished stage took (or would have, had an
	// earlier run not done part of it); finished: the running stage has
	// just finished, and is in took.
	took     map[string]time.Duration
	finished bool
}

// estimate is the time left of the running stage and of the job, each
// when known.
type estimate struct {
	stageLeft, jobLeft time.Duration
	stageOK, jobOK     bool
}

// estimate estimates the time left at in.
func (m etaModel) estimate(in etaInput) estimate {
	var e estimate
	own, ownOK := time.Duration(0), false // the running stage's time left at its own rate
	if done := in.frac - in.base; in.frac >= 0 && done > 0 {
		own, ownOK = time.Duration(float64(in.elapsed)*(1-in.frac)/done), true
	}
	mapFull, mapOK := in.took[mapStageName]
	if in.stage == mapStageName {
		mapFull, mapOK = 0, ownOK
		if ownOK {
			mapFull = time.Duration(float64(in.elapsed) / (in.frac - in.base))
		}
	}
	running := in.stage
	if in.finished {
		running = ""
	}
	k := m.correction(in.took, running, in.elapsed, mapFull)
	expect := func(s string) time.Duration { return time.Duration(m.ratio[s] * k * float64(mapFull)) }
	switch {
	case in.finished:
		e.stageLeft, e.stageOK = 0, true
	case in.stage == mapStageName || !mapOK:
		e.stageLeft, e.stageOK = own, ownOK
	case ownOK:
		w := in.frac
		e.stageLeft, e.stageOK = time.Duration(w*float64(own)+(1-w)*float64(max(expect(in.stage)-in.elapsed, 0))), true
	default:
		e.stageLeft, e.stageOK = max(expect(in.stage)-in.elapsed, 0), true
	}
	if !mapOK || !e.stageOK {
		return e
	}
	e.jobLeft, e.jobOK = e.stageLeft+expect(finishStage), true
	if i := slices.Index(m.stages, in.stage); i >= 0 {
		for _, s := range m.stages[i+1:] {
			e.jobLeft += expect(s)
		}
	}
	return e
}

// correction is the actual over the expected time of the stages after
// map: the finished ones, and the running one (elapsed so far) once it
// has run longer than expected (what it will take is at least that);
// shrunk towards 1 by a quarter of map's time, so that one short stage
// does not swing the stages left, and bounded to [1/4, 4]; 1 when none
// counts.
func (m etaModel) correction(took map[string]time.Duration, running string, elapsed, mapFull time.Duration) float64 {
	var actual, expected float64
	for s, d := range took {
		if s == mapStageName || s == running || m.ratio[s] == 0 {
			continue
		}
		actual += float64(d)
		expected += m.ratio[s] * float64(mapFull)
	}
	if r := m.ratio[running]; running != mapStageName && r > 0 && float64(elapsed) > r*float64(mapFull) {
		actual += float64(elapsed)
		expected += r * float64(mapFull)
	}
	if expected <= 0 || actual <= 0 {
		return 1
	}
	prior := float64(mapFull) / 4
	return min(max((actual+prior)/(expected+prior), 0.25), 4)
}

// number is the stage's place in the job, from 1; 0 for a stage it does
// not know.
func (m etaModel) number(name string) int {
	return slices.Index(m.stages, name) + 1
}

// earlierRatios are the stages' costs per second of map as the newest of
// the earlier jobs (--against: the one with the highest first chunk)
// recorded them in its manifest, when it ran the same stages on an input
// within a factor of 4 of inputBytes (the ratios change with the size);
// the job's end is not in a manifest's stages and keeps its measured
// ratio. ok is false when there is no such job (a compacted index has no
// manifest). from names the job.
func earlierRatios(ctx context.Context, earlier []earlierJob, stages []string, inputBytes int64) (ratio map[string]float64, from string, ok bool) {
	var newest *earlierJob
	for i := range earlier {
		if e := &earlier[i]; e.index != nil && (newest == nil || e.index.FirstChunk > newest.index.FirstChunk) {
			newest = e
		}
	}
	if newest == nil {
		return nil, "", false
	}
	m, err := manifest.Read(ctx, newest.dir)
	if err != nil || m.Status != manifest.StatusComplete || len(m.Stages) != len(stages) ||
		m.Counts.InputBytes*4 < inputBytes || m.Counts.InputBytes > 4*inputBytes {
		return nil, "", false
	}
	var mapSeconds float64
	for i, s := range m.Stages {
		if s.Name != stages[i] {
			return nil, "", false
		}
		if s.Name == mapStageName {
			mapSeconds = s.Seconds
		}
	}
	if mapSeconds <= 0 {
		return nil, "", false
	}
	ratio = map[string]float64{}
	for _, s := range m.Stages {
		if s.Name != mapStageName {
			ratio[s.Name] = s.Seconds / mapSeconds
		}
	}
	return ratio, newest.loc, true
}
