package syscall

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Seccomp, sysSeccomp)
}

// seccomp(2)'s operations.
const (
	seccompSetModeStrict  = 0
	seccompSetModeFilter  = 1
	seccompGetActionAvail = 2
	seccompGetNotifSizes  = 3
)

// sysSeccomp implements seccomp(2) (kernel/seccomp.go).
func sysSeccomp(t *kernel.Task, a Args) (uint64, error) {
	op, flags, uargs := a[0], uint32(a[1]), a[2]
	switch op {
	case seccompSetModeStrict:
		if flags != 0 || uargs != 0 {
			return 0, unix.EINVAL
		}
		return 0, t.SetSeccompStrict()
	case seccompSetModeFilter:
		return seccompFilter(t, flags, uargs)
	case seccompGetActionAvail:
		if flags != 0 {
			return 0, unix.EINVAL
		}
		var action uint32
		if err := copyInStruct(t, uargs, &action); err != nil {
			return 0, err
		}
		switch action {
		case kernel.SeccompRetKillProcess, kernel.SeccompRetKillThread, kernel.SeccompRetTrap, kernel.SeccompRetErrno,
			kernel.SeccompRetUserNotif, kernel.SeccompRetTrace, kernel.SeccompRetLog, kernel.SeccompRetAllow:
			return 0, nil
		}
		return 0, unix.EOPNOTSUPP
	case seccompGetNotifSizes:
		if flags != 0 {
			return 0, unix.EINVAL
		}
		// struct seccomp_notif_sizes: seccomp_notif, seccomp_notif_resp,
		// seccomp_data.
		return 0, copyOutStruct(t, uargs, [3]uint16{80, 24, 64})
	}
	return 0, unix.EINVAL
}

// seccompFilter reads a struct sock_fprog and installs its program.
func seccompFilter(t *kernel.Task, flags uint32, addr uint64) (uint64, error) {
	var fprog struct {
		Len    uint16
		_      [6]byte
		Filter uint64
	}
	if err := copyInStruct(t, addr, &fprog); err != nil {
		return 0, err
	}
	if fprog.Len == 0 || fprog.Len > 4096 {
		return 0, unix.EINVAL
	}
	raw := make([]byte, 8*int(fprog.Len))
	if err := copyIn(t, fprog.Filter, raw); err != nil {
		return 0, err
	}
	prog := make([]kernel.BPFInsn, fprog.Len)
	for i := range prog {
		b := raw[8*i:]
		prog[i] = kernel.BPFInsn{Code: binary.LittleEndian.Uint16(b), JT: b[2], JF: b[3], K: binary.LittleEndian.Uint32(b[4:])}
	}
	tid, err := t.AddSeccompFilter(prog, flags)
	return uint64(tid), err
}
