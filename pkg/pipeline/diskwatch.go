package pipeline

import (
	"context"
	"fmt"
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
