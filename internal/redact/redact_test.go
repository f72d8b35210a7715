package redact

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/redact/redacttest"
)

// TestURL checks that passwords and tokens are hidden, whatever they
// hold and whether or not the URL parses, and that the rest is kept.
// Every secret below is made of "Zq9" and "Xw7", which nothing else holds.
func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"/data/out", "/data/out"},
		{"nats://alice:Zq9Xw7@nats.internal:4222", "nats://alice:xxxxx@nats.internal:4222"},
		{"nats://Zq9Xw7@nats.internal:4222", "nats://xxxxx@nats.internal:4222"},
		{"tls://u:Zq9%40Xw7@h:4222/path?x=1", "tls://u:xxxxx@h:4222/path?x=1"},
		{"nats://a:Zq9Xw7@h1:4222,nats://Zq9Xw7@h2:4222,nats://h3:4222", "nats://a:xxxxx@h1:4222,nats://xxxxx@h2:4222,nats://h3:4222"},
		{"nats://h1:4222, nats://a:Zq9Xw7@h2:4222", "nats://h1:4222, nats://a:xxxxx@h2:4222"},
		{"u:Zq9Xw7@h:4222", "u:xxxxx@h:4222"},
		{"nats://u:Zq9@Xw7@h:4222", "nats://u:xxxxx@h:4222"},
		{"nats://u:Zq9:Xw7@h", "nats://u:xxxxx@h"},
		// Not percent-encoded: the URL does not parse, or not as meant.
		{"nats://neardup:Zq9%Xw7@127.0.0.1:1", "nats://xxxxx@127.0.0.1:1"},
		{"nats://neardup:Zq9/Xw7@127.0.0.1:1", "nats://xxxxx@127.0.0.1:1"},
		{"nats://u:Zq9#Xw7@h", "nats://xxxxx@h"},
		{"nats://u:Zq9?Xw7@h", "nats://xxxxx@h"},
		{"nats://u:Zq9 Xw7@h", "nats://xxxxx@h"},
		{"nats://u:Zq9éXw7@h", "nats://xxxxx@h"},
		{"nats://u:Zq9,Xw7@h", "nats://xxxxx@h"},
		{"u:Zq9/Xw7@h:4222", "xxxxx@h:4222"},
		{"u:Zq9Xw7@h1:4222,v:Zq9Xw7@h2:4222", "u:xxxxx@h1:4222,v:xxxxx@h2:4222"},
		{"nats://u:Zq9,Xw7@h,nats://h2", "nats://xxxxx@h,nats://h2"},
		{"nats://h1,nats://u:Zq9/Xw7@h2", "nats://xxxxx@h2"},
		{"s3://bucket/key?endpoint=http://k:Zq9Xw7@minio:9000", "s3://xxxxx@minio:9000"},
		{"nats://h/Zq9Xw7@x", "nats://xxxxx@x"},
		// The first piece of a URL cut at a comma in its password.
		{"s3://neardup:Zq9", "s3://xxxxx"},
		{"s3://neardup:Zq9/key", "s3://xxxxx/key"},
		{"nats://h:4222,nats://u:Zq9", "nats://h:4222,nats://xxxxx"},
		{"nats://127.0.0.1:port", "nats://xxxxx"}, // as user:pass
		{"nats://127.0.0.1:4222/%zz", "nats://127.0.0.1:4222/%zz"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := URL(tt.in)
			if got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if strings.Contains(got, "Zq9") || strings.Contains(got, "Xw") {
				t.Errorf("%q still holds the secret", got)
			}
		})
	}
}

// TestParseURL checks that the error of a URL that does not parse names
// the URL redacted and the problem, and quotes no part of the password.
func TestParseURL(t *testing.T) {
	tests := []struct{ in, problem string }{
		{"nats://neardup:Zq9%Xw7@127.0.0.1:1", `"%" not followed by two hex digits`},
		{"nats://neardup:Zq9%zzXw7@127.0.0.1:1", `"%" not followed by two hex digits`},
		{"nats://neardup:Zq9/Xw7@127.0.0.1:1", `"/", "?" or "#"`},
		{"nats://neardup:Zq9#Xw7@127.0.0.1:1", `"/", "?" or "#"`},
		{"nats://neardup:Zq9?Xw7@127.0.0.1:1", `"/", "?" or "#"`},
		{"nats://neardup:Zq9 Xw7@127.0.0.1:1", "must be percent-encoded"},
		{"nats://neardup:Zq9éXw7@127.0.0.1:1", "must be percent-encoded"},
		{"nats://127.0.0.1:1/%zz", `"%" not followed by two hex digits`},
		{"nats://127.0.0.1:1/\x01", "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseURL(tt.in)
			if err == nil {
				t.Fatal("parsed")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.problem) || !strings.Contains(msg, "127.0.0.1") {
				t.Errorf("error %q does not name the host and say %q", msg, tt.problem)
			}
			if strings.Contains(msg, "Zq") || strings.Contains(msg, "Xw") {
				t.Errorf("error %q quotes the secret", msg)
			}
		})
	}
	if u, err := ParseURL("nats://u:Zq9%2FXw7@h:4222"); err != nil || u.Host != "h:4222" {
		t.Errorf("a percent-encoded password: %v, %v", u, err)
	}
}

// TestHostile checks every hostile password of redacttest: hidden by URL
// in a URL alone, first, second or without a scheme in a list, and never
// quoted by ParseURL's error, which a malformed one gives.
func TestHostile(t *testing.T) {
	for _, h := range redacttest.Hostile() {
		one := "nats://" + h.Text + "@127.0.0.1:4222"
		for _, s := range []string{one, one + ",nats://h2:4222", "nats://h1:4222, " + one, h.Text + "@h:4222", "h1:4222," + h.Text + "@h:4222"} {
			if got := URL(s); redacttest.Shown(got) != "" || !strings.Contains(got, Mask) {
				t.Errorf("URL(%q) = %q", s, got)
			}
		}
		// Cut at its commas (a list flag): each piece hidden.
		for _, piece := range strings.Split(one, ",") {
			if got := URL(piece); redacttest.Shown(got) != "" {
				t.Errorf("URL(%q) = %q", piece, got)
			}
		}
		_, err := ParseURL(one)
		switch {
		case h.Malformed && err == nil && !strings.Contains(h.Text, ","):
			// (A comma is malformed only in a list of servers.)
			t.Errorf("%s parsed", one)
		case !h.Malformed && err != nil:
			t.Errorf("%s: %v", one, err)
		case err != nil && redacttest.Shown(err.Error()) != "":
			t.Errorf("the error of %s quotes the secret: %v", one, err)
		}
	}
}
