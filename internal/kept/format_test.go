package kept_test

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/pkg/formats"
)

// TestFormatMatrix checks which kinds of input each format writes
// (docs/usage.md's table): every other pair is refused, naming the input
// and saying why; so is a format that is none.
func TestFormatMatrix(t *testing.T) {
	writes := map[formats.Kind][]string{
		formats.KindJSONL:   {kept.FormatAuto, kept.FormatJSONL, kept.FormatParquet},
		formats.KindParquet: {kept.FormatAuto, kept.FormatJSONL, kept.FormatParquet},
		formats.KindWARC:    {kept.FormatAuto, kept.FormatJSONL, kept.FormatParquet, kept.FormatWARC},
		formats.KindWET:     {kept.FormatAuto, kept.FormatJSONL, kept.FormatParquet, kept.FormatWARC},
		formats.KindText:    {kept.FormatAuto, kept.FormatJSONL, kept.FormatParquet},
	}
	for kind, ok := range writes {
		for _, format := range kept.Formats {
			in := job.Input{Path: "/data/in-file", Kind: kind}
			err := kept.CheckFormat(format, []job.Input{{Path: "/data/other.warc.gz", Kind: formats.KindWARC}, in})
			want := strings.Contains(strings.Join(ok, " "), format)
			switch {
			case want && err != nil:
				t.Errorf("%s as %s: %v", kind, format, err)
			case !want && err == nil:
				t.Errorf("%s as %s: not refused", kind, format)
			case !want && (!strings.Contains(err.Error(), "/data/in-file") || !strings.Contains(err.Error(), "cannot be written as "+format)):
				t.Errorf("%s as %s: %q does not name the input and the format", kind, format, err)
			}
		}
	}
	if err := kept.CheckFormat("xml", nil); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("format xml: %v", err)
	}
}
