package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Reboot, sysReboot)
}

// reboot(2)'s magic numbers: the first, and the second's accepted values.
const rebootMagic1 = 0xfee1dead

var rebootMagic2 = [...]uint32{672274793, 85072278, 369367448, 537993216}

// sysReboot implements reboot(2): restart (RESTART, RESTART2), halt and
// power-off end the machine through the firmware (QEMU exits with status
// 0; a restart boots again unless QEMU runs with -no-reboot); CAD_ON and
// CAD_OFF are accepted (no Ctrl-Alt-Del comes from a serial console);
// kexec and suspend are not built in, EINVAL as in a Linux without them.
func sysReboot(t *kernel.Task, a Args) (uint64, error) {
	if t.Proc.EUID != 0 {
		return 0, unix.EPERM // CAP_SYS_BOOT
	}
	magic2Ok := false
	for _, m := range rebootMagic2 {
		magic2Ok = magic2Ok || uint32(a[1]) == m
	}
	if uint32(a[0]) != rebootMagic1 || !magic2Ok {
		return 0, unix.EINVAL
	}
	switch uint32(a[2]) {
	case unix.LINUX_REBOOT_CMD_CAD_ON, unix.LINUX_REBOOT_CMD_CAD_OFF:
		return 0, nil
	case unix.LINUX_REBOOT_CMD_RESTART, unix.LINUX_REBOOT_CMD_RESTART2:
		t.Kernel().Reset(true)
	case unix.LINUX_REBOOT_CMD_HALT, unix.LINUX_REBOOT_CMD_POWER_OFF:
		t.Kernel().Reset(false)
	default:
		return 0, unix.EINVAL
	}
	return 0, unix.ENOSYS // no reset hook: a kernel made by a host test
}
