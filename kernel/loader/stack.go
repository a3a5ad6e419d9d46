package loader

import (
	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// Auxiliary vector keys (Linux include/uapi/linux/auxvec.h).
const (
	atNull        = 0
	atPhdr        = 3
	atPhent       = 4
	atPhnum       = 5
	atPagesz      = 6
	atBase        = 7
	atFlags       = 8
	atEntry       = 9
	atUID         = 11
	atEUID        = 12
	atGID         = 13
	atEGID        = 14
	atHwcap       = 16
	atClktck      = 17
	atSecure      = 23
	atRandom      = 25
	atExecfn      = 31
	atSysinfoEhdr = 33
)

// hwcapRV64GC is AT_HWCAP for rv64gc: one bit per single-letter extension.
const hwcapRV64GC = 1<<('I'-'A') | 1<<('M'-'A') | 1<<('A'-'A') | 1<<('F'-'A') | 1<<('D'-'A') | 1<<('C'-'A')

// StackSize is RLIMIT_STACK's default soft limit, and so the usual size of
// a new program's stack mapping; StackMin and StackMax bound the mapping
// whatever the limit (an unlimited stack gets StackMax).
const (
	StackSize = 8 << 20
	StackMin  = 128 << 10
	StackMax  = 1 << 30
)

// stackMapping is the size of the stack mapping for a soft RLIMIT_STACK.
func stackMapping(limit uint64) uintptr {
	size := min(max(limit, StackMin), StackMax)
	return uintptr(size+mm.PageSize-1) &^ (mm.PageSize - 1)
}

// buildStack maps the stack of a new program and writes its initial
// contents as Linux does on riscv64: argc, argv, envp and the auxiliary
// vector at the returned (16-byte aligned) stack pointer, the strings and
// the AT_RANDOM bytes above them.
func buildStack(as *mm.AddressSpace, argv, envp []string, exe, interp *Image, execfn string, size uintptr, random [16]byte) (uintptr, error) {
	top := mm.UserStackTop
	if _, err := as.Map(top-size, size, mm.PTERead|mm.PTEWrite, true); err != nil {
		return 0, err
	}
	// Strings and random bytes, growing down from the top.
	sp := top
	push := func(b []byte) (uintptr, error) {
		sp -= uintptr(len(b))
		return sp, as.CopyOut(sp, b)
	}
	strs := func(list []string) ([]uintptr, error) {
		addrs := make([]uintptr, len(list))
		for i, s := range list {
			a, err := push(append([]byte(s), 0))
			if err != nil {
				return nil, err
			}
			addrs[i] = a
		}
		return addrs, nil
	}
	execfnAddr, err := push(append([]byte(execfn), 0))
	if err != nil {
		return 0, err
	}
	argEnd := sp
	argvAddrs, err := strs(argv)
	if err != nil {
		return 0, err
	}
	envEnd := sp
	envpAddrs, err := strs(envp)
	if err != nil {
		return 0, err
	}
	as.Layout.ArgStart, as.Layout.ArgEnd, as.Layout.EnvStart, as.Layout.EnvEnd = envEnd, argEnd, sp, envEnd
	sp &^= 15
	randomAddr, err := push(random[:])
	if err != nil {
		return 0, err
	}
	base := uintptr(0)
	if interp != nil {
		base = interp.Bias
	}
	auxv := []uint64{
		atPhdr, uint64(exe.Phdr), atPhent, uint64(exe.Phent), atPhnum, uint64(exe.Phnum),
		atPagesz, mm.PageSize, atBase, uint64(base), atFlags, 0, atEntry, uint64(exe.Entry),
		atUID, 0, atEUID, 0, atGID, 0, atEGID, 0, atHwcap, hwcapRV64GC, atClktck, 100,
		atSecure, 0, atRandom, uint64(randomAddr), atExecfn, uint64(execfnAddr),
		atSysinfoEhdr, uint64(VDSOAddr), atNull, 0,
	}
	words := []uint64{uint64(len(argv))}
	for _, a := range argvAddrs {
		words = append(words, uint64(a))
	}
	words = append(words, 0)
	for _, a := range envpAddrs {
		words = append(words, uint64(a))
	}
	words = append(words, 0)
	words = append(words, auxv...)
	as.SavedAuxv = linux.SliceAsBytes(auxv)
	sp -= uintptr(8 * len(words))
	sp &^= 15
	if err := as.CopyOut(sp, linux.SliceAsBytes(words)); err != nil {
		return 0, err
	}
	as.Layout.StartStack = sp
	return sp, nil
}
