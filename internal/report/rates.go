package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/manifest"
)

// rateRow is a row of the tables of where the duplicates are.
type rateRow struct {
	Name, Docs, Duplicates, Rate, Removed, RemovedShare string
	// RepeatedShare is the share of its text in repeated units (with
	// --paragraphs: ratesView.Repeated).
	RepeatedShare string
	// Other marks a row that sums the rows not listed.
	Other bool
}

// ratesView is the report's section on where the duplicates are.
type ratesView struct {
	Note                  string
	Hosts, Files, Earlier []rateRow
	HostsNote, FilesNote  string
	EarlierNote           string
	// Repeated: the rows of hosts and files give the share of their text
	// in repeated units (the job ran --paragraphs).
	Repeated bool
}

// newRateRow describes r.
func newRateRow(r manifest.Rate) rateRow {
	return rateRow{
		Name: r.Name, Docs: groupDigits(r.Docs), Duplicates: groupDigits(r.Duplicates),
		Rate: percent(r.Duplicates, r.Docs), Removed: bytesText(r.BytesRemoved), RemovedShare: percent(r.BytesRemoved, r.Bytes),
		RepeatedShare: percent(r.RepeatedBytes, r.Bytes),
	}
}

// shownFiles is how many input files the report lists; the manifest
// lists them all.
const shownFiles = 20

// newRatesView describes the manifest's rates; nil for a manifest
// without (of an earlier version).
func newRatesView(r *manifest.Rates) *ratesView {
	if r == nil {
		return nil
	}
	v := &ratesView{Repeated: r.Repeated}
	t := r.Total
	v.Note = fmt.Sprintf("%s of %s documents are dropped (%s), with %s of their %s of text (%s): by the host of their URL, by input file and by whose document is kept in their place.",
		groupDigits(t.Duplicates), groupDigits(t.Docs), percent(t.Duplicates, t.Docs),
		bytesText(t.BytesRemoved), bytesText(t.Bytes), percent(t.BytesRemoved, t.Bytes))
	for _, h := range r.Hosts {
		row := newRateRow(h)
		row.Other = h.Name == manifest.OtherHosts
		v.Hosts = append(v.Hosts, row)
	}
	hosts := plural(r.HostCount, "host", "hosts")
	if r.HostCountEstimated {
		hosts = "About " + hosts
	}
	v.HostsNote = fmt.Sprintf("%s in all; the %d with the most duplicates are listed, the others summed. Rate: the host's documents dropped; text: the share of its text bytes.",
		hosts, manifest.TopHosts)
	if r.Repeated {
		v.HostsNote += fmt.Sprintf(" Repeated: the share of its text in lines or paragraphs that two documents or more hold (--paragraphs; %s of all the text).", percent(t.RepeatedBytes, t.Bytes))
	}
	if r.HostsBound > 0 {
		v.HostsNote += fmt.Sprintf(" The job has more hosts than the coordinator tallies one by one: a listed host's row may lack up to %s of its duplicates and their documents, which the other hosts' row holds.", groupDigits(r.HostsBound))
	}
	files := slices.Clone(r.Files)
	slices.SortStableFunc(files, func(a, b manifest.Rate) int {
		return cmp.Or(cmp.Compare(b.Duplicates, a.Duplicates), cmp.Compare(b.BytesRemoved, a.BytesRemoved))
	})
	if len(files) > shownFiles {
		other := manifest.Rate{Name: "(" + plural(int64(len(files)-shownFiles), "more file", "more files") + ")"}
		for _, f := range files[shownFiles:] {
			other.Docs += f.Docs
			other.Bytes += f.Bytes
			other.Duplicates += f.Duplicates
			other.BytesRemoved += f.BytesRemoved
			other.RepeatedBytes += f.RepeatedBytes
		}
		files = append(files[:shownFiles], other)
		v.FilesNote = fmt.Sprintf("The %d input files with the most duplicates; manifest.json lists all %s (rates.files).", shownFiles, groupDigits(int64(len(r.Files))))
	}
	for i, f := range files {
		row := newRateRow(f)
		row.Other = len(r.Files) > shownFiles && i == len(files)-1
		v.Files = append(v.Files, row)
	}
	for _, e := range r.Earlier {
		row := newRateRow(e)
		if e.Name != manifest.ThisJob {
			// An earlier job's documents are never dropped: its row
			// counts this job's documents dropped for one of them.
			row.Rate, row.RemovedShare = percent(e.Duplicates, t.Docs), ""
		}
		v.Earlier = append(v.Earlier, row)
	}
	if len(r.Earlier) > 1 {
		names := make([]string, 0, len(r.Earlier)-1)
		for _, e := range r.Earlier[1:] {
			names = append(names, e.Name)
		}
		v.EarlierNote = "Each of this job's duplicates counts in the row of the job whose document is kept in its place: this job's own, or one of the earlier jobs (" +
			strings.Join(names, ", ") + "). An earlier job's rate is the share of this job's documents dropped for one of its documents; its documents column counts its own documents."
	} else {
		v.EarlierNote = "The job was matched against no earlier job (--against, --series): every kept document is its own."
	}
	return v
}
