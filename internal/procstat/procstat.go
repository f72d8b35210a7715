// Package procstat reports the resources the current process has used.
package procstat

import "syscall"

// PeakRSSMiB returns the process's peak resident memory in MiB, or 0 where
// the system does not tell.
func PeakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}
