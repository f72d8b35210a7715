package query

import (
	"bufio"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
)

// TestServe runs Serve over a script of request lines and checks its
// answers: the Ready line first, naming the index; each request's results
// those of Searcher.Query on the same documents (from a searcher of its
// own), in order; a blank line unanswered; a line that is not a request, a
// text over the bound and a line over the bound answered with an error
// naming the request, the next request still answered; a request of no
// documents answered with no results; and a last line without its end
// answered before Serve returns at the end of the input.
func TestServe(t *testing.T) {
	f := runJob(t, 300, 5, func(*job.Params) {})
	ctx := context.Background()
	s, err := Open(ctx, []string{f.out}, Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref, err := Open(ctx, []string{f.out}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()

	req := func(docs ...RequestDoc) string {
		b, err := json.Marshal(Request{Docs: docs})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first := []RequestDoc{{ID: "a", Text: f.texts[f.ids[0]]}, {ID: "b", Text: f.texts[f.ids[7]]},
		{ID: "c", Text: "words that are in no generated document of this corpus at all, not one"}}
	second := []RequestDoc{{ID: "d", Text: f.texts[f.ids[42]]}}
	const limit = 64 << 10
	lines := []string{
		req(first...),
		"",
		`{"docs":[{"id":"x","text":`,
		req(RequestDoc{ID: "long", Text: strings.Repeat("w ", 5000)}), // 10,000 bytes: over the text bound of 8,000
		`{"docs":[{"id":"y","text":"` + strings.Repeat("z", limit) + `"}]}`,
		req(),
		req(second...), // no line end: the input ends
	}
	var out strings.Builder
	var observed []int
	observe := func(docs int, st Stats, took time.Duration) {
		if st.Docs != docs || took <= 0 {
			t.Errorf("observe(%d, %+v, %v): want the request's documents counted and a time", docs, st, took)
		}
		observed = append(observed, docs)
	}
	err = serve(ctx, s, strings.NewReader(strings.Join(lines, "\n")), &out, observe, serveLimits{request: limit, text: 8000})
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}

	sc := bufio.NewScanner(strings.NewReader(out.String()))
	next := func() []byte {
		t.Helper()
		if !sc.Scan() {
			t.Fatalf("output ends early:\n%s", out.String())
		}
		return sc.Bytes()
	}
	var ready Ready
	if err := json.Unmarshal(next(), &ready); err != nil {
		t.Fatal(err)
	}
	want := Ready{Ready: true, Indexes: []ReadyIndex{{Index: f.out, Job: s.Indexes()[0].Job, Docs: 300, Threshold: f.p.Threshold}}}
	if !reflect.DeepEqual(ready, want) {
		t.Errorf("ready line %+v, want %+v", ready, want)
	}
	expect := func(docs []RequestDoc) Response {
		var qd []Doc
		for _, d := range docs {
			qd = append(qd, Doc{ID: d.ID, Text: []byte(d.Text)})
		}
		res, _, err := ref.Query(ctx, qd)
		if err != nil {
			t.Fatal(err)
		}
		return Response{Results: res}
	}
	for i, w := range []struct {
		resp    Response
		errPart string
	}{
		{resp: expect(first)},
		{errPart: `request 2: not a request ({"docs":[{"id":...,"text":...}]})`},
		{errPart: `request 3: document 1 (id "long"): a text of 10000 bytes, over the bound of 8000`},
		{errPart: "request 4: longer than 65536 bytes"},
		{resp: Response{Results: []Result{}}},
		{resp: expect(second)},
	} {
		line := next()
		var got Response
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("answer %d: %v: %s", i+1, err, line)
		}
		if w.errPart != "" {
			if !strings.Contains(got.Error, w.errPart) || got.Results != nil {
				t.Errorf("answer %d: %s, want an error with %q", i+1, line, w.errPart)
			}
			continue
		}
		if got.Error != "" || !reflect.DeepEqual(got.Results, w.resp.Results) {
			t.Errorf("answer %d: %s, want %+v", i+1, line, w.resp)
		}
	}
	if sc.Scan() {
		t.Errorf("more answers than requests: %s", sc.Text())
	}
	// The first request's documents found themselves; the unrelated
	// text, nothing.
	if r := expect(first).Results; len(r[0].Matches) == 0 || r[0].Matches[0].ID != f.ids[0] || len(r[2].Matches) != 0 {
		t.Errorf("reference results %+v: want the first document found, the unrelated one not", r)
	}
	if !reflect.DeepEqual(observed, []int{3, 0, 1}) {
		t.Errorf("observed requests of %v documents, want [3 0 1]", observed)
	}
}
