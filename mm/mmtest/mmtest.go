// Package mmtest gives host tests a physical memory: a page-aligned Go
// buffer behind an mm.Frames, with the mm.Memory an address space needs.
package mmtest

import (
	"testing"
	"unsafe"

	"github.com/jiege-go/jiege/mm"
)

// Memory implements mm.Memory over a Go buffer.
type Memory struct {
	Frames *mm.Frames
	// OnSyncICache, when set, is called by SyncICache: a test sees what
	// the table maps at that moment.
	OnSyncICache func(root uintptr)
	buf          []byte
}

// New returns a memory of the given number of pages, kept alive until the
// test ends.
func New(t testing.TB, pages int) *Memory {
	buf := make([]byte, (pages+1)*mm.PageSize)
	base := (uintptr(unsafe.Pointer(&buf[0])) + mm.PageSize - 1) &^ (mm.PageSize - 1)
	m := &Memory{Frames: &mm.Frames{}, buf: buf}
	m.Frames.AddRange(base, base+uintptr(pages)*mm.PageSize)
	t.Cleanup(func() { _ = m.buf })
	return m
}

func (m *Memory) AllocFrame() uintptr        { return m.Frames.Alloc() }
func (m *Memory) NewRoot() uintptr           { return m.Frames.Alloc() }
func (m *Memory) FreeFrame(pa uintptr)       { m.Frames.Free(pa) }
func (m *Memory) FreeTables(root uintptr)    { mm.FreeTables(root, true, m.Frames.Free) }
func (m *Memory) Flush(uintptr)              {}
func (m *Memory) FlushPage(uintptr, uintptr) {}

func (m *Memory) SyncICache(root uintptr) {
	if m.OnSyncICache != nil {
		m.OnSyncICache(root)
	}
}

// Map maps a user page, as the kernel's implementation does.
func (m *Memory) Map(root, va, pa uintptr, perm uint64) bool {
	return mm.Map(root, va, pa, perm|mm.PTEUser|mm.PTEAccessed|mm.PTEDirty, m.Frames)
}
