//go:build riscv64

package riscv64

import "github.com/jiege-go/jiege/mm"

func sfenceVMAPage(va uintptr)

// UserMemory is the mm.Memory of user address spaces: the kernel's frame
// allocator, shared with the trap handler, used with interrupts masked.
var UserMemory mm.Memory = userMemory{}

type userMemory struct{}

func (userMemory) AllocFrame() uintptr  { return AllocFrame() }
func (userMemory) FreeFrame(pa uintptr) { FreeFrame(pa) }
func (userMemory) FreeTables(root uintptr) {
	FreePageTable(root)
}
func (userMemory) Map(root, va, pa uintptr, perm uint64) bool { return MapUserPage(root, va, pa, perm) }
func (userMemory) Flush()                                     { sfenceVMA() }
func (userMemory) FlushPage(va uintptr)                       { sfenceVMAPage(va) }
