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
