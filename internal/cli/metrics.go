package cli

import (
	"flag"
	"fmt"
	"log/slog"
	"net"

	"github.com/neardup/neardup/internal/metrics"
)

// metricsFlag is the --metrics-addr flag of the commands that run tasks.
type metricsFlag struct{ addr string }

func (m *metricsFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", "", "serve Prometheus metrics at http://host:port/metrics (empty: none)")
}

// check reports an address that is not host:port.
func (m metricsFlag) check() error {
	if m.addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(m.addr); err != nil {
		return fmt.Errorf("--metrics-addr %q: want host:port: %w", m.addr, err)
	}
	return nil
}

// serve starts serving the metrics if asked to: nil metrics and a no-op
// stop otherwise.
func (m metricsFlag) serve(log *slog.Logger) (*metrics.Metrics, func(), error) {
	if m.addr == "" {
		return nil, func() {}, nil
	}
	reg := metrics.New()
	_, stop, err := reg.Serve(m.addr, log)
	if err != nil {
		return nil, nil, err
	}
	return reg, stop, nil
}
