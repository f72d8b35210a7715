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
	"github.com/neardup/neardup/internal/stage/reduce"
	"github.com/neardup/neardup/internal/stage/verify"
)

// Of returns the sequence of stages of a job with params p.
func Of(p job.Params) []stage.Stage {
	return sequence(p.Gather == job.GatherOn)
}

// sequence is the registry: every stage, in order; gather only when on.
func sequence(withGather bool) []stage.Stage {
	s := []stage.Stage{mapper.Stage(), reduce.Stage()}
	if withGather {
		s = append(s, gather.Stage())
	}
	return append(s, verify.Stage(), cluster.Stage())
}

// Lookup returns the stage a task of the named stage (or step) belongs to.
func Lookup(name string) (stage.Stage, bool) {
	for _, s := range sequence(true) {
		if s.Steps == nil && name == s.Name || s.Steps != nil && strings.HasPrefix(name, s.Name+"-") {
			return s, true
		}
	}
	return stage.Stage{}, false
}
