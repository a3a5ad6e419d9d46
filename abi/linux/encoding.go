package linux

import (
	"math/bits"
	"unsafe"
)

// The kernel runs on riscv64, where Go lays out a structure of fixed-size
// integer fields without implicit padding exactly as C does, so an ABI
// structure is encoded as its own memory (encoding/binary's reflection
// cost a fstat more than the rest of it). TestStructsAreCLayout checks
// every structure of this package, and TestCallersUseCLayout every type
// the encoding functions are called with.

// AsBytes returns v's memory: the structure's encoding. The slice aliases
// v.
func AsBytes[T any](v *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
}

// SliceAsBytes returns the memory of an array of structures.
func SliceAsBytes[T any](v []T) []byte {
	var one T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), uintptr(len(v))*unsafe.Sizeof(one))
}

// Decode fills v from its encoding in b and returns the bytes it used: a
// b shorter than v fills only v's leading fields (a short sockaddr or
// clone_args), the rest keeps its value.
func Decode[T any](b []byte, v *T) int {
	return copy(AsBytes(v), b)
}

// Append appends v's encoding to b.
func Append[T any](b []byte, v T) []byte {
	return append(b, AsBytes(&v)...)
}

// Uint64 decodes a native 64-bit word: an eventfd or timerfd counter, a
// pointer in user memory.
func Uint64(b []byte) uint64 {
	var v uint64
	copy(AsBytes(&v), b[:8])
	return v
}

// PutUint64 encodes a native 64-bit word into b.
func PutUint64(b []byte, v uint64) {
	copy(b[:8], AsBytes(&v))
}

// Htons converts a port to network byte order, as sin_port holds it.
func Htons(v uint16) uint16 { return bits.ReverseBytes16(v) }

// Ntohs converts a port from network byte order.
func Ntohs(v uint16) uint16 { return bits.ReverseBytes16(v) }

// InAddrWord is an in_addr_t as the kernel holds it, network byte order
// in a native word: what /proc/net/route prints in hex.
func InAddrWord(a [4]byte) uint32 {
	var v uint32
	Decode(a[:], &v)
	return v
}

// Inet4Mask is the IPv4 netmask of a prefix length, in network byte order.
func Inet4Mask(prefixBits int) [4]byte {
	m := ^uint32(0) << (32 - prefixBits)
	if prefixBits <= 0 {
		m = 0
	}
	return [4]byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}
}
