package textstore

import "fmt"

// v3Docs are the 30 documents of testdata/ndtxt3.txz, written in frames
// of 8 documents by the writer of the format before NDTXT4 (commit
// e9ca7c5): slot 5 and every ninth from it empty, texts of 0 to 290
// bytes.
func v3Docs() []*Doc {
	out := make([]*Doc, 30)
	for i := range out {
		if i%9 == 5 {
			continue
		}
		text := ""
		for j := range i {
			text += fmt.Sprintf("word%d ", j*j%11)
		}
		out[i] = &Doc{ID: fmt.Sprintf("v3-%d", i), URL: fmt.Sprintf("https://example.net/%d", i), Text: []byte(text)}
	}
	return out
}
