package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/storage"
)

// loadOrPlan resumes the job found in the work area when it has the same
// parameters and inputs, and plans a new one otherwise. jobName is the
// name asked for, "" for the one derived from the output's location when
// the job was planned (kept, so that a moved output resumes). The spec on
// disk holds the output as "." (the directory it is in); the spec returned
// holds its absolute path, the one workers are told.
func loadOrPlan(ctx context.Context, st *storage.Dir, jobName string, cc *checked) (*job.Spec, *job.Plan, bool, error) {
	params, inputs := cc.params, cc.inputs
	var old job.Spec
	err := readJSON(ctx, st, job.SpecFile, &old)
	if err == nil {
		var oldPlan job.Plan
		if err := readJSON(ctx, st, job.PlanFile, &oldPlan); err != nil {
			return nil, nil, false, fmt.Errorf("%s holds an unfinished job whose plan cannot be read (pass --overwrite to start again): %w", st.Root(), err)
		}
		if diff := specDiff(old, oldPlan, jobName, params, cc.derived, inputs, cc.kept); diff != "" {
			return nil, nil, false, fmt.Errorf("%s holds an unfinished job with %s: "+
				"rerun it with the same ones to resume, or pass --overwrite to start again", st.Root(), diff)
		}
		if old.Format > job.SpecFormat {
			return nil, nil, false, fmt.Errorf("%s holds an unfinished job of a later version of neardup (spec format %d; this one runs up to %d): "+
				"resume it with that version, or pass --overwrite to start again", st.Root(), old.Format, job.SpecFormat)
		}
		if old.Format < job.SpecFormat {
			// Begun by an earlier version: its tasks from now on run in this
			// version's format (the results it recorded are read as they are).
			old.Format = job.SpecFormat
			if err := writeJSON(ctx, st, job.SpecFile, old); err != nil {
				return nil, nil, false, err
			}
		}
		old.Out = st.Root()
		return &old, &oldPlan, true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, err
	}
	plan, err := job.MakePlan(ctx, inputs, params.ChunkBytes)
	if err != nil {
		return nil, nil, false, err
	}
	plan.Skipped = cc.skipped
	plan.FirstChunk = cc.derived.FirstChunk
	for i := range plan.Chunks {
		plan.Chunks[i].Index += plan.FirstChunk
	}
	if jobName == "" {
		jobName = "j" + strconv.FormatUint(xxhash.Sum64String(st.Root()), 16)
	}
	spec := &job.Spec{Job: jobName, Epoch: randomHex(8), Out: ".", Params: params, Derived: cc.derived, Kept: cc.kept, Format: job.SpecFormat}
	if err := writeJSON(ctx, st, job.PlanFile, plan); err != nil {
		return nil, nil, false, err
	}
	if err := writeJSON(ctx, st, job.SpecFile, spec); err != nil {
		return nil, nil, false, err
	}
	spec.Out = st.Root()
	return spec, &plan, false, nil
}

// specDiff names what differs between an unfinished job and the one asked
// for, "" when they are the same job.
func specDiff(old job.Spec, oldPlan job.Plan, jobName string, params job.Params, derived job.Derived, inputs []job.Input, kept *job.KeptOutput) string {
	if jobName != "" && old.Job != jobName {
		return fmt.Sprintf("another job name (%q, not %q)", old.Job, jobName)
	}
	if !reflect.DeepEqual(old.Params, params) {
		return "other parameters: " + strings.Join(fieldDiff(reflect.ValueOf(old.Params), reflect.ValueOf(params)), ", ")
	}
	if !reflect.DeepEqual(old.Derived, derived) {
		return "other earlier jobs (--against): " + strings.Join(fieldDiff(reflect.ValueOf(old.Derived), reflect.ValueOf(derived)), ", ")
	}
	if !reflect.DeepEqual(old.Kept, kept) {
		return fmt.Sprintf("another kept corpus (--write-kept, --kept-format): %s, now %s", keptString(old.Kept), keptString(kept))
	}
	if !reflect.DeepEqual(oldPlan.Inputs, inputs) {
		for i := range max(len(oldPlan.Inputs), len(inputs)) {
			switch {
			case i >= len(inputs):
				return fmt.Sprintf("other inputs: %s is no longer given", oldPlan.Inputs[i].Path)
			case i >= len(oldPlan.Inputs):
				return fmt.Sprintf("other inputs: %s was not an input", inputs[i].Path)
			case oldPlan.Inputs[i] != inputs[i]:
				return fmt.Sprintf("other inputs: %+v, now %+v", oldPlan.Inputs[i], inputs[i])
			}
		}
	}
	return ""
}

// fieldDiff names the fields of the structs a and b (of one type) that
// differ, as "Name OLD (now NEW)", looking into embedded structs (the
// groups of job.Params) for the fields that differ in them.
func fieldDiff(a, b reflect.Value) []string {
	var fields []string
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		switch f := a.Type().Field(i); {
		case reflect.DeepEqual(fa.Interface(), fb.Interface()):
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			fields = append(fields, fieldDiff(fa, fb)...)
		default:
			fields = append(fields, fmt.Sprintf("%s %v (now %v)", f.Name, fa.Interface(), fb.Interface()))
		}
	}
	return fields
}

// keptString names a kept corpus in messages.
func keptString(k *job.KeptOutput) string {
	if k == nil {
		return "none"
	}
	return fmt.Sprintf("%s as %s", redact.URL(k.Dir), k.Format)
}
