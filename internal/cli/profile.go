package cli

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiles are the profiling flags of a command.
type profiles struct {
	cpu, mem string
}

func (p *profiles) registerFlags(fs *flag.FlagSet) {
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of this process to the file")
	fs.StringVar(&p.mem, "memprofile", "", "write an allocation profile of this process to the file when it ends (sampled every 64 KiB: allocations of 1 MiB and more are all in it, with their sizes)")
}

// start starts the profiles asked for; the returned function writes them,
// saying on log why it could not.
func (p *profiles) start(log *slog.Logger) (stop func(), err error) {
	var cpu *os.File
	if p.cpu != "" {
		if cpu, err = os.Create(p.cpu); err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
	}
	if p.mem != "" {
		// An allocation of s bytes is sampled with probability
		// 1-exp(-s/rate): from 1 MiB, all but 1e-7 of them, each with
		// its size (the "bytes" tag of go tool pprof -tags).
		runtime.MemProfileRate = 64 << 10
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if p.mem != "" {
			f, err := os.Create(p.mem)
			if err != nil {
				log.Error("heap profile", "err", err)
				return
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				log.Error("heap profile", "err", err)
			}
		}
	}, nil
}
