package syscall

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

// TestReboot: reboot(2)'s checks in Linux's order (CAP_SYS_BOOT, then the
// magic numbers, then the command) and which commands reach the machine's
// reset hook, restarting or not.
func TestReboot(t *testing.T) {
	var resets []bool
	k := kernel.New(kernel.Config{Reset: func(restart bool) { resets = append(resets, restart) }})
	task, _ := newTaskIn(t, k)
	const magic2 = 672274793
	for _, c := range []struct {
		name               string
		euid               uint32
		magic1, magic2, op uint64
		want               int64
	}{
		{"unprivileged", 33, rebootMagic1, magic2, unix.LINUX_REBOOT_CMD_RESTART, -int64(unix.EPERM)},
		{"unprivileged, bad magic", 33, 0, 0, 0, -int64(unix.EPERM)},
		{"bad magic1", 0, 0xfee1deae, magic2, unix.LINUX_REBOOT_CMD_RESTART, -int64(unix.EINVAL)},
		{"bad magic2", 0, rebootMagic1, 1, unix.LINUX_REBOOT_CMD_RESTART, -int64(unix.EINVAL)},
		{"unknown command", 0, rebootMagic1, magic2, 0x12345678, -int64(unix.EINVAL)},
		{"kexec", 0, rebootMagic1, 85072278, unix.LINUX_REBOOT_CMD_KEXEC, -int64(unix.EINVAL)},
		{"cad on", 0, rebootMagic1, 369367448, unix.LINUX_REBOOT_CMD_CAD_ON, 0},
		{"cad off", 0, rebootMagic1, 537993216, unix.LINUX_REBOOT_CMD_CAD_OFF, 0},
		{"restart", 0, rebootMagic1, magic2, unix.LINUX_REBOOT_CMD_RESTART, -int64(unix.ENOSYS)},
		{"power off", 0, rebootMagic1, magic2, unix.LINUX_REBOOT_CMD_POWER_OFF, -int64(unix.ENOSYS)},
		{"halt", 0, rebootMagic1, magic2, unix.LINUX_REBOOT_CMD_HALT, -int64(unix.ENOSYS)},
	} {
		task.Proc.EUID = c.euid
		// The hook returns here (a real machine's never does): the call
		// then reports ENOSYS.
		if got := call(task, sysno.Reboot, c.magic1, c.magic2, c.op); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if len(resets) != 3 || !resets[0] || resets[1] || resets[2] {
		t.Errorf("resets %v, want [true false false]", resets)
	}
}
