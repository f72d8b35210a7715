package mapper

import "testing"

func TestRejectKind(t *testing.T) {
	tests := []struct{ reason, kind string }{
		{"invalid JSON: unexpected end of JSON input (at byte 71)", "invalid JSON"},
		{`missing text field "text"`, `missing text field "text"`},
		{"invalid UTF-8 in text at byte 20", "invalid UTF-8 in text at byte N"},
		{"unreadable: open /data/x.jsonl: no such file or directory", "unreadable"},
		{"line of 20000000 bytes exceeds the limit of 16777216 bytes", "line of N bytes exceeds the limit of N bytes"},
		{"document of 120 bytes exceeds --max-doc-bytes 100", "document of N bytes exceeds --max-doc-bytes N"},
		{"malformed WARC record header: missing WARC-Record-ID", "malformed WARC record header"},
		{"skipped 512 bytes from offset 1024 to the next record header", "skipped N bytes from offset N to the next record header"},
		{"malformed WARC record header: bad Content-Length; skipped 9 bytes from offset 3 to the end of the file", "malformed WARC record header"},
		{"corrupt parquet row group 3 (of 7): bad page", "corrupt parquet row group N (of N)"},
		{"  ", "(no reason)"},
		{"", "(no reason)"},
	}
	for _, tc := range tests {
		if got := RejectKind(tc.reason); got != tc.kind {
			t.Errorf("RejectKind(%q) = %q, want %q", tc.reason, got, tc.kind)
		}
	}
}
