package control

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"time"
)

// Defaults of the disk watch.
const (
	// diskFullBytes is the free space under which a disk counts as full:
	// JetStream and the stages need room to write.
	diskFullBytes = 16 << 20
	// diskCheckEvery is how often the free space is read.
	diskCheckEvery = 2 * time.Second
)

// freeSpace returns the bytes free to an unprivileged user on the file
// system holding path.
func freeSpace(path string) (uint64, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(path, &s); err != nil {
		return 0, err
	}
	return s.Bavail * uint64(s.Bsize), nil
}

// watchDisks calls stop with an error naming the path and its free space
// when one of paths has stayed full (less than diskFullBytes free) for
// fullFor, checking every diskCheckEvery until ctx ends. A full disk makes
// the embedded server unable to record task results, and the job would
// otherwise wait for them forever.
func watchDisks(ctx context.Context, paths []string, fullFor time.Duration, free func(string) (uint64, error), stop func(error)) {
	if fullFor <= 0 {
		return
	}
	fullSince := make([]time.Time, len(paths))
	t := time.NewTicker(min(diskCheckEvery, fullFor))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for i, p := range paths {
				n, err := free(p)
				if err != nil || n >= diskFullBytes {
					fullSince[i] = time.Time{}
					continue
				}
				if fullSince[i].IsZero() {
					fullSince[i] = now
				}
				if now.Sub(fullSince[i]) >= fullFor {
					stop(fmt.Errorf("%w: the disk holding %s has been full (%d bytes free) for %s: free space there (or put the embedded store elsewhere with --nats-store), then run the same command again to resume", ErrDiskFull, p, n, fullFor.Round(time.Second)))
					return
				}
			}
		}
	}
}

// jetStreamRecoverer is what watchJetStream needs of the embedded server
// (queue.Embedded).
type jetStreamRecoverer interface {
	Recover() (bool, error)
	StoreDir() string
}

// watchJetStream checks every second, until ctx ends, whether the
// embedded server has turned JetStream off: it does when its store runs
// out of space, even for a moment, and every stream and bucket then
// answers "insufficient resources", so that the job would wait for ever
// though the disk has room again. It turns JetStream on again and calls
// stop with an error naming the store: a task published or acknowledged
// while JetStream was off may be lost, and a job waiting on it would never
// end, while the same command resumes the job from its state. When
// JetStream cannot be turned on again for failFor (a minute when 0), stop
// is called all the same.
//
// unrefreshed tells how long the job's lease could not be refreshed: with
// the embedded server there is no network to blame, so failing for
// failFor means the store is stuck (a stream that met a full disk can stop
// answering, JetStream still on), and stop is called naming the store.
func watchJetStream(ctx context.Context, srv jetStreamRecoverer, unrefreshed func() time.Duration, failFor time.Duration, log *slog.Logger, stop func(error)) {
	if failFor <= 0 {
		failFor = time.Minute
	}
	t := time.NewTicker(min(time.Second, failFor/2))
	defer t.Stop()
	var failingSince time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if d := unrefreshed(); d >= failFor {
				stop(fmt.Errorf("%w: the job's state in the embedded NATS server's store %s could not be read or written for %s (a store that ran out of space, if only for a moment, can stop answering): free space there (or put the store elsewhere with --nats-store), then run the same command again to resume",
					ErrDiskFull, srv.StoreDir(), d.Round(time.Second)))
				return
			}
			was, err := srv.Recover()
			switch {
			case err == nil && was:
				stop(fmt.Errorf("%w: the embedded NATS server turned JetStream off (its store %s ran out of space, if only for a moment); it is on again, but a task published or acknowledged meanwhile may be lost, so the job stops rather than wait on it: run the same command again to resume",
					ErrDiskFull, srv.StoreDir()))
				return
			case err == nil:
				failingSince = time.Time{}
			case failingSince.IsZero():
				failingSince = now
				log.Warn("JetStream is off on the embedded NATS server (its store ran out of space) and cannot be turned on again yet", "store", srv.StoreDir(), "err", err)
			case now.Sub(failingSince) >= failFor:
				stop(fmt.Errorf("%w: the embedded NATS server turned JetStream off (its store %s ran out of space) and it could not be turned on again for %s: %v; free space there (or put the store elsewhere with --nats-store), then run the same command again to resume",
					ErrDiskFull, srv.StoreDir(), failFor.Round(time.Second), err))
				return
			}
		}
	}
}

// storeProber is what watchStore needs of the job's state on an outside
// NATS server (queue.State).
type storeProber interface {
	StoreFault(ctx context.Context, failed string, werr error) error
}

// leaseHealth is what watchStore needs of the job's lease (queue.Held).
type leaseHealth interface {
	Unrefreshed() time.Duration
	RefreshError() error
}

// watchStore checks every second, until ctx ends, how long the job's
// lease could not be refreshed: with an outside server, when that has
// lasted failFor, it asks whether the server is to blame (StoreFault). A
// server that answers while its store does not write (a full disk: it
// answers no write, and the job would wait for ever; its limits reached:
// it refuses them) stops the run with an error naming the server and
// JetStream's error; one that does not answer is waited for, as a
// restarting server is, and said once. failFor 0 does not watch.
func watchStore(ctx context.Context, st storeProber, lease leaseHealth, failFor time.Duration, log *slog.Logger, stop func(error)) {
	if failFor <= 0 {
		return
	}
	t := time.NewTicker(min(time.Second, failFor/2))
	defer t.Stop()
	said := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d := lease.Unrefreshed()
			if d < failFor {
				said = false
				continue
			}
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := st.StoreFault(pctx, "for "+d.Round(100*time.Millisecond).String(), lease.RefreshError())
			cancel()
			if err != nil {
				stop(err)
				return
			}
			if !said && ctx.Err() == nil {
				log.Warn("the job's state could not be written, and the NATS server does not answer: waiting for it", "for", d.Round(time.Second))
				said = true
			}
		}
	}
}
