//go:build riscv64

package riscv64

import "github.com/jiege-go/jiege/mm"

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
func (userMemory) FreeTables(root uintptr) {
	FreePageTable(root)
}
func (userMemory) Map(root, va, pa uintptr, perm uint64) bool { return MapUserPage(root, va, pa, perm) }

// Flush and FlushPage need no local flush: this hart runs on the kernel
// table now, and loads a user table with a full flush. Harts in U-mode on
// root's table are interrupted and leave it (userShootdown).
func (userMemory) Flush(root uintptr)                 { userShootdown(root) }
func (userMemory) FlushPage(root uintptr, va uintptr) { userShootdown(root) }
