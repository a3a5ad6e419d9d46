package fs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// TTY is the console as a terminal: Linux's line discipline over the
// UART (canonical lines with erase and kill, echo, ^C/^\/^Z turned into
// signals for the foreground process group), the termios a program reads
// and sets, the window size, the foreground group and the session.
type TTY struct {
	mu       sync.Mutex
	out      func([]byte)
	signal   func(pgid int, sig unix.Signal)
	termios  Termios
	line     []byte   // the line being edited (canonical mode)
	ready    [][]byte // completed lines, or raw bytes as one chunk
	eof      bool     // ^D on an empty line: the next read returns 0
	fg, sid  int      // foreground process group, controlling session
	rows     uint16
	cols     uint16
	notifier Notifier
}

// Termios is struct termios (asm-generic, NCCS 19).
type Termios struct {
	Iflag, Oflag, Cflag, Lflag uint32
	Line                       uint8
	CC                         [19]uint8
}

// Indices into Termios.CC.
const (
	vINTR  = 0
	vQUIT  = 1
	vERASE = 2
	vKILL  = 3
	vEOF   = 4
	vMIN   = 6
	vSUSP  = 10
	vEOL   = 11
)

// defaultTermios is what Linux gives a console: cooked mode with echo.
func defaultTermios() Termios {
	return Termios{
		Iflag: unix.ICRNL | unix.IXON,
		Oflag: unix.OPOST | unix.ONLCR,
		Cflag: unix.B38400 | unix.CS8 | unix.CREAD | unix.HUPCL,
		Lflag: unix.ISIG | unix.ICANON | unix.ECHO | unix.ECHOE | unix.ECHOK | unix.ECHOCTL | unix.ECHOKE | unix.IEXTEN,
		CC:    [19]uint8{vINTR: 3, vQUIT: 0x1c, vERASE: 0x7f, vKILL: 0x15, vEOF: 4, vMIN: 1, 8: 0x11, 9: 0x13, vSUSP: 0x1a, 12: 0x12, 13: 0xf, 14: 0x17, 15: 0x16},
	}
}

// NewTTY returns a terminal writing to out; signal sends a signal to a
// process group.
func NewTTY(out func([]byte), signal func(pgid int, sig unix.Signal)) *TTY {
	return &TTY{out: out, signal: signal, termios: defaultTermios(), rows: 24, cols: 80}
}

// Input runs the line discipline over bytes that arrived.
func (t *TTY) Input(b []byte) {
	t.mu.Lock()
	var echo []byte
	var sigs []unix.Signal
	tm := &t.termios
	for _, c := range b {
		switch {
		case c == '\r' && tm.Iflag&unix.IGNCR != 0:
			continue
		case c == '\r' && tm.Iflag&unix.ICRNL != 0:
			c = '\n'
		case c == '\n' && tm.Iflag&unix.INLCR != 0:
			c = '\r'
		}
		if tm.Lflag&unix.ISIG != 0 {
			sig := map[uint8]unix.Signal{tm.CC[vINTR]: unix.SIGINT, tm.CC[vQUIT]: unix.SIGQUIT, tm.CC[vSUSP]: unix.SIGTSTP}[c]
			if sig != 0 && c != 0 {
				sigs = append(sigs, sig)
				if tm.Lflag&unix.NOFLSH == 0 {
					t.line, t.ready = nil, nil
				}
				if tm.Lflag&unix.ECHO != 0 {
					echo = append(echo, '^', c+'@', '\n')
				}
				continue
			}
		}
		if tm.Lflag&unix.ICANON == 0 {
			t.appendRaw(c)
			if tm.Lflag&unix.ECHO != 0 {
				echo = append(echo, c)
			}
			continue
		}
		switch {
		case c == tm.CC[vERASE] || c == '\b':
			if len(t.line) > 0 {
				t.line = t.line[:len(t.line)-1]
				if tm.Lflag&unix.ECHO != 0 {
					echo = append(echo, '\b', ' ', '\b')
				}
			}
		case c == tm.CC[vKILL]:
			for range t.line {
				echo = append(echo, '\b', ' ', '\b')
			}
			t.line = nil
		case c == tm.CC[vEOF]:
			if len(t.line) == 0 {
				t.eof = true
			} else {
				t.ready, t.line = append(t.ready, t.line), nil
			}
		case c == '\n' || (c == tm.CC[vEOL] && c != 0):
			t.ready, t.line = append(t.ready, append(t.line, c)), nil
			if tm.Lflag&unix.ECHO != 0 || tm.Lflag&unix.ECHONL != 0 {
				echo = append(echo, '\n')
			}
		default:
			if len(t.line) < 4095 { // N_TTY's line limit
				t.line = append(t.line, c)
				if tm.Lflag&unix.ECHO != 0 {
					echo = append(echo, c)
				}
			}
		}
	}
	fg := t.fg
	fns := t.notifier.Changed()
	t.mu.Unlock()
	if len(echo) > 0 {
		t.out(echo)
	}
	for _, sig := range sigs {
		if fg > 0 {
			t.signal(fg, sig)
		}
	}
	Notify(fns)
}

// appendRaw adds a byte read in non-canonical mode. t.mu is held.
func (t *TTY) appendRaw(c byte) {
	if n := len(t.ready); n > 0 {
		t.ready[n-1] = append(t.ready[n-1], c)
		return
	}
	t.ready = append(t.ready, []byte{c})
}

// ReadTo copies a line (canonical mode) or the bytes there are to dst,
// taking what reached it; 0 after ^D on an empty line; EAGAIN while there
// is nothing. A buffer whose first byte is unwritable is EFAULT before
// the terminal is looked at, as when this read was staged.
func (t *TTY) ReadTo(dst UserIO) (int64, error) {
	want := dst.Len()
	if want > 0 && dst.Writable(1) == 0 {
		return 0, unix.EFAULT
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.ready) == 0 {
		if t.eof {
			t.eof = false
			return 0, nil
		}
		if want == 0 {
			return 0, nil
		}
		return 0, unix.EAGAIN
	}
	n, err := dst.CopyOut(t.ready[0][:min(int64(len(t.ready[0])), want)])
	if n == 0 && err != nil {
		return 0, err
	}
	if t.ready[0] = t.ready[0][n:]; len(t.ready[0]) == 0 {
		t.ready = t.ready[1:]
	}
	return int64(n), nil
}

// WriteFrom sends src's bytes to the console.
func (t *TTY) WriteFrom(src UserIO) (int64, error) {
	return WriteStaged(src, func(p []byte) (int, error) {
		t.out(p)
		return len(p), nil
	})
}

// Readiness: readable with a line (or bytes, raw) or an end of file.
func (t *TTY) Readiness(mask uint32) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := uint32(unix.EPOLLOUT)
	if len(t.ready) > 0 || t.eof {
		r |= unix.EPOLLIN
	}
	return r & mask
}

// Watch calls notify when input arrives.
func (t *TTY) Watch(notify func()) func() { return t.notifier.Watch(&t.mu, notify) }

func (t *TTY) Close() error { return nil }

func (t *TTY) Stat() Stat {
	return Stat{Dev: devConsole, Ino: 1, Mode: unix.S_IFCHR | 0o620, Nlink: 1, Rdev: devConsole, Blksize: 1024}
}

// Termios returns the terminal's settings.
func (t *TTY) Termios() Termios {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.termios
}

// SetTermios changes them; flush drops pending input (TCSETSF). Leaving
// canonical mode makes the edited line readable.
func (t *TTY) SetTermios(tm Termios, flush bool) {
	t.mu.Lock()
	if flush {
		t.line, t.ready, t.eof = nil, nil, false
	}
	if tm.Lflag&unix.ICANON == 0 && len(t.line) > 0 {
		t.ready, t.line = append(t.ready, t.line), nil
	}
	t.termios = tm
	fns := t.notifier.Changed()
	t.mu.Unlock()
	Notify(fns)
}

// Foreground returns the foreground process group (0: none).
func (t *TTY) Foreground() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fg
}

// SetForeground makes pgid the foreground process group.
func (t *TTY) SetForeground(pgid int) {
	t.mu.Lock()
	t.fg = pgid
	t.mu.Unlock()
}

// Session returns the session the terminal controls (0: none).
func (t *TTY) Session() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sid
}

// SetSession makes the terminal the controlling one of session sid, with
// pgid in the foreground (TIOCSCTTY); sid 0 detaches it.
func (t *TTY) SetSession(sid, pgid int) {
	t.mu.Lock()
	t.sid, t.fg = sid, pgid
	t.mu.Unlock()
}

// WinSize returns the window size in rows and columns.
func (t *TTY) WinSize() (uint16, uint16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rows, t.cols
}

// SetWinSize sets it (TIOCSWINSZ).
func (t *TTY) SetWinSize(rows, cols uint16) {
	t.mu.Lock()
	t.rows, t.cols = rows, cols
	t.mu.Unlock()
}

// Base returns the file a device node opened (an open device is its
// driver's file seen through the node).
func Base(f File) File {
	if d, ok := f.(*deviceFile); ok {
		return d.File
	}
	return f
}

// Pending returns the bytes a read could return (FIONREAD).
func (t *TTY) Pending() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, b := range t.ready {
		n += len(b)
	}
	return n, nil
}
