package stage

import (
	"context"
	"fmt"
)

// PartRange is a task's contiguous range of partitions, First to Last.
type PartRange struct{ First, Last int }

// SplitPartitions cuts partitions into tasks of about perTask of total
// bytes of records (at least minTasks, at most one a partition), by
// contiguous ranges: hashing spreads records evenly over partitions.
func SplitPartitions(total, perTask int64, minTasks, partitions int) []PartRange {
	n := int((total + perTask - 1) / perTask)
	n = min(max(n, minTasks), partitions)
	ranges := make([]PartRange, n)
	for t := range ranges {
		ranges[t] = PartRange{First: t * partitions / n, Last: (t+1)*partitions/n - 1}
	}
	return ranges
}

// lister lists the files under a prefix (storage.Dir).
type lister interface {
	List(ctx context.Context, prefix string) ([]string, error)
}

// Remover removes a file.
type Remover interface {
	Remove(ctx context.Context, name string) error
}

// RemoveOthers removes the files under dir that keep does not name: an
// earlier run's files of a dataset whose tasks this run cut otherwise.
// Each removal may be done again; an object store's transient errors are
// retried (Retried). A store that cannot list is left as it is.
func RemoveOthers(ctx context.Context, st Remover, dir string, keep map[string]bool) error {
	l, ok := st.(lister)
	if !ok {
		return nil
	}
	var names []string
	err := Retried(ctx, func() (err error) {
		names, err = l.List(ctx, dir)
		return err
	})
	if err != nil {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, n := range names {
		if !keep[n] {
			if err := Retried(ctx, func() error { return st.Remove(ctx, n) }); err != nil {
				return fmt.Errorf("removing %s, of an earlier run: %w", n, err)
			}
		}
	}
	return nil
}
