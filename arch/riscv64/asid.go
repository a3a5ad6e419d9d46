//go:build riscv64

package riscv64

// Address-space identifiers. The kernel's page table runs as ASID 0 and
// a user table as 1 + its root's page number modulo userASIDs. Each hart
// remembers which root last ran under each user ASID and fences when that
// changes (and forgets a root whose table is freed), so translations cached
// under an ASID always belong to the table now running under it: switching
// satp then needs no sfence.vma. Under QEMU that saves a full TLB and
// jump-cache flush per switch, two per system call: its satp write already
// flushes, and the fence flushed again.
//
// Page-table changes fence this hart (mm's Flush and FlushPage: every
// ASID). With several harts, the TLB shootdown must also reach each hart
// that has run the table's ASID since its last fence, not only those
// running it now: clearing that hart's asidRoot entry makes it fence
// before it runs the ASID again.

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
	// user ASID on the hart (0: none since boot or since its table was freed).
	asidRoot [maxHarts][userASIDs + 1]uint32
)

// probeASIDs checks that satp keeps the ASID bits the kernel uses; it
// runs in earlyInit, while M-mode accesses are not translated.
//
//go:nosplit
func probeASIDs() {
	writeSatpOnly(kernelSatp | userASIDs<<satpASID)
	asidsOn = readSatp()>>satpASID&userASIDs == userASIDs
	writeSatpOnly(0)
}

//go:nosplit
func userASID(root uint64) uint64 { return 1 + root%userASIDs }

// switchSatp loads satp on h: a user table's satp (from its Frame) gets its
// ASID, and the translation cache is fenced only when that ASID last ran
// another table here.
//
//go:nosplit
func switchSatp(h *hart, satp uint64) {
	fence := !asidsOn
	if asidsOn && satp != kernelSatp {
		root := satp & satpPPN
		asid := userASID(root)
		satp |= asid << satpASID
		if r := &asidRoot[h.id][asid]; *r != uint32(root) {
			*r = uint32(root)
			fence = true
		}
	}
	if satp == h.satp {
		return
	}
	writeSatpOnly(satp)
	if fence {
		sfenceVMA()
	}
	h.satp = satp
}

// forgetRoot drops a freed table's root from every hart's record, so that
// the next table to run under its ASID fences first. Interrupts are off.
//
//go:nosplit
func forgetRoot(rootPA uintptr) {
	root := uint64(rootPA >> 12)
	asid := userASID(root)
	for i := range asidRoot {
		if asidRoot[i][asid] == uint32(root) {
			asidRoot[i][asid] = 0
		}
	}
}
