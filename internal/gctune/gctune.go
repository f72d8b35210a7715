// Package gctune sets the garbage collector of a process that runs
// neardup's tasks. Go's defaults (GOGC=100, no memory limit) collect
// each time the heap doubles over what is live; a task's live heap is
// small beside what it allocates (documents, shingle sets, pages of
// Parquet), so a job spends 5-10% of its CPU collecting. A process here
// collects when its heap has grown Percent% over the live heap (200 by
// default: at 400 the heap's growth cost more in fresh pages than the
// collections it saved), and, so that the larger heap cannot take the
// memory of its container or machine, more often as it nears a soft
// limit: by default three quarters of the memory of its container (its
// cgroup's limit) or, outside one, of its machine. Under that limit a
// live heap collects more often than at Go's defaults only past three
// eighths of that memory, where Go's doubling heap was already near all
// of it.
package gctune

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// DefaultPercent is the GOGC of a process whose settings and environment
// name none.
const DefaultPercent = 200

// limitShare is the share of its container's or machine's memory that a
// process's soft limit is by default.
const limitShare = 0.75

// Settings are a process's collector settings, as its flags give them.
type Settings struct {
	// Percent is the heap's growth over the live heap, in percent, that
	// starts a collection (GOGC); 0: GOGC's if set, else DefaultPercent.
	Percent int
	// LimitMiB is the soft memory limit (GOMEMLIMIT), in MiB; 0:
	// GOMEMLIMIT's if set, else none when GOGC is set (Go tuned the
	// usual way is left as it is), else limitShare of the memory of the
	// container or machine; -1: none.
	LimitMiB int64
}

// Check reports a setting that is not one.
func (s Settings) Check() error {
	switch {
	case s.Percent < 0 || s.Percent > math.MaxInt32: // the runtime takes an int32
		return fmt.Errorf("--gc-percent %d: not a percentage from 1 to %d (0 for the default)", s.Percent, math.MaxInt32)
	case s.LimitMiB < -1:
		return fmt.Errorf("--memory-limit-mib %d: not a size (0 for the default, -1 for none)", s.LimitMiB)
	case s.LimitMiB > math.MaxInt64>>20:
		return fmt.Errorf("--memory-limit-mib %d: too large", s.LimitMiB)
	}
	return nil
}

// Applied is what Apply set, and where each value came from.
type Applied struct {
	Percent     int
	PercentFrom string // "flag", "GOGC" or "default"
	// LimitBytes is the soft limit, math.MaxInt64 for none.
	LimitBytes int64
	LimitFrom  string // "flag", "GOMEMLIMIT", "GOGC set", "none", "container" or "machine"
}

// memory returns the memory of the process's container, or, outside
// one, of its machine, and which it is.
type memory func() (bytes uint64, from string, err error)

// Apply sets the collector of this process from s, which must pass
// Check; getenv reads the environment (os.Getenv). A process without a
// readable memory size keeps no soft limit, and Apply's error says why.
func Apply(s Settings, getenv func(string) string) (Applied, error) {
	return apply(s, getenv, hostMemory, debug.SetGCPercent, debug.SetMemoryLimit)
}

func apply(s Settings, getenv func(string) string, mem memory, setPercent func(int) int, setLimit func(int64) int64) (Applied, error) {
	if err := s.Check(); err != nil {
		return Applied{}, err
	}
	var a Applied
	switch {
	case s.Percent > 0:
		a.Percent, a.PercentFrom = s.Percent, "flag"
		setPercent(a.Percent)
	case getenv("GOGC") != "":
		// Go has read it (a number, or off: -1); read back, kept.
		a.Percent, a.PercentFrom = setPercent(DefaultPercent), "GOGC"
		setPercent(a.Percent)
	default:
		a.Percent, a.PercentFrom = DefaultPercent, "default"
		setPercent(a.Percent)
	}
	switch {
	case s.LimitMiB == -1:
		a.LimitBytes, a.LimitFrom = math.MaxInt64, "none"
	case s.LimitMiB > 0:
		a.LimitBytes, a.LimitFrom = s.LimitMiB<<20, "flag"
	case getenv("GOMEMLIMIT") != "":
		// Go has read it; a negative value reads it back, unchanged.
		a.LimitBytes, a.LimitFrom = setLimit(-1), "GOMEMLIMIT"
		return a, nil
	case a.PercentFrom == "GOGC":
		// GOGC alone (off, say): no limit it did not ask for.
		a.LimitBytes, a.LimitFrom = setLimit(-1), "GOGC set"
		return a, nil
	default:
		bytes, from, err := mem()
		if err != nil {
			a.LimitBytes, a.LimitFrom = math.MaxInt64, "none"
			setLimit(a.LimitBytes)
			return a, fmt.Errorf("no soft memory limit: %w", err)
		}
		a.LimitBytes, a.LimitFrom = int64(float64(bytes)*limitShare), from
	}
	setLimit(a.LimitBytes)
	return a, nil
}

// hostMemory is the memory of the process's cgroup when it has a limit,
// else of the machine.
func hostMemory() (uint64, string, error) {
	// No cgroup, no limit or an unreadable one: the machine's memory.
	if n, err := memlimit.FromCgroup(); err == nil && n > 0 {
		return n, "container", nil
	}
	n, err := memlimit.FromSystem()
	if err != nil {
		return 0, "", fmt.Errorf("the machine's memory: %w", err)
	}
	if n == 0 {
		return 0, "", errors.New("the machine's memory: unknown")
	}
	return n, "machine", nil
}

// String says what a sets, for a log line.
func (a Applied) String() string {
	limit := "none"
	if a.LimitBytes != math.MaxInt64 {
		limit = strconv.FormatInt(a.LimitBytes>>20, 10) + " MiB"
	}
	return fmt.Sprintf("GOGC %d (%s), soft memory limit %s (%s)", a.Percent, a.PercentFrom, limit, a.LimitFrom)
}
