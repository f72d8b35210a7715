package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// stopGrace is how long a command may take to stop after SIGINT or
// SIGTERM before it is ended at once: time enough to hand running tasks
// back and release the job's lease; a command stuck in a call that does
// not heed its context still ends.
const stopGrace = 15 * time.Second

// interruptible runs run with a context cancelled by the first signal on
// sigs. The process is then ended through exit, saying so on stderr, when
// a second signal comes or run has not returned within grace: a signal is
// always honoured, whatever run is blocked in. A job stopped that way is
// resumed by the same command, as after a crash.
func interruptible(run Run, sigs <-chan os.Signal, grace time.Duration, stderr io.Writer, name string, exit func(int)) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		var first os.Signal
		select {
		case first = <-sigs:
		case <-done:
			return
		}
		cancel()
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "%s: %v again: stopping at once\n", name, s)
		case <-time.After(grace):
			fmt.Fprintf(stderr, "%s: still running %v after %v: stopping at once (the same command resumes the job)\n", name, grace, first)
		case <-done:
			return
		}
		exit(signalStatus(first))
	}()
	return run(ctx)
}

// signalStatus is the exit status of a process ended by s, as a shell
// reports it: 128 + the signal's number.
func signalStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}
