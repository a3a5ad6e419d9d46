package syscall

import (
	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Kcmp, sysKcmp)
}

// sysKcmp implements kcmp(2).
func sysKcmp(t *kernel.Task, a Args) (uint64, error) {
	slot := func() (linux.KcmpEpollSlot, error) {
		var s linux.KcmpEpollSlot
		return s, copyInStruct(t, a[4], &s)
	}
	r, err := t.Kcmp(int(int32(a[0])), int(int32(a[1])), int(int32(a[2])), a[3], a[4], slot)
	return uint64(r), err
}
