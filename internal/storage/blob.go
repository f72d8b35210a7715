package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
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

// openBucket opens the bucket of an object-store location.
func openBucket(ctx context.Context, l Location) (*blob.Bucket, error) {
	u, err := l.bucketURL()
	if err != nil {
		return nil, err
	}
	b, err := blob.OpenBucket(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("storage: opening %s://%s: %w", l.Scheme, l.Bucket, err)
	}
	return b, nil
}

// notExist makes a not-found error of the object store wrap fs.ErrNotExist.
func notExist(err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%w (%v)", fs.ErrNotExist, err)
	}
	return err
}

// blobBlock is the unit of ranged reads from an object: sequential and
// random reads both fetch whole blocks, and a few recent blocks are kept.
const (
	blobBlock  = 1 << 20
	blobBlocks = 4
)

// blobFile is an object opened for reading: ReadAt and Read fetch ranges
// of blobBlock bytes, so memory stays at blobBlocks blocks whatever the
// object's size.
type blobFile struct {
	ctx  context.Context
	b    *blob.Bucket
	key  string
	size int64
	pos  int64 // for Read

	mu     sync.Mutex
	blocks map[int64][]byte
	order  []int64 // least recently fetched first
}

func (f *blobFile) Size() int64  { return f.size }
func (f *blobFile) Close() error { return nil }

func (f *blobFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *blobFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("storage: read %s at negative offset %d", f.key, off)
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= f.size {
			return n, io.EOF
		}
		blk, err := f.block(at / blobBlock)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], blk[at%blobBlock:])
	}
	return n, nil
}

// block returns block i of the object, fetching it if needed.
func (f *blobFile) block(i int64) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.blocks[i]; ok {
		return b, nil
	}
	start := i * blobBlock
	r, err := f.b.NewRangeReader(f.ctx, f.key, start, min(blobBlock, f.size-start), nil)
	if err != nil {
		return nil, fmt.Errorf("storage: read %s at %d: %w", f.key, start, notExist(err))
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return nil, fmt.Errorf("storage: read %s at %d: %w", f.key, start, err)
	}
	if f.blocks == nil {
		f.blocks = map[int64][]byte{}
	}
	if len(f.order) == blobBlocks {
		delete(f.blocks, f.order[0])
		f.order = f.order[1:]
	}
	f.blocks[i] = data
	f.order = append(f.order, i)
	return data, nil
}

// openObject opens the object key for reading.
func openObject(ctx context.Context, b *blob.Bucket, key, name string) (File, error) {
	a, err := b.Attributes(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", name, notExist(err))
	}
	return &blobFile{ctx: ctx, b: b, key: key, size: a.Size}, nil
}

// blobWriter uploads to the final name; the object appears on Commit.
type blobWriter struct {
	w      *blob.Writer
	cancel context.CancelFunc
	name   string
	done   bool
}

func (w *blobWriter) Write(p []byte) (int, error) { return w.w.Write(p) }

func (w *blobWriter) Commit() error {
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

func (w *blobWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.cancel() // a cancelled upload leaves no object
	w.w.Close()
	return nil
}

// listKeys returns the keys under prefix (a "directory": prefix/...),
// sorted.
func listKeys(ctx context.Context, b *blob.Bucket, prefix string) ([]*blob.ListObject, error) {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	it := b.List(&blob.ListOptions{Prefix: prefix})
	var out []*blob.ListObject
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !o.IsDir {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
