package sketch

import (
	"encoding/binary"
	"fmt"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/minhash"
)

// Signature is a document's decoded signature: its MinHash values, or its
// SimHash fingerprint.
type Signature struct {
	MinHash minhash.Signature
	SimHash uint64
}

// DecodeSignature reads a stored signature of a job with parameters p.
func DecodeSignature(p job.Params, b []byte) (Signature, error) {
	if p.Method == job.MethodSimHash {
		if len(b) != 8 {
			return Signature{}, fmt.Errorf("SimHash fingerprint of %d bytes, want 8", len(b))
		}
		return Signature{SimHash: binary.LittleEndian.Uint64(b)}, nil
	}
	sig, err := DecodeSig(b)
	return Signature{MinHash: sig}, err
}

// AppendSig appends a MinHash signature as little-endian 32-bit values.
func AppendSig(dst []byte, sig minhash.Signature) []byte {
	for _, v := range sig {
		dst = binary.LittleEndian.AppendUint32(dst, v)
	}
	return dst
}

// DecodeSig reads a signature AppendSig wrote.
func DecodeSig(b []byte) (minhash.Signature, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("signature of %d bytes is not a multiple of 4", len(b))
	}
	sig := make(minhash.Signature, len(b)/4)
	for i := range sig {
		sig[i] = binary.LittleEndian.Uint32(b[4*i : 4*i+4 : 4*i+4])
	}
	return sig, nil
}

// AppendSet appends the sorted shingle set as little-endian 64-bit values:
// the bytes stored for exact verification and fingerprinted for the
// exact-duplicate pass.
func AppendSet(dst []byte, set []uint64) []byte {
	for _, v := range set {
		dst = binary.LittleEndian.AppendUint64(dst, v)
	}
	return dst
}

// DecodeSet reads a set AppendSet wrote.
func DecodeSet(b []byte) ([]uint64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("shingle set of %d bytes is not a multiple of 8", len(b))
	}
	set := make([]uint64, len(b)/8)
	for i := range set {
		set[i] = binary.LittleEndian.Uint64(b[8*i : 8*i+8 : 8*i+8])
	}
	return set, nil
}
