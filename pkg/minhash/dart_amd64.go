//go:build amd64 && !purego

package minhash

// useAsm selects the assembly kernels of Dart.
const useAsm = true

// dartStartAMD64 is kernel.startGo for hashes[:n] (n >= 1), in assembly.
//
//go:noescape
func dartStartAMD64(el *elem, act *uint32, hashes *uint64, n int, guide *uint64, p *[kParams]uint64) int

// dartPassAMD64 is kernel.passGo for act[:n] (n >= 1), in assembly.
//
//go:noescape
func dartPassAMD64(el *elem, act *uint32, n int, mins *uint64, guide *uint64, p *[kParams]uint64) int

// dartSlabAMD64 is kernel.slabGo for act[:n] (n >= 1), in assembly.
//
//go:noescape
func dartSlabAMD64(el *elem, act *uint32, n int, mins *uint64, guide *uint64, p *[kParams]uint64)
