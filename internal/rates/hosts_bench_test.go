package rates

import (
	"fmt"
	"testing"
)

// BenchmarkHostTally adds documents of distinct hosts (a crawl's worst
// case: every document its own host) to a tally holding MaxHosts hosts,
// one duplicate in four.
func BenchmarkHostTally(b *testing.B) {
	hosts := make([]string, 1<<20)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("host%07d.example", i)
	}
	b.ResetTimer()
	t := newHostTally(MaxHosts)
	for i := range b.N {
		t.add(hosts[i%len(hosts)], 100, 0, i%4 == 0)
	}
}

// BenchmarkHostTallyMerge merges eight parts' tallies in order, each of
// 12,700 distinct hosts (the 100k benchmark job's: every document its
// own host, a job of 101,471 hosts), into one of at most MaxHosts.
func BenchmarkHostTallyMerge(b *testing.B) {
	const parts, per = 8, 12700
	hosts := make([]string, parts*per)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("host%07d.example", i*7919%1000003)
	}
	for range b.N {
		b.StopTimer()
		tallies := make([]*hostTally, parts)
		for p := range tallies {
			tallies[p] = newHostTally(MaxHosts)
			for _, h := range hosts[p*per : (p+1)*per] {
				tallies[p].add(h, 100, 0, len(h)%4 == 0)
			}
		}
		b.StartTimer()
		for _, o := range tallies[1:] {
			tallies[0].merge(o)
		}
	}
}
