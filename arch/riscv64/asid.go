//go:build riscv64

package riscv64

import (
	"sync/atomic"

	"github.com/jiege-go/jiege/mm"
)

// Address-space identifiers. The kernel's page table runs as ASID 0 and
// a user table as 1 + its root's page number modulo userASIDs. Each hart
// remembers which root last ran under each ASID and fences when that
// changes, so translations cached under an ASID always belong to the
// table now running under it: switching satp then needs no sfence.vma.
// Under QEMU that saves a full TLB and jump-cache flush per switch, two
// per system call: its satp write already flushes, and the fence flushed
// again.
//
// A record of 0 means "fence before running this ASID": a TLB shootdown
// (smp.go) clears it on the harts that are not running the changed table
// right now, and a freed table's root is cleared everywhere (forgetRoot).
// Records are written by their own hart in switchSatp and by shootdowns,
// all under the kernel lock, and by forgetRoot, which only clears.

const (
	userASIDs = 511
	satpASID  = 44 // bit position of satp.ASID
	satpPPN   = 1<<44 - 1
)

var (
	// asidsOn is set at boot when satp keeps 9 bits of ASID; without,
	// every switch fences as before.
	asidsOn bool
	// asidRoot[hart][asid] is the root page number last run under the
	// ASID on the hart (0: none since boot or since its last shootdown).
	asidRoot [maxHarts][userASIDs + 1]uint32
)

// probeASIDs checks that satp keeps the ASID bits the kernel uses, then
// loads the kernel table (ASID 0); it runs in earlyInit. The boot table
// and the kernel table map the kernel's half alike.
//
//go:nosplit
func probeASIDs() {
	writeSatpOnly(kernelSatp | userASIDs<<satpASID)
	asidsOn = readSatp()>>satpASID&userASIDs == userASIDs
	writeSatpOnly(kernelSatp)
}

// asidOf returns the ASID that the table in satp (without ASID) runs as.
//
//go:nosplit
func asidOf(satp uint64) uint64 {
	if satp == kernelSatp {
		return 0
	}
	return 1 + (satp&satpPPN)%userASIDs
}

// withASID returns satp with the ASID its table runs as, when ASIDs are on.
//
//go:nosplit
func withASID(satp uint64) uint64 {
	if !asidsOn {
		return satp
	}
	return satp | asidOf(satp)<<satpASID
}

// switchSatp loads satp (a table's, without ASID) on h, fencing the
// translation cache only when the ASID last ran another table here or a
// shootdown cleared the record.
//
//go:nosplit
func switchSatp(h *hart, satp uint64) {
	fence := !asidsOn && satp != h.satp
	table, asid := satp, uint64(0)
	if asidsOn {
		root := uint32(satp & satpPPN)
		asid = asidOf(satp)
		r := &asidRoot[h.id][asid]
		if atomic.LoadUint32(r) != root {
			atomic.StoreUint32(r, root)
			fence = true
		}
		satp = withASID(satp)
	}
	if satp != h.satp {
		writeSatpOnly(satp)
		h.satp, h.table, h.tableASID = satp, table, asid
	}
	if fence {
		sfenceVMA()
	}
}

// satpLoaded reports whether h runs the table in satp (without ASID)
// already, such that switchSatp would neither write satp nor fence.
//
//go:nosplit
func satpLoaded(h *hart, satp uint64) bool {
	return satp == h.table && (!asidsOn || atomic.LoadUint32(&asidRoot[h.id][h.tableASID]) == uint32(satp&satpPPN))
}

// kernelTableLoaded records on h that the kernel table (ASID 0) is in satp.
//
//go:nosplit
func kernelTableLoaded(h *hart) {
	h.satp, h.table, h.tableASID = kernelSatp, kernelSatp, 0
}

// forgetASID makes hart i fence before it next runs the table in satp
// (without ASID), if that table last ran under its ASID there.
//
//go:nosplit
func forgetASID(i int, satp uint64) {
	atomic.CompareAndSwapUint32(&asidRoot[i][asidOf(satp)], uint32(satp&satpPPN), 0)
}

// forgetRoot drops a table's root from every hart's record before the
// table is freed, so that the next table to run under its ASID (maybe one
// at the same root) fences first. No hart runs the table any more.
//
//go:nosplit
func forgetRoot(rootPA uintptr) {
	for i := range asidRoot {
		forgetASID(i, mm.SatpSv39(rootPA))
	}
}
