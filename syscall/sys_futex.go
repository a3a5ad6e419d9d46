package syscall

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Futex, sysFutex)
}

// futex(2) operations (linux/futex.h).
const (
	futexWait         = 0
	futexWake         = 1
	futexWaitBitset   = 9
	futexWakeBitset   = 10
	futexPrivateFlag  = 128
	futexClockRealtim = 256
	futexBitsetAny    = 0xffffffff
)

// sysFutex implements futex(2): WAIT, WAKE and their BITSET forms.
func sysFutex(t *kernel.Task, a Args) (uint64, error) {
	addr, op, val := uintptr(a[0]), a[1], uint32(a[2])
	cmd := op &^ (futexPrivateFlag | futexClockRealtim)
	switch cmd {
	case futexWait, futexWaitBitset:
		bitset := uint32(futexBitsetAny)
		if cmd == futexWaitBitset {
			bitset = uint32(a[5])
			if bitset == 0 {
				return 0, unix.EINVAL
			}
		}
		timeout := time.Duration(-1)
		if a[3] != 0 {
			b := make([]byte, 16)
			if err := copyIn(t, a[3], b); err != nil {
				return 0, err
			}
			d := time.Duration(binary.LittleEndian.Uint64(b))*time.Second + time.Duration(binary.LittleEndian.Uint64(b[8:]))
			if cmd == futexWaitBitset { // an absolute deadline
				now := kernel.Uptime()
				if op&futexClockRealtim != 0 {
					now = time.Duration(time.Now().UnixNano())
				}
				d -= now
			}
			timeout = max(d, 0)
		}
		return 0, t.FutexWait(addr, val, bitset, timeout)
	case futexWake, futexWakeBitset:
		bitset := uint32(futexBitsetAny)
		if cmd == futexWakeBitset {
			bitset = uint32(a[5])
		}
		return uint64(t.FutexWake(addr, int(val), bitset)), nil
	}
	return 0, unix.ENOSYS
}
