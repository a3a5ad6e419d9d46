package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

// Terminal ioctl requests (asm-generic/ioctls.h).
const (
	tcgets     = 0x5401
	tcsets     = 0x5402
	tcsetsw    = 0x5403
	tcsetsf    = 0x5404
	tcsbrk     = 0x5409
	tcxonc     = 0x540a
	tcflsh     = 0x540b
	tiocsctty  = 0x540e
	tiocgpgrp  = 0x540f
	tiocspgrp  = 0x5410
	tiocgwinsz = 0x5413
	tiocswinsz = 0x5414
	tiocnotty  = 0x5422
	tiocgsid   = 0x5429
)

func init() {
	register(sysno.Vhangup, sysVhangup)
}

// sysVhangup implements vhangup(2): with CAP_SYS_TTY_CONFIG, the caller's
// controlling terminal (only the console can be one) leaves its session,
// whose leader gets SIGHUP and SIGCONT. Linux also makes the descriptors
// open on it read end of file and fail writes; those of the console stay
// usable here, for the console is every process's output.
func sysVhangup(t *kernel.Task, a Args) (uint64, error) {
	if t.Proc.Caps.Effective&(1<<unix.CAP_SYS_TTY_CONFIG) == 0 {
		return 0, unix.EPERM
	}
	tty := t.Proc.Root.Console()
	sid := t.Proc.SID()
	if tty == nil || tty.Session() != sid {
		return 0, nil
	}
	tty.SetSession(0, 0)
	t.Kernel().HangUpSession(sid)
	return 0, nil
}

// ttyIoctl serves the terminal requests on the console; handled reports
// whether req is one.
func ttyIoctl(t *kernel.Task, tty *fs.TTY, req, arg uint64) (ret uint64, handled bool, err error) {
	put32 := func(v int) error { return copyOutStruct(t, arg, int32(v)) }
	switch req {
	case tcgets:
		return 0, true, copyOutStruct(t, arg, tty.Termios())
	case tcsets, tcsetsw, tcsetsf:
		var tm fs.Termios
		if err := copyInStruct(t, arg, &tm); err != nil {
			return 0, true, err
		}
		tty.SetTermios(tm, req == tcsetsf)
		return 0, true, nil
	case tcsbrk, tcxonc:
		return 0, true, nil // output is never held
	case tcflsh:
		if arg != unix.TCIFLUSH && arg != unix.TCOFLUSH && arg != unix.TCIOFLUSH {
			return 0, true, unix.EINVAL
		}
		if arg != unix.TCOFLUSH {
			tty.SetTermios(tty.Termios(), true)
		}
		return 0, true, nil
	case tiocsctty:
		p := t.Proc
		if p.SID() != p.PID {
			return 0, true, unix.EPERM // only a session leader takes a terminal
		}
		tty.SetSession(p.SID(), p.PGID())
		return 0, true, nil
	case tiocnotty:
		if tty.Session() == t.Proc.SID() {
			tty.SetSession(0, 0)
		}
		return 0, true, nil
	case tiocgpgrp:
		if tty.Session() != t.Proc.SID() {
			return 0, true, unix.ENOTTY
		}
		return 0, true, put32(tty.Foreground())
	case tiocspgrp:
		if tty.Session() != t.Proc.SID() {
			return 0, true, unix.ENOTTY
		}
		var pgid32 int32
		if err := copyInStruct(t, arg, &pgid32); err != nil {
			return 0, true, err
		}
		pgid := int(pgid32)
		if pgid <= 0 {
			return 0, true, unix.EINVAL
		}
		if !t.Kernel().GroupInSession(pgid, t.Proc.SID()) {
			return 0, true, unix.EPERM
		}
		tty.SetForeground(pgid)
		return 0, true, nil
	case tiocgsid:
		if tty.Session() == 0 || tty.Session() != t.Proc.SID() {
			return 0, true, unix.ENOTTY
		}
		return 0, true, put32(tty.Session())
	case tiocgwinsz:
		rows, cols := tty.WinSize()
		return 0, true, copyOutStruct(t, arg, linux.Winsize{Row: rows, Col: cols})
	case tiocswinsz:
		var ws linux.Winsize
		if err := copyInStruct(t, arg, &ws); err != nil {
			return 0, true, err
		}
		tty.SetWinSize(ws.Row, ws.Col)
		return 0, true, nil
	}
	return 0, false, nil
}
