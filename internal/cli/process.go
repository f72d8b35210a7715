package cli

import (
	"flag"
	"log/slog"
	"os"

	"github.com/neardup/neardup/internal/gctune"
	"github.com/neardup/neardup/internal/metrics"
)

// processFlags are what every command that runs tasks takes about its own
// process: logs, profiles, metrics and the garbage collector.
type processFlags struct {
	logs logFlags
	prof profiles
	met  metricsFlag
	gc   gctune.Settings
}

func (p *processFlags) register(fs *flag.FlagSet) {
	p.logs.register(fs)
	p.prof.registerFlags(fs)
	p.met.register(fs)
	fs.IntVar(&p.gc.Percent, "gc-percent", 0, "collect garbage when the heap has grown this many percent over the live heap (GOGC); 0: GOGC if set, else 200, a larger heap for less CPU than Go's 100")
	fs.Int64Var(&p.gc.LimitMiB, "memory-limit-mib", 0, "soft memory limit of the process, in MiB (GOMEMLIMIT), near which it collects more often; 0: GOMEMLIMIT if set, else none if GOGC is set, else three quarters of the memory of its container (cgroup limit) or machine; -1: none")
}

// start sets the garbage collector and starts the profiles and the
// metrics server asked for; stop ends them. On failure, code is the exit
// status: 2 for a bad collector setting or a profile file that cannot be
// created, 1 for a metrics address that cannot be served.
func (p *processFlags) start(log *slog.Logger) (m *metrics.Metrics, stop func(), code int, err error) {
	if err := p.gc.Check(); err != nil {
		return nil, nil, 2, err
	}
	if gc, err := gctune.Apply(p.gc, os.Getenv); err != nil {
		log.Warn("garbage collector: "+err.Error(), "settings", gc.String())
	} else {
		log.Debug("garbage collector", "settings", gc.String())
	}
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
