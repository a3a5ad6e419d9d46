//go:build riscv64

package riscv64

// The firmware interface: what the kernel asks of M-mode, the timer, the
// software interrupts (IPIs), remote TLB fences, starting harts, power-off
// and the early console, served by one of two implementations.
//
//   - Its own (Entry, booted with the trampoline as -bios): the kernel
//     owns M-mode. Sstc's stimecmp, the CLINT's msip turned into the
//     supervisor software interrupt by machineTrap, fences asked of each
//     hart by IPI, the harts released from Entry's wait, the test device,
//     the UART.
//   - SBI (sbiEntry, the Linux Image, booted as OpenSBI's payload): the
//     SBI extensions the firmware has, each probed at boot and named on
//     the boot log, with Sstc still where the device tree's ISA string
//     has it (the firmware enables it).
//
// sbiBoot says which; each function below chooses with it.

import (
	"sync/atomic"

	"github.com/jiege-go/jiege/mm"
)

// SBI extension IDs and the function IDs used.
const (
	sbiBase           = 0x10
	sbiTime           = 0x54494D45 // "TIME"
	sbiIPI            = 0x735049   // "sPI"
	sbiRFence         = 0x52464E43 // "RFNC"
	sbiHSM            = 0x48534D   // "HSM"
	sbiSRST           = 0x53525354 // "SRST"
	sbiDBCN           = 0x4442434E // "DBCN"
	sbiLegacyPutchar  = 0x01
	sbiLegacyShutdown = 0x08

	baseGetSpecVersion = 0
	baseGetImplID      = 1
	baseGetImplVersion = 2
	baseProbeExtension = 3
	rfenceSfenceVMA    = 1
	hsmHartStart       = 0
	hsmHartGetStatus   = 2
	hsmStopped         = 1 // a hart's state, from hart_get_status
	srstReset          = 0
	srstShutdown       = 0 // reset types
	srstColdReboot     = 1
	srstNoReason       = 0
	srstSystemFailure  = 1
	dbcnWriteByte      = 2
)

var (
	sbiBoot     bool // booted by SBI firmware through sbiEntry (set before the BSS is used)
	sbiBootHart int  // the hart id the firmware booted the kernel on (set with sbiBoot)
	// What the firmware offers, probed by initSBI.
	sbiHas struct{ time, ipi, rfence, hsm, srst, dbcn, legacyPutchar, legacyShutdown bool }
	sstc   = true // stimecmp works: always under our own M-mode code
	// sbiEntryFree is 1 until a hart takes sbiEntry's lottery, and
	// secondariesHeld 1 until startHarts lets the harts that lost it go
	// on. Both start as 1 so that they lie in the image's data, which
	// the firmware loads afresh at every boot, and not in the BSS, which
	// the winner zeroes while the others may already be waiting.
	sbiEntryFree    uint32 = 1
	secondariesHeld uint32 = 1
)

// Implemented in sbi_riscv64.s.
func sbiEntry()
func sbiSecondaryEntry()
func sbiSecondaryEntryPA() uintptr
func sbiMisplaced()
func sbiCall(eid, fid, a0, a1, a2, a3 uint64) (err int64, value uint64)

// initSBI probes the firmware's extensions and chooses the timer; the boot
// hart runs it in earlyInit before it uses any of them, and says on the
// boot log what it found and uses.
//
//go:nosplit
func initSBI(dtb, bootNode uintptr) {
	sbiHas.time, sbiHas.ipi, sbiHas.rfence = sbiProbe(sbiTime), sbiProbe(sbiIPI), sbiProbe(sbiRFence)
	sbiHas.hsm, sbiHas.srst, sbiHas.dbcn = sbiProbe(sbiHSM), sbiProbe(sbiSRST), sbiProbe(sbiDBCN)
	sbiHas.legacyPutchar, sbiHas.legacyShutdown = sbiProbe(sbiLegacyPutchar), sbiProbe(sbiLegacyShutdown)
	sstc = bootNode != 0 && isaHas(dtb, bootNode, "sstc")

	_, spec := sbiCall(sbiBase, baseGetSpecVersion, 0, 0, 0, 0)
	_, impl := sbiCall(sbiBase, baseGetImplID, 0, 0, 0, 0)
	_, implVersion := sbiCall(sbiBase, baseGetImplVersion, 0, 0, 0, 0)
	print("sbi: spec ")
	printDec(int64(spec >> 24 & 0x7f))
	print(".")
	printDec(int64(spec & 0xffffff))
	print(", implementation ")
	printDec(int64(impl))
	if impl == 1 {
		print(" (OpenSBI ")
		printDec(int64(implVersion >> 16))
		print(".")
		printDec(int64(implVersion & 0xffff))
		print(")")
	}
	print("\nsbi: timer ")
	switch {
	case sstc:
		print("Sstc stimecmp")
	case sbiHas.time:
		print("TIME set_timer")
	default:
		fatal("the firmware has no SBI TIME extension and the hart no Sstc")
	}
	if !sbiHas.ipi {
		fatal("the firmware has no SBI IPI extension")
	}
	print(", IPIs sPI, remote fences ")
	if sbiHas.rfence {
		print("RFNC")
	} else {
		print("by IPI")
	}
	print(", harts ")
	if sbiHas.hsm {
		print("HSM")
	} else {
		print("none started (no HSM)")
	}
	print(", power-off ")
	if sbiHas.srst {
		print("SRST")
	} else {
		print("legacy shutdown")
	}
	print(", early console ")
	if sbiHas.dbcn {
		print("DBCN")
	} else {
		print("legacy putchar")
	}
	print("\n")
}

// sbiProbe reports whether the firmware has extension eid.
//
//go:nosplit
func sbiProbe(eid uint64) bool {
	err, v := sbiCall(sbiBase, baseProbeExtension, eid, 0, 0, 0)
	return err == 0 && v != 0
}

// isaHas reports whether the ISA string of the cpu node at node names the
// multi-letter extension ext.
//
//go:nosplit
func isaHas(dtb, node uintptr, ext string) bool {
	v, n, ok := fdtFindFrom(dtb, node, "", "riscv,isa")
	if !ok {
		return false
	}
	// Extensions follow the single letters, each after an underscore.
	for i := uintptr(0); i+uintptr(len(ext)) < uintptr(n); i++ {
		if *(*byte)(mm.Ptr(v + i)) != '_' {
			continue
		}
		if cstrHasPrefix(v+i+1, ext) {
			if c := *(*byte)(mm.Ptr(v + i + 1 + uintptr(len(ext)))); c == '_' || c == 0 {
				return true
			}
		}
	}
	return false
}

// startHarts lets the harts waiting in sbiEntry go on, and starts every
// other hart through HSM at sbiSecondaryEntry; under our own M-mode code
// they wait in Entry for smpRelease instead. A hart_start that fails for a
// hart that is not stopped is no failure: that hart went through
// sbiEntry (see its contract) and is on its way.
//
//go:nosplit
func startHarts() {
	if !sbiBoot {
		return
	}
	atomic.StoreUint32(&secondariesHeld, 0)
	if !sbiHas.hsm {
		return
	}
	for i := 1; i < nHarts; i++ {
		id := uint64(harts[i].hartID)
		err, _ := sbiCall(sbiHSM, hsmHartStart, id, uint64(sbiSecondaryEntryPA()), 0, 0)
		if err == 0 {
			continue
		}
		if statusErr, status := sbiCall(sbiHSM, hsmHartGetStatus, id, 0, 0, 0); statusErr == 0 && status != hsmStopped {
			continue
		}
		print("sbi: hart_start of hart ")
		printDec(int64(id))
		print(" failed: ")
		printDec(err)
		print("\n")
	}
}

//go:nosplit
func setTimer(h *hart, when uint64) {
	h.timerAt = when
	if sstc {
		writeStimecmp(when)
	} else {
		sbiCall(sbiTime, 0, when, 0, 0, 0)
	}
}

// sendSoft raises the supervisor software interrupt on harts[id].
//
//go:nosplit
func sendSoft(id int) {
	if sbiBoot {
		sbiCall(sbiIPI, 0, 1<<harts[id].hartID, 0, 0, 0)
	} else {
		Write32(clintBase+clintMsip+4*uintptr(id), 1)
	}
}

// remoteFence makes the harts in mask (one bit per index in harts) flush
// their whole TLB, and returns once they have; it reports false when the
// firmware cannot, and the caller asks each hart by IPI (flushReq).
//
//go:nosplit
func remoteFence(mask uint64) bool {
	if !sbiBoot || !sbiHas.rfence {
		return false
	}
	var ids uint64 // the SBI's hart mask: one bit per hart id
	for i := 0; i < nHarts; i++ {
		if mask&(1<<i) != 0 {
			ids |= 1 << harts[i].hartID
		}
	}
	if ids != 0 {
		sbiCall(sbiRFence, rfenceSfenceVMA, ids, 0, 0, ^uint64(0))
	}
	return true
}

// powerOff stops the machine; QEMU exits with status code. The test
// device carries a status; SBI's SRST only says success or failure, so
// under SBI a failure still goes to the test device where the device
// tree names one.
//
//go:nosplit
func powerOff(code int) {
	switch {
	case testBase != 0 && (!sbiBoot || code != 0):
		if code == 0 {
			Write32(testBase, testPass)
		} else {
			Write32(testBase, uint32(code)<<16|testFail)
		}
	case sbiBoot:
		reason := uint64(srstNoReason)
		if code != 0 {
			reason = srstSystemFailure
		}
		if sbiHas.srst {
			sbiCall(sbiSRST, srstReset, srstShutdown, reason, 0, 0)
		}
		sbiCall(sbiLegacyShutdown, 0, 0, 0, 0, 0)
	}
	for {
		wfi()
	}
}

// reboot restarts the machine: SBI's SRST cold reboot, or under our own
// M-mode code the test device's reset; it returns when neither is there.
//
//go:nosplit
func reboot() {
	switch {
	case sbiBoot && sbiHas.srst:
		sbiCall(sbiSRST, srstReset, srstColdReboot, srstNoReason, 0, 0)
	case !sbiBoot && testBase != 0:
		Write32(testBase, testReset)
		for {
			wfi()
		}
	}
}

// rawPutc writes one byte to the console: the UART, or under SBI where
// the device tree names none the kernel drives, the firmware's console.
//
//go:nosplit
func rawPutc(c byte) {
	switch {
	case console.Base != 0:
		uartPutc(c)
	case !sbiBoot:
	case sbiHas.dbcn:
		sbiCall(sbiDBCN, dbcnWriteByte, uint64(c), 0, 0, 0)
	default:
		sbiCall(sbiLegacyPutchar, 0, uint64(c), 0, 0, 0)
	}
}
