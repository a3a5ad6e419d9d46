package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Membarrier, sysMembarrier)
}

// membarrier(2)'s commands (include/uapi/linux/membarrier.h).
const (
	membarrierQuery                        = 0
	membarrierGlobal                       = 1 << 0
	membarrierGlobalExpedited              = 1 << 1
	membarrierRegisterGlobalExpedited      = 1 << 2
	membarrierPrivateExpedited             = 1 << 3
	membarrierRegisterPrivateExpedited     = 1 << 4
	membarrierPrivateExpeditedSyncCore     = 1 << 5
	membarrierRegisterPrivateExpeditedSync = 1 << 6
	membarrierGetRegistrations             = 1 << 9

	// membarrierSupported is what QUERY answers: all but the rseq
	// commands (no rseq here).
	membarrierSupported = membarrierGlobal | membarrierGlobalExpedited | membarrierRegisterGlobalExpedited |
		membarrierPrivateExpedited | membarrierRegisterPrivateExpedited |
		membarrierPrivateExpeditedSyncCore | membarrierRegisterPrivateExpeditedSync |
		membarrierGetRegistrations
)

// sysMembarrier implements membarrier(2). A barrier makes every hart that
// runs a thread of the address spaces concerned pass through the kernel
// (a full fence, and a fence.i) before the call returns: the caller's
// for the private commands, which need the caller's registration (else
// EPERM); every process's for GLOBAL; the registered ones' for
// GLOBAL_EXPEDITED. Flags other than 0 and the rseq commands are EINVAL.
func sysMembarrier(t *kernel.Task, a Args) (uint64, error) {
	cmd, flags := uint32(a[0]), uint32(a[1])
	if flags != 0 {
		return 0, unix.EINVAL
	}
	registered := t.Proc.MembarrierRegistrations()
	switch cmd {
	case membarrierQuery:
		return membarrierSupported, nil
	case membarrierGetRegistrations:
		return uint64(registered.Load()), nil
	case membarrierRegisterGlobalExpedited, membarrierRegisterPrivateExpedited, membarrierRegisterPrivateExpeditedSync:
		registered.Or(cmd)
		return 0, nil
	case membarrierGlobal, membarrierGlobalExpedited:
		for _, p := range t.Kernel().Processes() {
			if cmd == membarrierGlobal || p.MembarrierRegistrations().Load()&membarrierRegisterGlobalExpedited != 0 {
				p.Barrier()
			}
		}
		return 0, nil
	case membarrierPrivateExpedited, membarrierPrivateExpeditedSyncCore:
		// Each command's registration is the bit above it.
		if registered.Load()&(cmd<<1) == 0 {
			return 0, unix.EPERM
		}
		t.Proc.Barrier()
		return 0, nil
	}
	return 0, unix.EINVAL
}
