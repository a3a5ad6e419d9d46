//go:build riscv64

package riscv64

import "sync/atomic"

// Code written as data. On RISC-V a store reaches instruction fetch only
// through fence.i, and only on the hart that executes it, so code the
// kernel puts in a frame (a file's page, a copy-on-write copy, a zeroed
// page) or a program writes and announces (riscv_flush_icache) needs a
// fence.i on every hart that may run it. Linux fences every hart when it
// maps such a page executable (flush_icache_pte). Here codeGen counts
// those writes: every hart fences before it enters U-mode if the count
// moved since its last fence (fetchCode), and the harts running the
// program's table at that moment, which reach user code without entering
// U-mode again, are asked at once and waited for (syncCode), before the
// page is mapped. QEMU's TCG keeps fetches coherent without any of this;
// under it a fence.i only ends a translation block.
var codeGen uint64

// fetchCode runs fence.i on h if code was written since h last did; h is
// about to enter U-mode.
//
//go:nosplit
func fetchCode(h *hart) {
	if g := atomic.LoadUint64(&codeGen); g != h.codeGen {
		fenceI()
		h.codeGen = g
	}
}

// SyncICache makes code written to memory for the user table rooted at
// root visible to instruction fetch: every hart before it next enters
// U-mode, and the harts running that table now before SyncICache
// returns. Call it after writing the code and before mapping it.
func (userMemory) SyncICache(root uintptr) {
	atomic.AddUint64(&codeGen, 1)
	if nHarts > 1 {
		ecall2(sysSyncCode, root, 0)
	}
}

// syncCode asks every other hart that runs the user table in satp
// (without ASID) to run fence.i, and waits for the answers; the kernel
// lock is held. Another hart fences when it next enters U-mode.
//
//go:nosplit
func syncCode(h *hart, satp uint64) {
	loaded := withASID(satp)
	shootdownOwner = h.id
	for i := 0; i < nHarts; i++ {
		if o := &harts[i]; i != h.id && !o.idle && o.satp == loaded {
			atomic.StoreUint32(&o.flushReq, flushCode)
			sendSoft(i)
		}
	}
	waitFlushes(h)
}
