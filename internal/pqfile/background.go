package pqfile

import (
	"sync"

	"github.com/neardup/neardup/internal/fileinfo"
)

// Background writes batches of rows to a Writer in a goroutine of its own,
// so that encoding and compressing them overlaps the work that makes them:
// a verify chunk's pairs/ file is the last task of the templated job's
// cluster stage, expanding its pairs on one core and writing them on the
// other. The file is the one the Writer would write given the same
// batches in the same order. A Background is used by one goroutine.
type Background[T any] struct {
	w    *Writer[T]
	todo chan []T
	free chan []T
	done chan struct{}
	// closed is set once todo is closed, by Close or Abort.
	closed bool

	mu  sync.Mutex
	err error // the first error of the writer's goroutine
}

// backgroundDepth is how many batches wait for the writer at most: the
// maker fills the next while the writer writes one.
const backgroundDepth = 2

// NewBackground starts writing to w in the background: Write hands it
// batches, and Close or Abort ends it.
func NewBackground[T any](w *Writer[T]) *Background[T] {
	b := &Background[T]{w: w, todo: make(chan []T, backgroundDepth-1), free: make(chan []T, backgroundDepth+1), done: make(chan struct{})}
	go b.run()
	return b
}

func (b *Background[T]) run() {
	defer close(b.done)
	for batch := range b.todo {
		if b.failed() == nil {
			if err := b.w.Write(batch); err != nil {
				b.mu.Lock()
				b.err = err
				b.mu.Unlock()
			}
		}
		select {
		case b.free <- batch[:0]:
		default: // enough batches to reuse
		}
	}
}

func (b *Background[T]) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// Write hands batch to the writer, which owns it until it is handed back
// empty, and returns an empty batch to fill next, of batch's capacity. It
// returns the writer's first error, if it has failed.
func (b *Background[T]) Write(batch []T) ([]T, error) {
	if err := b.failed(); err != nil {
		return batch[:0], err
	}
	b.todo <- batch
	select {
	case next := <-b.free:
		return next, nil
	default:
		return make([]T, 0, cap(batch)), nil
	}
}

// Close waits for the batches handed to the writer, then closes it (see
// Writer.Close).
func (b *Background[T]) Close() (fileinfo.Info, error) {
	b.stop()
	if err := b.failed(); err != nil {
		b.w.Abort()
		return fileinfo.Info{}, err
	}
	return b.w.Close()
}

// Abort stops the writer, once it is done with the batches handed to it,
// and discards the file.
func (b *Background[T]) Abort() error {
	b.stop()
	return b.w.Abort()
}

// stop ends the writer's goroutine once it has written the batches
// handed to it.
func (b *Background[T]) stop() {
	if !b.closed {
		b.closed = true
		close(b.todo)
	}
	<-b.done
}
