package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Uname, sysUname)
	register(sysno.Sysinfo, sysSysinfo)
	register(sysno.Getrandom, sysGetrandom)
}

// Uname fields; the release names the Linux ABI level the layer follows.
var uname = [6]string{"Linux", kernel.Hostname, "6.12.0-jiege", "#1 Jiege-Go", "riscv64", kernel.Domainname}

// sysUname implements uname(2).
func sysUname(t *kernel.Task, a Args) (uint64, error) {
	b := make([]byte, 6*65)
	for i, s := range uname {
		copy(b[65*i:65*i+64], s)
	}
	return 0, copyOut(t, a[0], b)
}

// sysGetrandom implements getrandom(2) from the kernel's generator.
func sysGetrandom(t *kernel.Task, a Args) (uint64, error) {
	if a[2]&^(unix.GRND_NONBLOCK|unix.GRND_RANDOM|unix.GRND_INSECURE) != 0 {
		return 0, unix.EINVAL
	}
	buf := make([]byte, min(a[1], 1<<20))
	t.Kernel().Random(buf)
	return uint64(len(buf)), copyOut(t, a[0], buf)
}

// sysSysinfo implements sysinfo(2): uptime, RAM (the frames the kernel
// manages), no swap, the number of tasks.
func sysSysinfo(t *kernel.Task, a Args) (uint64, error) {
	inUse, total := t.Kernel().MemoryStats()
	return 0, copyOutStruct(t, a[0], linux.Sysinfo{
		Uptime: int64(t.Kernel().Uptime() / time.Second), TotalRAM: total, FreeRAM: total - inUse,
		Procs: uint16(min(len(t.Kernel().Processes()), 65535)), MemUnit: 1,
	})
}
