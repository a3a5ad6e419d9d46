//go:build riscv64

package riscv64

import "github.com/jiege-go/jiege/mm"

func sfenceVMAPage(va uintptr)

// UserMemory is the mm.Memory of user address spaces: the kernel's frame
// allocator, shared with the trap handler, used with interrupts masked.
var UserMemory mm.Memory = userMemory{}

type userMemory struct{}

// AllocFrame gives user memory a frame unless only the kernel's reserve
// is left: a quarter of RAM stays for the kernel (its Go heap holds the
// files, pipes and sockets), so a program that exhausts memory fails with
// ENOMEM or is killed, and the kernel goes on.
func (userMemory) AllocFrame() uintptr {
	old := disableInterrupts()
	inUse, total := frames.Stats()
	var pa uintptr
	if total-inUse > total/4 {
		pa = frames.Alloc()
	}
	restoreInterrupts(old)
	return pa
}
func (userMemory) FreeFrame(pa uintptr) { FreeFrame(pa) }
func (m userMemory) NewRoot() uintptr   { return withKernelHalf(m.AllocFrame()) }
func (userMemory) FreeTables(root uintptr) {
	FreePageTable(root)
}
func (userMemory) Map(root, va, pa uintptr, perm uint64) bool { return MapUserPage(root, va, pa, perm) }

// Flush and FlushPage make a change to root's table visible on every
// hart that may hold its old translations (userShootdown); with one hart,
// a fence of the page does for FlushPage.
func (userMemory) Flush(root uintptr) { userShootdown(root) }
func (userMemory) FlushPage(root, va uintptr) {
	if nHarts == 1 {
		sfenceVMAPage(va)
		return
	}
	userShootdown(root)
}
