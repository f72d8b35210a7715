package accuracy

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/pkg/records"
)

// Criteria of the multilingual check on planted near copies.
const (
	// PlantedThreshold is the threshold at which planted pairs must be
	// listed.
	PlantedThreshold = 0.8
	// MinPlantedRecall is the least share of the planted pairs of every
	// language that a run at PlantedThreshold must list.
	MinPlantedRecall = 0.99
)

// MultilingualReport is the outcome of MeasureMultilingual.
type MultilingualReport struct {
	Command []string            `json:"command"`
	Started time.Time           `json:"started"`
	Corpus  MultilingualSummary `json:"corpus"`
	// Runs hold the whole job's Result and, in Languages, one per
	// language.
	Runs []Run `json:"runs"`
	// Pass says whether every checked run meets the criteria in every
	// language (see MeasureMultilingual).
	Pass bool `json:"pass"`
}

// MultilingualSummary describes a multilingual corpus and its truth.
type MultilingualSummary struct {
	Config corpus.MultilingualConfig `json:"config"`
	Dir    string                    `json:"dir,omitempty"` // empty when it was temporary
	Files  int                       `json:"files"`
	Docs   int                       `json:"docs"`
	// MinJ is the least similarity of the ground truth; CrossPairs counts
	// its pairs of documents in two languages.
	MinJ            float64           `json:"min_j"`
	CrossPairs      int               `json:"cross_language_pairs"`
	Languages       []LanguageSummary `json:"languages"`
	GenerateSeconds float64           `json:"generate_seconds"`
	TruthSeconds    float64           `json:"truth_seconds"`
}

// LanguageSummary describes the documents of one language.
type LanguageSummary struct {
	corpus.Language
	// EditUnit is what near copies have edited: words or graphemes.
	EditUnit string              `json:"edit_unit"`
	Docs     int                 `json:"docs"`
	Kinds    map[corpus.Kind]int `json:"kinds"`
	// MedianTokens is the median number of tokens of a document under the
	// job's tokenizer; ShortDocs counts documents under ShortWords tokens.
	MedianTokens int `json:"median_tokens"`
	ShortDocs    int `json:"short_docs"`
	// TruePairs counts the pairs with J >= MinJ by bin.
	TruePairs []Bin `json:"true_pairs"`
	// Planted are the base-to-copy pairs of planted families.
	Planted Planted `json:"planted"`
}

// Planted describes the base-to-copy pairs of a language's planted
// families (near copies with corpus.PlantedEditRate of their words or
// graphemes edited): their number, mean edit rate and exact similarities.
type Planted struct {
	Pairs    int     `json:"pairs"`
	EditRate float64 `json:"mean_edit_rate"`
	MinJ     float64 `json:"min_j"`
	MedianJ  float64 `json:"median_j"`
	MaxJ     float64 `json:"max_j"`
}

// LanguageResult is the accuracy of a run on one language's documents.
type LanguageResult struct {
	Language string  `json:"language"`
	Result   *Result `json:"result"`
	// Planted counts the language's planted pairs, PlantedListed those
	// that pairs/ lists.
	Planted       int      `json:"planted_pairs"`
	PlantedListed int      `json:"planted_listed"`
	Failures      []string `json:"failures"`
}

// PlantedRecall is PlantedListed/Planted, or 1 when there is no planted
// pair.
func (l *LanguageResult) PlantedRecall() float64 { return ratio(l.PlantedListed, l.Planted) }

// language is what the measurement knows of one language: its truth and
// its planted pairs, by index into the whole corpus's truth.
type language struct {
	code    string
	truth   *Truth
	planted [][2]int32
	rates   []float64 // edit rate of each planted copy
}

// MeasureMultilingual generates the multilingual corpus c (one mixed
// crawl), computes its exact ground truth under the job's shingling, runs
// the job once per method and threshold, and measures each run per
// language. o says how, as for Measure; o.Corpus and o.ProseDir are not
// used.
//
// A checked run passes when the whole job has precision 1 and, in every
// language: precision 1, pair recall at least MinRecallAbove for
// J >= threshold + 0.05 (Result.CheckAbove), and, in a run at
// PlantedThreshold, at least MinPlantedRecall of the planted pairs listed.
func MeasureMultilingual(ctx context.Context, o Options, c corpus.MultilingualConfig) (*MultilingualReport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rep := &MultilingualReport{Command: o.Command, Started: time.Now().UTC()}
	tmp, err := os.MkdirTemp("", "neardup-accuracy-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	start := time.Now()
	m, err := corpus.NewMultilingual(c)
	if err != nil {
		return nil, err
	}
	prep, err := o.prepare(m, tmp, start, log)
	if err != nil {
		return nil, err
	}
	truth := prep.truth
	rep.Corpus = MultilingualSummary{Config: c, Dir: prep.dir, Files: len(prep.files), Docs: m.Len(), MinJ: truth.MinJ,
		GenerateSeconds: prep.generateSeconds, TruthSeconds: prep.truthSeconds}
	for _, p := range truth.Pairs {
		if truth.Docs[p.A].Language != truth.Docs[p.B].Language {
			rep.Corpus.CrossPairs++
		}
	}
	truths := make([]corpus.Truth, m.Len())
	for i := range truths {
		truths[i] = m.Truth(i)
	}
	langs := languagesOf(m.Languages(), truths, truth)
	for k, l := range m.Languages() {
		rep.Corpus.Languages = append(rep.Corpus.Languages, summariseLanguage(l, truths, truth, langs[k]))
	}

	rep.Runs, err = o.runAll(ctx, prep.files, tmp, log, func(run *Run, threshold float64, pairs []records.Pair, clusters []records.ClusterRecord) error {
		var err error
		if run.Result, err = Evaluate(truth, threshold, pairs, clusters); err != nil {
			return err
		}
		run.Failures = run.Result.CheckAbove()
		listed := listedPlanted(truth, langs, pairs)
		for _, l := range langs {
			lr, err := l.measure(threshold, pairs, clusters, listed)
			if err != nil {
				return err
			}
			for _, f := range lr.Failures {
				run.Failures = append(run.Failures, l.code+": "+f)
			}
			run.Languages = append(run.Languages, *lr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Pass = passed(rep.Runs)
	return rep, nil
}

// languagesOf splits the truth t of documents with the ground truth
// truths by language, and finds each language's planted pairs.
func languagesOf(langs []corpus.Language, truths []corpus.Truth, t *Truth) []language {
	var out []language
	for _, l := range langs {
		lang := language{code: l.Code, truth: t.Subset(func(d Doc) bool { return d.Language == l.Code })}
		for _, tr := range truths {
			if tr.Language != l.Code || tr.Family != corpus.FamilyPlanted || tr.Kind != corpus.KindNear {
				continue
			}
			a, okA := t.Index(tr.Base)
			b, okB := t.Index(tr.ID)
			if okA && okB {
				lang.planted = append(lang.planted, [2]int32{a, b})
				lang.rates = append(lang.rates, tr.EditRate)
			}
		}
		out = append(out, lang)
	}
	return out
}

// summariseLanguage describes the documents of l.
func summariseLanguage(l corpus.Language, truths []corpus.Truth, t *Truth, lang language) LanguageSummary {
	s := LanguageSummary{Language: l, EditUnit: "words", Kinds: map[corpus.Kind]int{}}
	if l.Graphemes() {
		s.EditUnit = "graphemes"
	}
	for _, tr := range truths {
		if tr.Language == l.Code {
			s.Kinds[tr.Kind]++
		}
	}
	var tokens []int
	for _, d := range lang.truth.Docs {
		s.Docs++
		tokens = append(tokens, d.Words)
		if d.Words < ShortWords {
			s.ShortDocs++
		}
	}
	if len(tokens) > 0 {
		slices.Sort(tokens)
		s.MedianTokens = tokens[len(tokens)/2]
	}
	r, _ := Evaluate(lang.truth, t.MinJ, nil, nil) // threshold MinJ cannot fail
	s.TruePairs = r.Bins
	s.Planted = Planted{Pairs: len(lang.planted)}
	if len(lang.planted) == 0 {
		return s
	}
	js := make([]float64, 0, len(lang.planted))
	for k, ab := range lang.planted {
		js = append(js, t.Jaccard(ab[0], ab[1]))
		s.Planted.EditRate += lang.rates[k]
	}
	s.Planted.EditRate /= float64(len(js))
	slices.Sort(js)
	s.Planted.MinJ, s.Planted.MedianJ, s.Planted.MaxJ = js[0], js[len(js)/2], js[len(js)-1]
	return s
}

// listedPlanted returns the planted pairs of every language that pairs
// lists, by pairKey in t.
func listedPlanted(t *Truth, langs []language, pairs []records.Pair) map[uint64]bool {
	planted := map[uint64]bool{}
	for _, l := range langs {
		for _, ab := range l.planted {
			planted[pairKey(ab[0], ab[1])] = false
		}
	}
	for _, p := range pairs {
		a, okA := t.Index(p.AID)
		b, okB := t.Index(p.BID)
		if _, ok := planted[pairKey(a, b)]; ok && okA && okB {
			planted[pairKey(a, b)] = true
		}
	}
	return planted
}

// measure evaluates a run at threshold on the language's documents: the
// rows of pairs that name two of them, and its planted pairs.
func (l language) measure(threshold float64, pairs []records.Pair, clusters []records.ClusterRecord, listed map[uint64]bool) (*LanguageResult, error) {
	var own []records.Pair
	for _, p := range pairs {
		_, okA := l.truth.Index(p.AID)
		_, okB := l.truth.Index(p.BID)
		if okA && okB {
			own = append(own, p)
		}
	}
	r, err := Evaluate(l.truth, threshold, own, clusters)
	if err != nil {
		return nil, err
	}
	lr := &LanguageResult{Language: l.code, Result: r, Failures: r.CheckAbove(), Planted: len(l.planted)}
	for _, ab := range l.planted {
		if listed[pairKey(ab[0], ab[1])] {
			lr.PlantedListed++
		}
	}
	if threshold == PlantedThreshold {
		if v := lr.PlantedRecall(); v < MinPlantedRecall {
			lr.Failures = append(lr.Failures, fmt.Sprintf("planted pair recall %.4f (%d of %d), want >= %.2f",
				v, lr.PlantedListed, lr.Planted, MinPlantedRecall))
		}
	}
	return lr, nil
}
