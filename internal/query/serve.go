package query

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// MaxRequestBytes bounds a request line of Serve: room for a document of
// the bound on a text (16 MiB) with JSON escapes, and more documents.
const MaxRequestBytes = 64 << 20

// Request is a request line of Serve: documents looked up together, as a
// batch (their reads shared).
type Request struct {
	Docs []RequestDoc `json:"docs"`
}

// RequestDoc is a document of a Request.
type RequestDoc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Response is Serve's answer to a request line: the results of its
// documents, in their order (a list, empty for a request of none), or an
// error that ended this request only (and no results).
type Response struct {
	Results []Result `json:"results,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Ready is the first line Serve writes: the indexes open for queries.
type Ready struct {
	Ready   bool         `json:"ready"`
	Indexes []ReadyIndex `json:"indexes"`
}

// ReadyIndex describes an open index in Ready.
type ReadyIndex struct {
	// Index is its location as given to Open, Job its job's name.
	Index string `json:"index"`
	Job   string `json:"job"`
	// Docs is the number of documents it holds, Threshold its job's
	// --threshold.
	Docs      int64   `json:"docs"`
	Threshold float64 `json:"threshold"`
}

// Serve answers requests until r ends: it writes Ready on w, then reads
// one Request a line from r and writes one Response a line on w, flushed
// at once, so that one long-lived process answers a caller's queries
// from its open indexes and cache. A request that is not valid (not JSON,
// a text over 16 MiB, a line over MaxRequestBytes) or whose lookup fails
// is answered with an error and the next is read; Serve returns when r
// ends (nil), ctx is done, or w or r fails. observe, if not nil, is
// called after each answered request with what it read and how long it
// took.
func Serve(ctx context.Context, s *Searcher, r io.Reader, w io.Writer, observe func(docs int, st Stats, took time.Duration)) error {
	return serve(ctx, s, r, w, observe, serveLimits{request: MaxRequestBytes, text: maxLineBytes})
}

// serveLimits bound a request line and a document's text.
type serveLimits struct {
	request, text int
}

func serve(ctx context.Context, s *Searcher, r io.Reader, w io.Writer, observe func(docs int, st Stats, took time.Duration), lim serveLimits) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	send := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		return bw.Flush()
	}
	ready := Ready{Ready: true}
	for _, src := range s.sources {
		ready.Indexes = append(ready.Indexes, ReadyIndex{Index: src.loc, Job: src.ix.Job, Docs: src.ix.Docs, Threshold: src.ix.Params.Threshold})
	}
	if err := send(ready); err != nil {
		return err
	}
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, tooLong, err := readRequest(br, lim.request)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("request %d: %w", n, err)
		}
		if len(line) == 0 && !tooLong {
			if err != nil { // io.EOF: the caller is done
				return nil
			}
			n-- // a blank line is no request
			continue
		}
		var resp Response
		if tooLong {
			resp.Error = fmt.Sprintf("request %d: longer than %d bytes: send fewer or shorter documents a request", n, lim.request)
		} else {
			t0 := time.Now()
			res, st, qerr := s.answer(ctx, line, lim.text)
			if qerr != nil {
				resp.Error = fmt.Sprintf("request %d: %v", n, qerr)
			} else {
				resp.Results = res
				if observe != nil {
					observe(len(res), st, time.Since(t0))
				}
			}
		}
		var answer any = struct {
			Results []Result `json:"results"`
		}{resp.Results}
		if resp.Error != "" {
			answer = struct {
				Error string `json:"error"`
			}{resp.Error}
		}
		if werr := send(answer); werr != nil {
			return werr
		}
		if err != nil { // io.EOF after a last line without its end
			return nil
		}
	}
}

// answer decodes a request line and looks its documents up.
func (s *Searcher) answer(ctx context.Context, line []byte, maxText int) ([]Result, Stats, error) {
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, Stats{}, fmt.Errorf(`not a request ({"docs":[{"id":...,"text":...}]}): %w`, err)
	}
	docs := make([]Doc, len(req.Docs))
	for i, d := range req.Docs {
		if len(d.Text) > maxText {
			return nil, Stats{}, fmt.Errorf("document %d (id %q): a text of %d bytes, over the bound of %d", i+1, d.ID, len(d.Text), maxText)
		}
		docs[i] = Doc{ID: d.ID, Text: []byte(d.Text)}
	}
	if len(docs) == 0 {
		return []Result{}, Stats{}, nil
	}
	return s.Query(ctx, docs)
}

// readRequest reads a line without its end. A line longer than limit bytes
// (its end aside) is read to its end and dropped: tooLong.
func readRequest(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		part, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(part) > limit+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, part...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return trimEOL(line), false, err
	}
}
