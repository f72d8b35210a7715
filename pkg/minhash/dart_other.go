//go:build !amd64 || purego

package minhash

// useAsm selects the assembly kernels of Dart.
const useAsm = false

func dartStartAMD64(el *elem, act *uint32, hashes *uint64, n int, guide *uint64, p *[kParams]uint64) int {
	panic("minhash: Dart assembly kernels not available")
}

func dartPassAMD64(el *elem, act *uint32, n int, mins *uint64, guide *uint64, p *[kParams]uint64) int {
	panic("minhash: Dart assembly kernels not available")
}

func dartSlabAMD64(el *elem, act *uint32, n int, mins *uint64, guide *uint64, p *[kParams]uint64) {
	panic("minhash: Dart assembly kernels not available")
}
