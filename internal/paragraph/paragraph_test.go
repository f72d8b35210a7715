package paragraph

import (
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/pkg/shingle"
)

// span is a unit as the tests write it: its text and normalised text.
type span struct{ text, norm string }

func cut(t *testing.T, kind, text string, o shingle.Options) []span {
	t.Helper()
	c, err := NewCutter(kind, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []span
	err = c.Cut(text, func(u Unit) error {
		if u.Index != len(got) {
			t.Errorf("unit %d has index %d", len(got), u.Index)
		}
		s := text[u.Offset : u.Offset+u.Length]
		norm := strings.Join(shingle.Tokens(s, o), " ")
		if u.Hash != xxhash.Sum64String(norm) {
			t.Errorf("unit %q: hash %x, want xxhash(%q)", s, u.Hash, norm)
		}
		if off, n := FromPlace(u.Place()); off != u.Offset || n != u.Length {
			t.Errorf("place of %+v unpacks to %d, %d", u, off, n)
		}
		got = append(got, span{s, norm})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestCut(t *testing.T) {
	text := "Home | About\r\nWelcome to   the SITE!\n\n  \n----\nBody line one,\nline two.\n\nFooter 2026"
	tests := []struct {
		kind string
		o    shingle.Options
		want []span
	}{
		{Line, shingle.Options{}, []span{
			{"Home | About", "home about"}, {"Welcome to   the SITE!", "welcome to the site"},
			{"Body line one,", "body line one"}, {"line two.", "line two"}, {"Footer 2026", "footer 2026"},
		}},
		{Line, shingle.Options{DigitsToZero: true}, []span{
			{"Home | About", "home about"}, {"Welcome to   the SITE!", "welcome to the site"},
			{"Body line one,", "body line one"}, {"line two.", "line two"}, {"Footer 2026", "footer 0000"},
		}},
		{Paragraph, shingle.Options{}, []span{
			{"Home | About\r\nWelcome to   the SITE!", "home about welcome to the site"},
			{"----\nBody line one,\nline two.", "body line one line two"},
			{"Footer 2026", "footer 2026"},
		}},
	}
	for _, tc := range tests {
		if got := cut(t, tc.kind, text, tc.o); !slices.Equal(got, tc.want) {
			t.Errorf("%s %+v:\n got %q\nwant %q", tc.kind, tc.o, got, tc.want)
		}
	}
	if got := cut(t, Line, "", shingle.Options{}); len(got) != 0 {
		t.Errorf("empty text: %q", got)
	}
	if _, err := NewCutter("sentence", shingle.Options{}); err == nil {
		t.Error("NewCutter(sentence) did not fail")
	}
}

func TestStrip(t *testing.T) {
	text := "MENU home\nkeep me\r\nMENU home\nlast MENU"
	tests := []struct {
		kind, drop, want string
	}{
		{Line, "menu home", "keep me\r\nlast MENU"},
		{Line, "last menu", "MENU home\nkeep me\r\nMENU home\n"},
		{Line, "nothing", text},
		{Paragraph, "menu home keep me menu home last menu", ""},
	}
	for _, tc := range tests {
		c, err := NewCutter(tc.kind, shingle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Strip(text, func(u Unit) bool { return u.Hash == xxhash.Sum64String(tc.drop) })
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s, dropping %q: got %q, want %q", tc.kind, tc.drop, got, tc.want)
		}
	}
}
