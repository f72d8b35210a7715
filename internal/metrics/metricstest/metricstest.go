// Package metricstest reads a Prometheus endpoint back for tests.
package metricstest

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Samples are the values of an exposition by series: `name` or
// `name{label="value",...}` (labels sorted by name). A histogram gives
// name_count and name_sum.
type Samples map[string]float64

// Scrape gets http://addr/metrics and parses it.
func Scrape(addr string) (Samples, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return Parse(resp.Body)
}

// Parse reads the text exposition format.
func Parse(r io.Reader) (Samples, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := Samples{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			key := Series(name, labels(m)...)
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Untyped != nil:
				out[key] = m.Untyped.GetValue()
			case m.Histogram != nil:
				out[Series(name+"_count", labels(m)...)] = float64(m.Histogram.GetSampleCount())
				out[Series(name+"_sum", labels(m)...)] = m.Histogram.GetSampleSum()
			}
		}
	}
	return out, nil
}

// Series names a series: Series("x", "stage", "map") is `x{stage="map"}`.
func Series(name string, labelPairs ...string) string {
	if len(labelPairs) == 0 {
		return name
	}
	var parts []string
	for i := 0; i+1 < len(labelPairs); i += 2 {
		parts = append(parts, fmt.Sprintf("%s=%q", labelPairs[i], labelPairs[i+1]))
	}
	sort.Strings(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

func labels(m *dto.Metric) []string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName(), l.GetValue())
	}
	return out
}
