package gctune

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	const gib = 1 << 30
	machine := func() (uint64, string, error) { return 24 * gib, "machine", nil }
	container := func() (uint64, string, error) { return 2 * gib, "container", nil }
	unknown := func() (uint64, string, error) { return 0, "", errors.New("no /proc") }
	for _, tt := range []struct {
		name    string
		s       Settings
		env     map[string]string
		mem     memory
		want    Applied
		wantErr string
	}{
		{"defaults on a machine", Settings{}, nil, machine, Applied{200, "default", 18 * gib, "machine"}, ""},
		{"defaults in a container", Settings{}, nil, container, Applied{200, "default", 3 * gib / 2, "container"}, ""},
		{"GOGC alone: no limit set", Settings{}, map[string]string{"GOGC": "off"}, machine, Applied{50, "GOGC", 3 << 20, "GOGC set"}, ""},
		{"flags win over the environment", Settings{Percent: 150, LimitMiB: 512}, map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}, machine, Applied{150, "flag", 512 << 20, "flag"}, ""},
		{"the environment wins over the defaults", Settings{}, map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}, machine, Applied{50, "GOGC", 3 << 20, "GOMEMLIMIT"}, ""},
		{"no limit asked for", Settings{LimitMiB: -1}, nil, machine, Applied{200, "default", math.MaxInt64, "none"}, ""},
		{"memory unknown: no limit, said", Settings{}, nil, unknown, Applied{200, "default", math.MaxInt64, "none"}, "no soft memory limit: no /proc"},
		{"a negative percentage", Settings{Percent: -5}, nil, machine, Applied{}, "--gc-percent -5"},
		{"a negative size", Settings{LimitMiB: -2}, nil, machine, Applied{}, "--memory-limit-mib -2"},
		{"a size past int64", Settings{LimitMiB: math.MaxInt64 >> 19}, nil, machine, Applied{}, "too large"},
		{"a percentage past int32", Settings{Percent: 1 << 32}, nil, machine, Applied{}, "--gc-percent 4294967296"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			percent, limit := 50, int64(3<<20) // what Go read from the environment, when set
			setPercent := func(p int) int { old := percent; percent = p; return old }
			setLimit := func(l int64) int64 {
				old := limit
				if l >= 0 {
					limit = l
				}
				return old
			}
			got, err := apply(tt.s, func(k string) string { return tt.env[k] }, tt.mem, setPercent, setLimit)
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("applied %+v, want %+v", got, tt.want)
			}
			if got != (Applied{}) && (percent != got.Percent || limit != got.LimitBytes) {
				t.Errorf("the runtime has GOGC %d and a limit of %d, want %d and %d", percent, limit, got.Percent, got.LimitBytes)
			}
			if got == (Applied{}) && (percent != 50 || limit != 3<<20) {
				t.Errorf("a bad setting changed the runtime: GOGC %d, limit %d", percent, limit)
			}
		})
	}
}

// TestHostMemory checks that this process finds a memory size: its
// container's or its machine's.
func TestHostMemory(t *testing.T) {
	n, from, err := hostMemory()
	if err != nil || n < 64<<20 || (from != "container" && from != "machine") {
		t.Errorf("hostMemory() = %d, %q, %v; want at least 64 MiB of a container or machine", n, from, err)
	}
}
