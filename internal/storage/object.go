package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// The commit protocol on object storage. There is no rename: an object
// store makes an object visible only when its upload completes (a single
// PUT, or a multipart upload's completion), and an aborted or killed
// upload leaves nothing under the name. So a Writer uploads straight to
// the final name, Commit completes the upload and Abort cancels it. Every
// name neardup writes is a function of the task that writes it, so a task
// run again (after a worker died mid-upload) writes the same bytes under
// the same names, and readers only open names that a recorded task result
// or a finished stage implies. No temporary objects exist to sweep.

// bucket is an object store's bucket as its driver reaches it: the S3
// client (s3.go) in every build, Google Cloud Storage and Azure Blob
// Storage in the builds whose tags add them (cloud.go). Keys are the
// store's own; an error for a missing object or bucket wraps
// fs.ErrNotExist.
type bucket interface {
	// attributes describes the object key.
	attributes(ctx context.Context, key string) (objectAttrs, error)
	// readRange reads length bytes of the object key from offset.
	readRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	// upload starts writing the object key: it appears when Close
	// returns nil. Cancelling ctx before then abandons it, and nothing
	// appears.
	upload(ctx context.Context, key string) (io.WriteCloser, error)
	// list calls fn for every object whose key starts with prefix and,
	// with a delimiter, for every common prefix up to the next
	// delimiter after prefix (IsDir).
	list(ctx context.Context, prefix, delimiter string, fn func(objectAttrs) error) error
	// remove deletes the object key; a missing one is not an error.
	remove(ctx context.Context, key string) error
	// check reports why the bucket cannot be listed, or nil.
	check(ctx context.Context) error
	// close releases the bucket's connections.
	close() error
}

// objectAttrs describes an object, or a common prefix of a delimited
// listing (IsDir).
type objectAttrs struct {
	Key     string
	Size    int64
	ModTime time.Time
	IsDir   bool
}

// openBucket opens the bucket of an object-store location.
func openBucket(ctx context.Context, l Location) (bucket, error) {
	var b bucket
	var err error
	if l.Scheme == "s3" {
		b, err = openS3(ctx, l)
	} else {
		b, err = openCloud(ctx, l)
	}
	if err != nil {
		return nil, fmt.Errorf("storage: opening %s://%s: %w", l.Scheme, l.Bucket, err)
	}
	return b, nil
}

// objectBlock is the unit of ranged reads from an object: sequential and
// random reads both fetch whole blocks, and a few recent blocks are kept.
const (
	objectBlock  = 1 << 20
	objectBlocks = 4
)

// objectFile is an object opened for reading: ReadAt and Read fetch
// ranges of objectBlock bytes, so memory stays at objectBlocks blocks
// whatever the object's size.
type objectFile struct {
	ctx  context.Context
	b    bucket
	key  string
	size int64
	pos  int64 // for Read

	mu     sync.Mutex
	blocks map[int64][]byte
	order  []int64 // least recently fetched first
}

func (f *objectFile) Size() int64  { return f.size }
func (f *objectFile) Close() error { return nil }

func (f *objectFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *objectFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("storage: read %s at negative offset %d", f.key, off)
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= f.size {
			return n, io.EOF
		}
		blk, err := f.block(at / objectBlock)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], blk[at%objectBlock:])
	}
	return n, nil
}

// block returns block i of the object, fetching it if needed.
func (f *objectFile) block(i int64) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.blocks[i]; ok {
		return b, nil
	}
	start := i * objectBlock
	want := min(objectBlock, f.size-start)
	r, err := f.b.readRange(f.ctx, f.key, start, want)
	if err != nil {
		return nil, fmt.Errorf("storage: read %s at %d: %w", f.key, start, err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return nil, fmt.Errorf("storage: read %s at %d: %w", f.key, start, err)
	}
	if int64(len(data)) != want {
		// The object changed size since it was opened (or the store
		// ignored the range): its bytes are not those of the file opened.
		return nil, fmt.Errorf("storage: read %s at %d: %d bytes, want %d (the object changed since it was opened?)", f.key, start, len(data), want)
	}
	if f.blocks == nil {
		f.blocks = map[int64][]byte{}
	}
	if len(f.order) == objectBlocks {
		delete(f.blocks, f.order[0])
		f.order = f.order[1:]
	}
	f.blocks[i] = data
	f.order = append(f.order, i)
	return data, nil
}

// openObject opens the object key for reading.
func openObject(ctx context.Context, b bucket, key, name string) (File, error) {
	a, err := b.attributes(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", name, err)
	}
	return &objectFile{ctx: ctx, b: b, key: key, size: a.Size}, nil
}

// objectWriter uploads to the final name; the object appears on Commit.
type objectWriter struct {
	w      io.WriteCloser
	cancel context.CancelFunc
	name   string
	done   bool
}

// createObject starts the upload of the object key (name in errors).
func createObject(ctx context.Context, b bucket, key, name string) (Writer, error) {
	uctx, cancel := context.WithCancel(ctx)
	w, err := b.upload(uctx, key)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("storage: create %s: %w", name, err)
	}
	return &objectWriter{w: w, cancel: cancel, name: name}, nil
}

func (w *objectWriter) Write(p []byte) (int, error) { return w.w.Write(p) }

func (w *objectWriter) Commit() error {
	if w.done {
		return errors.New("storage: commit of a finished writer")
	}
	w.done = true
	defer w.cancel()
	if err := w.w.Close(); err != nil {
		return fmt.Errorf("storage: upload %s: %w", w.name, err)
	}
	return nil
}

func (w *objectWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.cancel() // a cancelled upload leaves no object
	w.w.Close()
	return nil
}

// listKeys returns the objects under prefix (a "directory": prefix/...),
// sorted by key.
func listKeys(ctx context.Context, b bucket, prefix string) ([]objectAttrs, error) {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	var out []objectAttrs
	err := b.list(ctx, prefix, "", func(o objectAttrs) error {
		if !o.IsDir {
			out = append(out, o)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
