package sketch

import (
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/job"
)

// modelText is the fixed text whose sketch fingerprints the document
// model: words of several scripts, with case, diacritics, digits and
// punctuation, so that a change of the tokenizer, the normalization, the
// shingling, the hashing, the signature or the band keys changes it.
const modelText = `The Quick brown fox, née Zoë, jumped over 12 lazy dogs at 3:45 p.m.; "Ça va?" — Straße, ÆØÅ, İstanbul.
Съешь же ещё этих мягких французских булок, да выпей чаю. Ελληνικά γράμματα 2024.
我能吞下玻璃而不伤身体。日本語の文章も、ここにあります。한국어 문장도 있습니다.
هذه جملة عربية للاختبار. זה משפט בעברית. यह हिंदी का वाक्य है। ภาษาไทยไม่มีช่องว่าง
the quick brown fox jumped over the lazy dog again and again, 0.5 + 0.25 = 0.75`

// ModelFingerprint fingerprints the document model of this build under
// p: the xxhash of what a Sketcher computes of a fixed text (tokens,
// shingle set, signature, band keys and fingerprint), as 16 hex digits.
// An index of version 3 stores its documents' texts and records the
// fingerprint of the build that made it: verify and query sketch the
// texts again, which is only right if this build computes what that one
// did (the band records in bands/ hold that build's keys).
func ModelFingerprint(p job.Params) (string, error) {
	sk, err := NewSketcher(p)
	if err != nil {
		return "", err
	}
	s := sk.Sketch([]byte(modelText))
	h := xxhash.New()
	var b []byte
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Tokens))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s.SetBytes)))
	b = append(b, s.SetBytes...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s.Sig)))
	b = append(b, s.Sig...)
	for _, k := range s.Keys {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	b = binary.LittleEndian.AppendUint64(b, s.FP.Hi)
	b = binary.LittleEndian.AppendUint64(b, s.FP.Lo)
	h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64()), nil
}
