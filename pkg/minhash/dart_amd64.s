//go:build amd64 && !purego

#include "textflag.h"

// The Dart kernels: kernel.startGo, kernel.passGo and kernel.slabGo
// (dart.go) in assembly, the same integer arithmetic (the tests compare
// them). Plain amd64 (GOAMD64=v1) instructions only. The Go compiler keeps
// too few of the loops' values in registers (it spills the loop index and
// reloads it from the stack on every iteration); here everything is in
// registers: SI el, DI act, R11 mins or hashes, R12 guide, R13 p, CX the
// guide shift, R8-R10 counters; AX, BX, DX, R14, R15 scratch.

// Offsets in the parameter array p (see the k* constants in dart.go).
#define P_GOLDEN 0
#define P_MIXKEY 8
#define P_TAIL 16
#define P_MASK 24
#define P_END 32
#define P_SHIFT 40
#define P_S1 48
#define P_S2 56

// MIX64 replaces AX by mix64(AX), with T as scratch; DX is destroyed.
#define MIX64(T) \
	MOVQ  AX, T;              \
	XORQ  P_MIXKEY(R13), T;   \
	MULQ  T;                  \
	XORQ  DX, AX

// GAP adds to C the gap G drawn from u = AX (guide in R12, shift in CX),
// plus ONE: G = g0 + (u < threshold). T is scratch; DX is destroyed.
#define GAP(C, T, ONE) \
	MOVQ AX, T;           \
	SHRQ CX, T;           \
	MOVQ (R12)(T*8), T;   \
	MOVL T, DX;           \
	ADDQ DX, C;           \
	CMPQ AX, T;           \
	ADCQ ONE, C

// PACK turns C (the cell c < 2^31) into the pending point
// u<<32 | virtual<<31 | c for u = AX (AX is destroyed): C = 2C + (u < tail),
// rotated right by one in 32 bits, is virtual<<31 | c.
#define PACK(C) \
	CMPQ AX, P_TAIL(R13); \
	ADCL C, C;            \
	RORL $1, C;           \
	SHLQ $32, AX;         \
	ORQ  AX, C

// func dartStartAMD64(el *elem, act *uint32, hashes *uint64, n int, guide *uint64, p *[kParams]uint64) int
TEXT ·dartStartAMD64(SB), NOSPLIT, $0-56
	MOVQ el+0(FP), SI
	MOVQ act+8(FP), DI
	MOVQ hashes+16(FP), R11
	MOVQ n+24(FP), R8
	MOVQ guide+32(FP), R12
	MOVQ p+40(FP), R13
	MOVQ P_SHIFT(R13), CX
	XORL BX, BX                // offset of el[i]
	XORL R10, R10              // na

start_loop:
	MOVQ  (R11), AX            // x
	ADDQ  $8, R11
	XORQ  P_S1(R13), AX
	IMULQ P_S2(R13), AX
	ADDQ  P_GOLDEN(R13), AX    // s: the state of the first draw
	MOVQ  AX, (SI)(BX*1)       // el[i].s
	MIX64(R14)                 // u
	XORL  R15, R15
	GAP(R15, R14, $0)          // c = G, from cell -1
	MOVL  BX, (DI)(R10*4)      // act[na] = offset of el[i]
	CMPQ  R15, P_END(R13)
	ADCQ  $0, R10              // na += c < end
	PACK(R15)
	MOVQ  R15, 8(SI)(BX*1)     // el[i].pt
	ADDQ  $16, BX
	DECQ  R8
	JNZ   start_loop

	MOVQ R10, ret+48(FP)
	RET

// func dartPassAMD64(el *elem, act *uint32, n int, mins *uint64, guide *uint64, p *[kParams]uint64) int
TEXT ·dartPassAMD64(SB), NOSPLIT, $0-56
	MOVQ el+0(FP), SI
	MOVQ act+8(FP), R8         // act[nn] is stored at (R8)(R10*4)
	MOVQ n+16(FP), R9
	LEAQ (R8)(R9*4), DI        // act[j] is read at (DI)(R9*4), j-n = R9 = -n..-1
	NEGQ R9
	MOVQ mins+24(FP), R11
	MOVQ guide+32(FP), R12
	MOVQ p+40(FP), R13
	MOVQ P_SHIFT(R13), CX
	XORL R10, R10              // nn

pass_loop:
	MOVL    (DI)(R9*4), BX     // offset of el[i]
	MOVL    BX, (R8)(R10*4)    // act[nn] = this offset, kept if nn grows below
	MOVQ    8(SI)(BX*1), AX    // pt

	// mins[pt & mask] = min(mins[pt & mask], pt rotated by 32)
	MOVQ    AX, R14
	ANDQ    P_MASK(R13), R14
	MOVQ    AX, R15
	RORQ    $32, R15
	MOVQ    (R11)(R14*8), DX
	CMPQ    R15, DX
	CMOVQCS R15, DX
	MOVQ    DX, (R11)(R14*8)

	// u = mix64(s), s advanced by golden
	MOVL    AX, R15
	ANDL    $0x7fffffff, R15   // c
	MOVQ    (SI)(BX*1), AX
	ADDQ    P_GOLDEN(R13), AX
	MOVQ    AX, (SI)(BX*1)     // el[i].s
	MIX64(R14)

	GAP(R15, R14, $1)          // c += G + 1
	CMPQ    R15, P_END(R13)
	ADCQ    $0, R10            // nn += c < end
	PACK(R15)
	MOVQ    R15, 8(SI)(BX*1)   // el[i].pt
	INCQ    R9
	JNZ     pass_loop

	MOVQ R10, ret+48(FP)
	RET

// func dartSlabAMD64(el *elem, act *uint32, n int, mins *uint64, guide *uint64, p *[kParams]uint64)
TEXT ·dartSlabAMD64(SB), NOSPLIT, $0-48
	MOVQ el+0(FP), SI
	MOVQ act+8(FP), DI
	MOVQ n+16(FP), R8
	MOVQ mins+24(FP), R11
	MOVQ guide+32(FP), R12
	MOVQ p+40(FP), R13
	MOVQ P_SHIFT(R13), CX

slab_element:
	MOVL    (DI), BX           // offset of el[i]
	ADDQ    $4, DI
	MOVQ    (SI)(BX*1), R9     // s
	MOVQ    8(SI)(BX*1), R10   // pt
	MOVL    R10, R15
	ANDL    $0x7fffffff, R15   // c

slab_point:
	// mins[pt & mask] = min(mins[pt & mask], pt rotated by 32)
	MOVQ    R10, R14
	ANDQ    P_MASK(R13), R14
	RORQ    $32, R10
	MOVQ    (R11)(R14*8), DX
	CMPQ    R10, DX
	CMOVQCS R10, DX
	MOVQ    DX, (R11)(R14*8)

	ADDQ    P_GOLDEN(R13), R9  // s
	MOVQ    R9, AX
	MIX64(R14)                 // u
	GAP(R15, R14, $1)          // c += G + 1
	MOVQ    R15, R10
	PACK(R10)                  // pt
	CMPQ    R15, P_END(R13)
	JCS     slab_point         // c < end

	MOVQ    R9, (SI)(BX*1)
	MOVQ    R10, 8(SI)(BX*1)
	DECQ    R8
	JNZ     slab_element
	RET
