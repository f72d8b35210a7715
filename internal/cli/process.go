package cli

import (
	"flag"
	"log/slog"

	"github.com/neardup/neardup/internal/metrics"
)

// processFlags are what every command that runs tasks takes about its own
// process: logs, profiles and metrics.
type processFlags struct {
	logs logFlags
	prof profiles
	met  metricsFlag
}

func (p *processFlags) register(fs *flag.FlagSet) {
	p.logs.register(fs)
	p.prof.registerFlags(fs)
	p.met.register(fs)
}

// start starts the profiles and the metrics server asked for; stop ends
// them. On failure, code is the exit status: 2 for a profile file that
// cannot be created, 1 for a metrics address that cannot be served.
func (p *processFlags) start(log *slog.Logger) (m *metrics.Metrics, stop func(), code int, err error) {
	stopProfiles, err := p.prof.start(log)
	if err != nil {
		return nil, nil, 2, err
	}
	m, stopMetrics, err := p.met.serve(log)
	if err != nil {
		stopProfiles()
		return nil, nil, 1, err
	}
	return m, func() { stopMetrics(); stopProfiles() }, 0, nil
}
