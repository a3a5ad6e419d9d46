package syscall

import (
	"bytes"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Uname, sysUname)
	register(sysno.Sethostname, sysSethostname)
	register(sysno.Setdomainname, sysSetdomainname)
	register(sysno.Sysinfo, sysSysinfo)
	register(sysno.Getrandom, sysGetrandom)
}

// utsNameLen is __NEW_UTS_LEN: a field's bytes, its NUL aside.
const utsNameLen = 64

// sysUname implements uname(2).
func sysUname(t *kernel.Task, a Args) (uint64, error) {
	host, domain := t.UTSNames()
	b := make([]byte, 6*(utsNameLen+1))
	for i, s := range [6]string{"Linux", host, kernel.Release, kernel.Version, "riscv64", domain} {
		copy(b[(utsNameLen+1)*i:(utsNameLen+1)*i+utsNameLen], s)
	}
	return 0, copyOut(t, a[0], b)
}

// setUTSName is sethostname(2) and setdomainname(2): EPERM without
// privilege (CAP_SYS_ADMIN), then EINVAL for a length past 64, then
// EFAULT; the name is the bytes given, up to a NUL.
func setUTSName(t *kernel.Task, a Args, set func(string)) error {
	if t.Proc.EUID != 0 {
		return unix.EPERM
	}
	if n := int32(a[1]); n < 0 || n > utsNameLen {
		return unix.EINVAL
	}
	b := make([]byte, int32(a[1]))
	if err := copyIn(t, a[0], b); err != nil {
		return err
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	set(string(b))
	return nil
}

// sysSethostname implements sethostname(2).
func sysSethostname(t *kernel.Task, a Args) (uint64, error) {
	return 0, setUTSName(t, a, t.SetHostname)
}

// sysSetdomainname implements setdomainname(2).
func sysSetdomainname(t *kernel.Task, a Args) (uint64, error) {
	return 0, setUTSName(t, a, t.SetDomainname)
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

// sysSysinfo implements sysinfo(2): uptime (CLOCK_BOOTTIME in the
// caller's time namespace, in seconds rounded up as Linux's), RAM (the
// frames the kernel manages), no swap, the number of tasks.
func sysSysinfo(t *kernel.Task, a Args) (uint64, error) {
	inUse, total := t.Kernel().MemoryStats()
	up, _ := t.ClockTime(unix.CLOCK_BOOTTIME)
	return 0, copyOutStruct(t, a[0], linux.Sysinfo{
		Uptime: int64((up + time.Second - 1) / time.Second), TotalRAM: total, FreeRAM: total - inUse,
		Procs: uint16(min(len(t.Kernel().Processes()), 65535)), MemUnit: 1,
	})
}
