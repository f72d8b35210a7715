package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/report"
)

// reportPNG is the screenshot of the report that the documentation shows;
// reportPNGManifest is the manifest it was made from: a run of the
// README's sample job, kept so the picture can be checked without a run.
const (
	reportPNG         = "../docs/report.png"
	reportPNGManifest = "testdata/report-png/manifest.json"
	// reportPNGKey names the PNG text chunk that holds the hash of the
	// report files the screenshot shows.
	reportPNGKey = "neardup-report-sha256"
)

// TestReportPNG keeps docs/report.png the picture of what the report code
// renders today: the PNG carries the hash of the report files it was shot
// from, and the test builds them again from the kept manifest. A change of
// the report that leaves the picture behind fails here; `go test -run
// TestReportPNG -update` runs the sample job again, keeps its manifest and
// shoots the picture in headless Chromium.
func TestReportPNG(t *testing.T) {
	if *update {
		refreshReportManifest(t)
	}
	data, err := os.ReadFile(reportPNGManifest)
	if err != nil {
		t.Fatal(err)
	}
	files, err := report.Build(data)
	if err != nil {
		t.Fatalf("%s: %v", reportPNGManifest, err)
	}
	want := reportFilesSum(files)
	if *update {
		shoot(t, files, report.HTMLFile, reportPNG, want)
	}
	checkShot(t, reportPNG, want, reportPNGManifest, "TestReportPNG")
}

// checkShot checks that the screenshot at path is a PNG of the report
// files of hash want, built from source; test is the test whose -update
// shoots it again.
func checkShot(t *testing.T, path, want, source, test string) {
	t.Helper()
	img, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pngText(img, reportPNGKey)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if got != want {
		t.Fatalf("%s is stale: it shows report files of hash %s, the report code now renders %s from %s; refresh it with `cd e2e && go test -run %s -update` (needs %s)",
			path, got, want, source, test, chromiumPath)
	}
	if _, err := png.Decode(bytes.NewReader(img)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// refreshReportManifest runs the README's sample job and keeps its
// manifest, with the scratch directory it ran in taken out of its paths.
func refreshReportManifest(t *testing.T) {
	t.Helper()
	dir, out := sampleJob(t)
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte(dir+string(filepath.Separator)), nil)
	if err := os.MkdirAll(filepath.Dir(reportPNGManifest), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reportPNGManifest, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// reportFilesSum hashes the report's files, names and contents, in name
// order.
func reportFilesSum(files map[string][]byte) string {
	h := sha256.New()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// shoot writes a report's files, screenshots its page (the file page of
// files) in headless Chromium, crops the empty bottom and writes the PNG
// to path with the files' hash in a text chunk.
func shoot(t *testing.T, files map[string][]byte, page, path, sum string) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("-update shoots %s in %s: %v", path, chromiumPath, err)
	}
	dir := t.TempDir()
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img := screenshot(t, "file://"+filepath.Join(dir, page), 1200, 9000)
	var buf bytes.Buffer
	if err := png.Encode(&buf, cropBottom(img, 24)); err != nil {
		t.Fatal(err)
	}
	out, err := withPNGText(buf.Bytes(), reportPNGKey, sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// cropBottom cuts the rows below the last one that differs from the
// bottom-left pixel (the page's background), leaving margin rows.
func cropBottom(img image.Image, margin int) image.Image {
	b := img.Bounds()
	bg := rgba(img, b.Min.X, b.Max.Y-1)
	last := b.Min.Y
	for y := b.Max.Y - 1; y >= b.Min.Y && last == b.Min.Y; y-- {
		for x := b.Min.X; x < b.Max.X; x++ {
			if rgba(img, x, y) != bg {
				last = y
				break
			}
		}
	}
	r := image.Rect(b.Min.X, b.Min.Y, b.Max.X, min(b.Max.Y, last+1+margin))
	if s, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	}); ok {
		return s.SubImage(r)
	}
	return img
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// pngChunks calls f with each chunk of a PNG file: its type, data and
// the offset where the chunk begins.
func pngChunks(b []byte, f func(typ string, data []byte, off int) bool) error {
	if !bytes.HasPrefix(b, pngSignature) {
		return errors.New("not a PNG file")
	}
	for off := len(pngSignature); off < len(b); {
		if len(b)-off < 12 {
			return fmt.Errorf("chunk at offset %d: truncated", off)
		}
		n := int(binary.BigEndian.Uint32(b[off:]))
		if n > len(b)-off-12 {
			return fmt.Errorf("chunk at offset %d: length %d runs past the end", off, n)
		}
		if !f(string(b[off+4:off+8]), b[off+8:off+8+n], off) {
			return nil
		}
		off += 12 + n
	}
	return nil
}

// pngText returns the text of the tEXt chunk named key.
func pngText(b []byte, key string) (string, error) {
	var text string
	found := false
	err := pngChunks(b, func(typ string, data []byte, _ int) bool {
		if k, v, ok := bytes.Cut(data, []byte{0}); typ == "tEXt" && ok && string(k) == key {
			text, found = string(v), true
			return false
		}
		return true
	})
	if err == nil && !found {
		err = fmt.Errorf("no tEXt chunk %q", key)
	}
	return text, err
}

// withPNGText returns the PNG with a tEXt chunk key=text after its header.
func withPNGText(b []byte, key, text string) ([]byte, error) {
	at := -1
	if err := pngChunks(b, func(typ string, data []byte, off int) bool {
		if typ == "IHDR" {
			at = off + 12 + len(data)
		}
		return at < 0
	}); err != nil {
		return nil, err
	}
	if at < 0 {
		return nil, errors.New("no IHDR chunk")
	}
	data := append([]byte(key+"\x00"), text...)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	chunk = append(chunk, "tEXt"...)
	chunk = append(chunk, data...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	return slices.Concat(b[:at], chunk, b[at:]), nil
}
