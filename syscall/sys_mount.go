package syscall

import (
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Mount, sysMount)
	register(sysno.Umount2, sysUmount2)
	register(sysno.PivotRoot, sysPivotRoot)
}

// mountDataMax is the most of mount's data argument read (a page, as
// copy_mount_options reads).
const mountDataMax = 4096

// sysMount implements mount(2) for tmpfs, proc and sysfs: the strings
// are read in Linux's order (type, source, data, then the target's path).
func sysMount(t *kernel.Task, a Args) (uint64, error) {
	var fstype, source, data string
	var err error
	if a[2] != 0 {
		if fstype, err = copyInString(t, a[2]); err != nil {
			return 0, err
		}
	}
	if a[0] != 0 {
		if source, err = copyInString(t, a[0]); err != nil {
			return 0, err
		}
	}
	if a[4] != 0 {
		if data, err = copyInString(t, a[4]); err != nil {
			return 0, err
		}
		if len(data) > mountDataMax {
			data = data[:mountDataMax]
		}
	}
	target, err := pathArg(t, cwdFD, a[1])
	if err != nil {
		return 0, err
	}
	if a[3]&(unix.MS_BIND|unix.MS_REMOUNT) == unix.MS_BIND {
		// A bind mount's source is a path, from the cwd and the root.
		if source, err = resolve(t, unix.AT_FDCWD, source); err != nil {
			return 0, err
		}
	}
	return 0, t.Proc.Root.Mount(t.Proc.Cred(), source, target, fstype, a[3], data)
}

// sysUmount2 implements umount2(2): a mount is busy while a process of
// the caller's mount namespace works inside it or has one of its files
// open.
func sysUmount2(t *kernel.Task, a Args) (uint64, error) {
	target, err := pathArg(t, cwdFD, a[0])
	if err != nil {
		return 0, err
	}
	return 0, t.Proc.Root.Umount(t.Proc.Cred(), target, a[1], func(m *fs.Mount) bool { return mountInUse(t, m) })
}

// mountInUse reports whether a process in t's mount namespace works in m
// or has a file of it open.
func mountInUse(t *kernel.Task, m *fs.Mount) bool {
	for _, p := range t.Kernel().Processes() {
		if p.MountNS() != t.Proc.MountNS() {
			continue
		}
		cwd := p.Cwd()
		if cwd == m.Target || strings.HasPrefix(cwd, m.Target+"/") {
			return true
		}
		for _, fd := range p.Files.Numbers() {
			d, err := p.Files.Get(fd)
			if err != nil {
				continue
			}
			dev := d.File.Stat().Dev
			d.DecRef()
			if dev == m.Dev {
				return true
			}
		}
	}
	return false
}

// sysPivotRoot implements pivot_root(2): EPERM without CAP_SYS_ADMIN
// before the paths are read, as Linux's may_mount comes first.
func sysPivotRoot(t *kernel.Task, a Args) (uint64, error) {
	if t.Proc.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) == 0 {
		return 0, unix.EPERM
	}
	newRoot, err := pathArg(t, cwdFD, a[0])
	if err != nil {
		return 0, err
	}
	putOld, err := pathArg(t, cwdFD, a[1])
	if err != nil {
		return 0, err
	}
	return 0, t.PivotRoot(newRoot, putOld)
}
