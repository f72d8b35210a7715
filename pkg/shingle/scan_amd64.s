//go:build amd64 && !purego

#include "textflag.h"

// func hasAVX2() bool
TEXT ·hasAVX2(SB), NOSPLIT, $0-1
	XORL CX, CX
	XORL AX, AX
	CPUID
	CMPL AX, $7
	JLT  no
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x18000000, CX // OSXSAVE and AVX
	CMPL CX, $0x18000000
	JNE  no
	XORL CX, CX
	XGETBV               // XCR0 in DX:AX
	ANDL $6, AX          // XMM and YMM state enabled by the OS
	CMPL AX, $6
	JNE  no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	BTL  $5, BX          // AVX2
	JCC  no
	MOVB $1, ret+0(FP)
	RET
no:
	MOVB $0, ret+0(FP)
	RET

// CLASSIFY32 classifies the 32 bytes in register x: it stores the
// lower-cased bytes at off(DI), and leaves the run mask in runs and the
// high mask in hi (32 bits each, zero-extended).
#define CLASSIFY32(x, off, runs, hi) \
	VPOR      Y14, x, Y2    \ // x | 0x20
	VPSUBB    Y13, Y2, Y2   \ // - 'a'
	VPMINUB   Y12, Y2, Y3   \
	VPCMPEQB  Y3, Y2, Y3    \ // letter: (x|0x20)-'a' <= 25 unsigned
	VPSUBB    Y11, x, Y4    \ // x - '0'
	VPMINUB   Y10, Y4, Y5   \
	VPCMPEQB  Y5, Y4, Y5    \ // digit: x-'0' <= 9 unsigned
	VPAND     Y14, Y3, Y6   \
	VPOR      x, Y6, Y6     \ // x | (letter & 0x20)
	VPAND     Y9, Y5, Y7    \ // digit & zeroDigits
	VPANDN    Y6, Y7, Y6    \ // &^
	VMOVDQU   Y6, off(DI)   \
	VPOR      Y5, Y3, Y3    \
	VPMOVMSKB Y3, runs      \
	VPMOVMSKB x, hi         \
	ORL       hi, runs

// func scanBlocksAVX2(text, low *byte, runs, high *uint64, n int, zeroDigits uint64) uint64
TEXT ·scanBlocksAVX2(SB), NOSPLIT, $0-56
	MOVQ text+0(FP), SI
	MOVQ low+8(FP), DI
	MOVQ runs+16(FP), R8
	MOVQ high+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ zeroDigits+40(FP), AX
	VMOVQ AX, X9
	VPBROADCASTB X9, Y9
	MOVQ $0x20, AX
	VMOVQ AX, X14
	VPBROADCASTB X14, Y14
	MOVQ $0x61, AX
	VMOVQ AX, X13
	VPBROADCASTB X13, Y13
	MOVQ $25, AX
	VMOVQ AX, X12
	VPBROADCASTB X12, Y12
	MOVQ $0x30, AX
	VMOVQ AX, X11
	VPBROADCASTB X11, Y11
	MOVQ $9, AX
	VMOVQ AX, X10
	VPBROADCASTB X10, Y10
	XORQ R11, R11
loop:
	TESTQ CX, CX
	JZ    done
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	CLASSIFY32(Y0, 0, AX, BX)
	CLASSIFY32(Y1, 32, DX, R10)
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, (R8)
	SHLQ $32, R10
	ORQ  R10, BX
	MOVQ BX, (R9)
	ORQ  BX, R11
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $8, R8
	ADDQ $8, R9
	DECQ CX
	JMP  loop
done:
	VZEROUPPER
	MOVQ R11, ret+48(FP)
	RET
