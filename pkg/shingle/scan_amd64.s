//go:build amd64 && !purego

#include "textflag.h"

// func hasAVX2() bool: AVX2 (with OS support), BMI1 and BMI2.
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
	BTL  $3, BX          // BMI1
	JCC  no
	BTL  $8, BX          // BMI2
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

// func runBoundsBMI(runs *uint64, n int, words *uint64) int
// runBoundsGo with TZCNT, BLSR and ANDN; runs[n] must be readable.
TEXT ·runBoundsBMI(SB), NOSPLIT, $0-32
	MOVQ runs+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ words+16(FP), DI
	MOVQ DI, R15  // to count the words at the end
	XORQ R8, R8   // carry: the last byte of the previous block is in a run
	MOVQ $-1, R9  // pend: start of a run from an earlier block, or -1
	XORQ R10, R10 // base = 64 * block index
blockloop:
	TESTQ CX, CX
	JZ    done
	MOVQ  (SI), AX       // rw
	MOVQ  8(SI), BX      // the next block
	LEAQ  (AX)(AX*1), DX
	ORQ   R8, DX
	ANDNQ AX, DX, DX     // starts = rw &^ (rw<<1 | carry)
	MOVQ  AX, R11
	SHRQ  $1, R11
	SHLQ  $63, BX
	ORQ   BX, R11
	ANDNQ AX, R11, R11   // ends = rw &^ (rw>>1 | next<<63)
	MOVQ  AX, R8
	SHRQ  $63, R8
pairloop:
	TESTQ R11, R11
	JZ    blockdone
	TESTQ R9, R9
	JNS   havepend
	TZCNTQ DX, R12
	BLSRQ  DX, DX
	ADDQ   R10, R12      // i
	JMP    gotstart
havepend:
	MOVQ R9, R12
	MOVQ $-1, R9
gotstart:
	TZCNTQ R11, R13
	BLSRQ  R11, R11
	LEAQ   1(R10)(R13*1), R13 // j
	SHLQ   $32, R12
	ORQ    R13, R12
	MOVQ   R12, (DI)
	ADDQ   $8, DI
	JMP    pairloop
blockdone:
	TESTQ  DX, DX
	JZ     nextblock
	TZCNTQ DX, R9        // a run that ends in a later block
	ADDQ   R10, R9
nextblock:
	ADDQ $8, SI
	ADDQ $64, R10
	DECQ CX
	JMP  blockloop
done:
	SUBQ R15, DI
	SHRQ $3, DI
	MOVQ DI, ret+24(FP)
	RET

// func hashBoundsBMI(low *byte, words *uint64, n int) int
// hashBoundsGo for words[:n] with MULX and BZHI, up to the first run of 16
// bytes or more; returns the number of words done.
TEXT ·hashBoundsBMI(SB), NOSPLIT, $0-32
	MOVQ low+0(FP), SI
	MOVQ words+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ CX, R15
	MOVQ $0x243f6a8885a308d3, R8 // wordSeed
	MOVQ $0xa0761d6478bd642f, R9 // wordMul1
	MOVQ $0xe7037ed1a0b428db, R10 // wordMul2
	TESTQ CX, CX
	JZ    done
loop:
	MOVQ (DI), AX
	MOVQ AX, BX
	SHRQ $32, BX          // i
	MOVL AX, AX           // j
	SUBQ BX, AX           // l = j - i
	CMPQ AX, $16
	JAE  done             // a long word: left to Go
	MOVQ (SI)(BX*1), DX   // c1
	MOVQ AX, R11
	SHLQ $56, R11         // l<<56
	CMPQ AX, $8
	JAE  ge8
	SHLQ  $3, AX
	BZHIQ AX, DX, DX      // c1 & mask(l)
	XORQ  R8, DX
	XORQ  R11, DX
	MULXQ R10, R12, R13   // R13:R12 = DX * wordMul2
	XORQ  R13, R12
	MOVQ  R12, (DI)
	ADDQ  $8, DI
	DECQ  CX
	JNZ   loop
	JMP   done
ge8:
	MOVQ  8(SI)(BX*1), BX // c2
	XORQ  R8, DX
	MULXQ R9, R12, R13    // mum(wordSeed ^ c1, wordMul1)
	XORQ  R13, R12
	SUBQ  $8, AX
	SHLQ  $3, AX
	BZHIQ AX, BX, BX      // c2 & mask(l-8)
	XORQ  BX, R12
	XORQ  R11, R12
	MOVQ  R12, DX
	MULXQ R10, R12, R13   // * wordMul2
	XORQ  R13, R12
	MOVQ  R12, (DI)
	ADDQ  $8, DI
	DECQ  CX
	JNZ   loop
done:
	SUBQ CX, R15
	MOVQ R15, ret+24(FP)
	RET
