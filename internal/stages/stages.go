// Package stages is the sequence of a job's stages and the workers'
// registry of them: Of gives the coordinator a job's stages, Lookup gives
// a worker the stage of a task, and Local runs a whole job in this
// process. Each stage is its own package under internal/stage.
package stages

import (
	"strings"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/stage/cluster"
	"github.com/neardup/neardup/internal/stage/gather"
	"github.com/neardup/neardup/internal/stage/mapper"
	"github.com/neardup/neardup/internal/stage/paragraphs"
	"github.com/neardup/neardup/internal/stage/reduce"
	"github.com/neardup/neardup/internal/stage/verify"
	"github.com/neardup/neardup/internal/stage/writekept"
)

// Of returns the sequence of stages of the job spec: the paragraph pass
// only with --paragraphs, write-kept only when it writes a kept corpus
// (Spec.Kept).
func Of(spec *job.Spec) []stage.Stage {
	return sequence(spec.Params.Gather == job.GatherOn, spec.Kept != nil, spec.Params.Paragraphs, spec.Params.ShingleAfterStrip != 0)
}

// sequence is the registry: every stage, in order; gather, write-kept,
// the paragraph pass and the count of the units left out of the sketches
// (--shingle-after-strip: before map) only when on.
func sequence(withGather, withKept, withParagraphs, withStrip bool) []stage.Stage {
	var s []stage.Stage
	if withStrip {
		s = append(s, mapper.StripUnitsStage(), paragraphs.StripCountStage())
	}
	s = append(s, mapper.Stage())
	if withParagraphs {
		s = append(s, paragraphs.Stage())
	}
	s = append(s, reduce.Stage())
	if withGather {
		s = append(s, gather.Stage())
	}
	s = append(s, verify.Stage(), cluster.Stage())
	if withKept {
		s = append(s, writekept.Stage())
	}
	return s
}

// Lookup returns the stage a task of the named stage (or step) belongs to.
func Lookup(name string) (stage.Stage, bool) {
	for _, s := range sequence(true, true, true, true) {
		if s.Steps == nil && name == s.Name || s.Steps != nil && strings.HasPrefix(name, s.Name+"-") {
			return s, true
		}
	}
	return stage.Stage{}, false
}
