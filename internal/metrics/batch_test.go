package metrics

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/metrics/metricstest"
)

// batch is a job that succeeded, and the samples it gives with labels.
func batch() (Batch, func(labels ...string) metricstest.Samples) {
	ended := time.Date(2026, 11, 28, 3, 0, 0, 500_000_000, time.UTC)
	b := Batch{Label: "neardup-weekly", Name: "2026-W48", Succeeded: true, Ended: ended, Seconds: 12.5,
		Docs: 100_000, Duplicates: 3_637, DuplicateBytes: 9_000_000, Pairs: 26_927, Rejected: 3}
	s := metricstest.Series
	return b, func(l ...string) metricstest.Samples {
		return metricstest.Samples{
			s("neardup_last_success_timestamp_seconds", l...):                    float64(ended.UnixNano()) / 1e9,
			s("neardup_job_duration_seconds", l...):                              12.5,
			s("neardup_job_documents", l...):                                     100_000,
			s("neardup_job_duplicates", l...):                                    3_637,
			s("neardup_job_duplicate_text_bytes", l...):                          9_000_000,
			s("neardup_job_pairs", l...):                                         26_927,
			s("neardup_job_rejected", l...):                                      3,
			s("neardup_job_info", append([]string{"name", "2026-W48"}, l...)...): 1,
		}
	}
}

// equalSamples reports the differences between got and want.
func equalSamples(t *testing.T, what string, got, want metricstest.Samples) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: %s = %v (present %v), want %v", what, k, g, ok, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected series %s", what, k)
		}
	}
}

// TestPush pushes a job that succeeded and one that failed to a fake
// Pushgateway: the first replaces its group (PUT to
// /metrics/job/<label>) with the text format's samples, the second adds
// its failure time to the group (POST), and the URL's credentials go as
// basic authentication, never into an error.
func TestPush(t *testing.T) {
	type request struct {
		method, path, contentType, user, pass string
		body                                  []byte
	}
	var (
		mu   sync.Mutex
		reqs []request
	)
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		user, pass, _ := r.BasicAuth()
		mu.Lock()
		reqs = append(reqs, request{r.Method, r.URL.EscapedPath(), r.Header.Get("Content-Type"), user, pass, body})
		mu.Unlock()
		w.WriteHeader(status)
	}))
	defer srv.Close()
	gateway := strings.Replace(srv.URL, "http://", "http://pusher:s3cret@", 1)

	b, want := batch()
	if err := b.Push(context.Background(), gateway+"/"); err != nil {
		t.Fatal(err)
	}
	failed := Batch{Label: b.Label, Name: "2026-W49", Ended: b.Ended.Add(7 * 24 * time.Hour)}
	if err := failed.Push(context.Background(), gateway); err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, tt := range []struct {
		method string
		want   metricstest.Samples
	}{
		{http.MethodPut, want()},
		{http.MethodPost, metricstest.Samples{"neardup_last_failure_timestamp_seconds": float64(failed.Ended.UnixNano()) / 1e9}},
	} {
		r := reqs[i]
		if r.method != tt.method || r.path != "/metrics/job/neardup-weekly" {
			t.Errorf("request %d: %s %s, want %s /metrics/job/neardup-weekly", i, r.method, r.path, tt.method)
		}
		if !strings.HasPrefix(r.contentType, "text/plain") {
			t.Errorf("request %d: Content-Type %q, want the text format", i, r.contentType)
		}
		if r.user != "pusher" || r.pass != "s3cret" {
			t.Errorf("request %d: basic auth %q:%q, want the URL's", i, r.user, r.pass)
		}
		got, err := metricstest.Parse(bytes.NewReader(r.body))
		if err != nil {
			t.Fatalf("request %d: %v\n%s", i, err, r.body)
		}
		equalSamples(t, tt.method, got, tt.want)
	}

	status = http.StatusBadRequest
	err := b.Push(context.Background(), gateway)
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("a gateway answering 400: err %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error shows the password: %v", err)
	}
	for _, bad := range []string{"pushgateway:9091", "ftp://host/", "http://user:s3cret@[::1", ""} {
		err := CheckPush(bad)
		if err == nil {
			t.Errorf("CheckPush(%q) = nil", bad)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("CheckPush(%q) shows the password: %v", bad, err)
		}
	}
}

// TestWriteFile writes the textfile collector's file of a job that
// succeeded (labelled job=<label>), replaces it with the next success's,
// leaves it as it is for a job that failed, and leaves no temporary file.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "neardup.prom")
	b, want := batch()
	read := func() metricstest.Samples {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := metricstest.Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%v\n%s", err, data)
		}
		return got
	}
	if err := b.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	equalSamples(t, "first success", read(), want("job", "neardup-weekly"))

	b.Docs = 200_000
	if err := b.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	w := want("job", "neardup-weekly")
	w[metricstest.Series("neardup_job_documents", "job", "neardup-weekly")] = 200_000
	equalSamples(t, "second success", read(), w)

	failed := Batch{Label: b.Label, Ended: b.Ended.Add(time.Hour)}
	if err := failed.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	equalSamples(t, "after a failure", read(), w)

	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v, want neardup.prom alone", names)
	}

	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dir, "missing", "neardup.prom"), "no such file"},
		{path + "/x.prom", "not a directory"},
		{filepath.Join(dir, "neardup.txt"), "*.prom"},
	} {
		if err := CheckFile(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckFile(%s) = %v, want an error saying %q", tt.path, err, tt.want)
		}
	}
	if err := CheckFile(path); err != nil {
		t.Errorf("CheckFile(%s) = %v", path, err)
	}
}
