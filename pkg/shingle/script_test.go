package shingle

import (
	"strings"
	"testing"
)

func TestDominantScript(t *testing.T) {
	tests := []struct {
		text string
		want Script
	}{
		{"", ScriptNone},
		{"12 345 -- !", ScriptNone},
		{"Jack London traveled to Oakland.", ScriptLatin},
		{"Ünïcödé Straße", ScriptLatin},
		{"Привет, мир", ScriptCyrillic},
		{"ΜΈΓΑ λόγος", ScriptGreek},
		{"كَتَبَ الوَلَدُ", ScriptArabic},
		{"נמל תל אביב", ScriptHebrew},
		{"नमस्ते दुनिया", ScriptDevanagari},
		{"বাংলা ভাষা", ScriptBengali},
		{"தமிழ் மொழி", ScriptTamil},
		{"东京塔很高", ScriptHan},
		{"東京タワーはとても高いです", ScriptKana},
		{"안녕하세요 세계", ScriptHangul},
		{"สวัสดีครับ", ScriptThai},
		{"ສະບາຍດີ", ScriptLao},
		{"ខ្មែរ", ScriptKhmer},
		{"မြန်မာ", ScriptMyanmar},
		{"བོད་ཡིག", ScriptTibetan},
		{"ꦗꦮ", ScriptOther}, // Javanese
		{"iPhone 手机很好用，大家都喜欢", ScriptHan},
		{"a very English page with one 字", ScriptLatin},
		{strings.Repeat("a", ScriptSample) + strings.Repeat("字", 100), ScriptLatin}, // only the sample counts
	}
	for _, tc := range tests {
		if got := DominantScript([]byte(tc.text)); got != tc.want {
			t.Errorf("DominantScript(%.40q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestScriptBlocksSorted(t *testing.T) {
	b := scriptBlocks()
	for i := range b {
		if b[i].lo > b[i].hi || i > 0 && b[i].lo <= b[i-1].hi {
			t.Fatalf("block %d [%#x, %#x] is empty or overlaps the one before", i, b[i].lo, b[i].hi)
		}
	}
	for s := ScriptNone; s <= numScripts; s++ {
		if s.String() == "" {
			t.Errorf("script %d has no name", s)
		}
	}
	if ScriptOther.Covered() || ScriptNone.Covered() || !ScriptThai.Covered() {
		t.Error("Covered: want false for other and none, true for Thai")
	}
}
