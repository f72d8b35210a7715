package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/neardup/neardup/internal/manifest"
)

// The files BuildSeries returns.
const (
	SeriesHTMLFile  = "report.html"
	SeriesTrendFile = "report-trend.svg"
)

// SeriesMember is a member of a series as its report shows it: its name,
// its state (as `coordinator series list` says it) and, for a finished
// job, its manifest (nil for a compacted index, or a job not finished).
type SeriesMember struct {
	Name, State string
	Manifest    *manifest.Manifest
}

// seriesHosts is how many hosts the table of host rates follows.
const seriesHosts = 10

// BuildSeries renders the report of a series (dir names it) from its
// members, in their order: a page with the trend of the duplicates across
// the members that are finished jobs, as a chart and tables, and the chart
// as a file of its own. Equal members give equal files.
func BuildSeries(dir string, members []SeriesMember) (map[string][]byte, error) {
	var jobs []SeriesMember
	for _, m := range members {
		if m.Manifest != nil {
			jobs = append(jobs, m)
		}
	}
	trend := trendChart(jobs)
	p := newSeriesPage(dir, members, jobs, trend)
	out := p.html()
	return map[string][]byte{SeriesHTMLFile: out, SeriesTrendFile: trend}, nil
}

// weekRow is a member's row of the series table.
type weekRow struct {
	Name, State, Docs, Duplicates, Rate, Own, Earlier, Removed, RemovedShare, PairsAgainst string
}

// trendRow is a row of a table with a column per finished member: a
// host's duplicate rate in each, or a member's duplicates by the member
// of the kept document.
type trendRow struct {
	Name  string
	Cells []string
}

// seriesPage is what a series' report.html shows.
type seriesPage struct {
	Dir       string
	Cards     []card
	Trend     string // the chart, SVG drawn by this package, its data escaped
	Note      string
	Weeks     []weekRow
	Names     []string // of the members with a manifest, for the hosts table
	Hosts     []trendRow
	HostsNote string
	// Kept is, for each finished member (a row), how many of its
	// duplicates were dropped for a document of each member (a column
	// of Names), its own included.
	Kept     []trendRow
	KeptNote string
}

// earlierDuplicates splits a job's duplicates by whose document is kept in
// their place: its own, or an earlier job's. A manifest without rates
// counts them all as its own.
func earlierDuplicates(m *manifest.Manifest) (own, earlier int64) {
	if m.Rates == nil {
		return m.Counts.Duplicates, 0
	}
	for _, e := range m.Rates.Earlier {
		if e.Name == manifest.ThisJob {
			own += e.Duplicates
		} else {
			earlier += e.Duplicates
		}
	}
	return own, earlier
}

func newSeriesPage(dir string, members, jobs []SeriesMember, trend []byte) *seriesPage {
	p := &seriesPage{Dir: dir, Trend: string(trend)}
	for _, m := range members {
		r := weekRow{Name: m.Name, State: m.State}
		if man := m.Manifest; man != nil {
			c := man.Counts
			own, earlier := earlierDuplicates(man)
			r.Docs, r.Duplicates, r.Rate = groupDigits(c.Docs), groupDigits(c.Duplicates), percent(c.Duplicates, c.Docs)
			r.Own, r.Earlier, r.PairsAgainst = groupDigits(own), groupDigits(earlier), groupDigits(c.PairsAgainst)
			r.Removed, r.RemovedShare = "–", "–"
			if man.Rates != nil {
				r.Removed, r.RemovedShare = bytesText(man.Rates.Total.BytesRemoved), percent(man.Rates.Total.BytesRemoved, man.Rates.Total.Bytes)
			}
		}
		p.Weeks = append(p.Weeks, r)
	}
	p.Cards = []card{{"members", strconv.Itoa(len(members)), plural(int64(len(jobs)), "finished job", "finished jobs")}}
	if len(jobs) > 0 {
		last := jobs[len(jobs)-1]
		c := last.Manifest.Counts
		own, earlier := earlierDuplicates(last.Manifest)
		p.Cards = append(p.Cards,
			card{"latest", last.Name, groupDigits(c.Docs) + " documents"},
			card{"duplicates", groupDigits(c.Duplicates), percent(c.Duplicates, c.Docs) + " of " + last.Name + "'s documents"},
			card{"of earlier members", groupDigits(earlier), percent(earlier, c.Docs) + " dropped for an earlier member's document"},
			card{"within the member", groupDigits(own), percent(own, c.Docs) + " dropped for one of its own"})
	}
	for _, m := range jobs {
		p.Names = append(p.Names, m.Name)
	}
	for _, m := range jobs {
		row := trendRow{Name: m.Name}
		for _, col := range jobs {
			cell := "–"
			if r := m.Manifest.Rates; r != nil {
				name := col.Name
				if col.Name == m.Name {
					name = manifest.ThisJob
				}
				if i := slices.IndexFunc(r.Earlier, func(e manifest.Rate) bool { return e.Name == name }); i >= 0 {
					cell = groupDigits(r.Earlier[i].Duplicates)
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		p.Kept = append(p.Kept, row)
	}
	p.KeptNote = "Each row is a member's duplicates, by the member whose document is kept in their place (the diagonal: its own); – where that member is not an earlier one of the row's, or the row's manifest counts none (a version before rates were counted)."
	p.Note = "Each finished member's documents dropped, split by whose document is kept in their place: one of the member's own, or one of an earlier member's (the series matches every member against the finished ones before it). A member of an earlier version has no such split: all its duplicates count as its own."
	// The hosts with the most duplicates in the latest member, and their
	// rate in each member (– where the host is not among that member's
	// listed hosts).
	if len(jobs) > 0 && jobs[len(jobs)-1].Manifest.Rates != nil {
		for _, h := range jobs[len(jobs)-1].Manifest.Rates.Hosts {
			if len(p.Hosts) == seriesHosts {
				break
			}
			if h.Name == manifest.OtherHosts {
				continue
			}
			t := trendRow{Name: h.Name}
			for _, m := range jobs {
				rate := "–"
				if m.Manifest.Rates != nil {
					if i := slices.IndexFunc(m.Manifest.Rates.Hosts, func(r manifest.Rate) bool { return r.Name == h.Name }); i >= 0 {
						r := m.Manifest.Rates.Hosts[i]
						rate = percent(r.Duplicates, r.Docs)
					}
				}
				t.Cells = append(t.Cells, rate)
			}
			p.Hosts = append(p.Hosts, t)
		}
		p.HostsNote = fmt.Sprintf("The duplicate rate (documents dropped of the host's documents) of the %d hosts with the most duplicates in %s, in each member; – where the host is not among that member's %d listed hosts.",
			seriesHosts, jobs[len(jobs)-1].Name, manifest.TopHosts)
	}
	return p
}

// trendChart draws each finished member's duplicates, stacked: those
// dropped for one of its own documents, and those dropped for an earlier
// member's.
func trendChart(jobs []SeriesMember) []byte {
	own := make([]int64, len(jobs))
	earlier := make([]int64, len(jobs))
	var ticks []tick
	for i, m := range jobs {
		own[i], earlier[i] = earlierDuplicates(m.Manifest)
		ticks = append(ticks, tick{value: float64(i) + 0.5, label: m.Name})
	}
	h := histogram{
		id: "trend", title: "Duplicates of each member of the series",
		xTitle: "member", yTitle: "documents dropped",
		series: []series{
			{name: "own", label: "for one of its own documents", colour: colour(0), values: own},
			{name: "earlier", label: "for an earlier member's document", colour: colour(1), values: earlier},
		},
		ticks:       ticks,
		valueLabels: true,
		binName:     func(i int) string { return jobs[i].Name },
		emptyNote:   "no finished member",
	}
	return h.svg()
}
