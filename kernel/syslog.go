package kernel

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel's log as syslog(2) serves it (Linux's do_syslog): the ring
// the kernel's console output is kept in (Config.KernelLog), a reader's
// position for SYSLOG_ACTION_READ, where a clear left READ_ALL, and the
// console levels of /proc/sys/kernel/printk. The kernel's messages carry
// no levels, so the console level is kept and reported, and every message
// still reaches the console.

// syslog(2)'s actions (SYSLOG_ACTION_*).
const (
	SyslogClose        = 0
	SyslogOpen         = 1
	SyslogRead         = 2
	SyslogReadAll      = 3
	SyslogReadClear    = 4
	SyslogClear        = 5
	SyslogConsoleOff   = 6
	SyslogConsoleOn    = 7
	SyslogConsoleLevel = 8
	SyslogSizeUnread   = 9
	SyslogSizeBuffer   = 10
)

// capSyslog is CAP_SYSLOG, which every action needs, but READ_ALL and
// SIZE_BUFFER when dmesg_restrict is 0.
const capSyslog = 34

// syslogPoll is how often a blocked SYSLOG_ACTION_READ looks for new
// messages: the log is written in traps, which wake no one.
const syslogPoll = 100 * time.Millisecond

type syslogState struct {
	mu       sync.Mutex
	readPos  uint64 // SYSLOG_ACTION_READ goes on from here
	clearPos uint64 // READ_ALL starts here at the earliest
	// printk is /proc/sys/kernel/printk: the console level, the default
	// message level, the lowest console level, the default console level.
	printk [4]int
	saved  int // the console level CONSOLE_OFF put aside (0: none)
	// unrestricted is dmesg_restrict 0: READ_ALL and SIZE_BUFFER need no
	// privilege. Debian's kernels start restricted
	// (CONFIG_SECURITY_DMESG_RESTRICT).
	unrestricted atomic.Bool
}

// readLog returns the log from position from on, and the position it
// starts at; nil without a log.
func (k *Kernel) readLog(from uint64) ([]byte, uint64) {
	if k.kernelLog == nil {
		return nil, from
	}
	return k.kernelLog(from)
}

// defaultPrintk are Linux's console levels at boot: console messages
// below KERN_DEBUG, KERN_WARNING for a message without a level.
var defaultPrintk = [4]int{7, 4, 1, 7}

// Syslog implements syslog(2)'s action with a buffer of size bytes;
// output receives what a read action returns (nil: the buffer is NULL).
func (t *Task) Syslog(action, size int, output func([]byte) error) (int, error) {
	k := t.Proc.k
	open := k.log.unrestricted.Load() && (action == SyslogReadAll || action == SyslogSizeBuffer)
	if !open && t.Proc.Caps.Effective&(1<<capSyslog|1<<unix.CAP_SYS_ADMIN) == 0 {
		return 0, unix.EPERM
	}
	l := &k.log
	switch action {
	case SyslogClose, SyslogOpen:
		return 0, nil
	case SyslogRead:
		if output == nil || size < 0 {
			return 0, unix.EINVAL
		}
		if size == 0 {
			return 0, nil
		}
		for {
			if n, some, err := k.readUnread(size, output); some {
				return n, err
			}
			if err := t.Block(nil, time.Now().Add(syslogPoll)); err != nil && err != unix.ETIMEDOUT {
				return 0, err
			}
		}
	case SyslogReadAll, SyslogReadClear:
		if output == nil || size < 0 {
			return 0, unix.EINVAL
		}
		if size == 0 {
			return 0, nil
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		data, start := k.readLog(l.clearPos)
		end := start + uint64(len(data))
		if cut := len(data) - size; cut > 0 {
			// The newest records that fit whole: none when the last
			// one alone is larger than size.
			if data[cut-1] != '\n' {
				cut += bytes.IndexByte(data[cut:], '\n') + 1
			}
			data = data[cut:]
		}
		if err := output(data); err != nil {
			return 0, err
		}
		if action == SyslogReadClear {
			l.clearPos = end
		}
		return len(data), nil
	case SyslogClear:
		l.mu.Lock()
		defer l.mu.Unlock()
		data, start := k.readLog(l.clearPos)
		l.clearPos = start + uint64(len(data))
		return 0, nil
	case SyslogConsoleOff:
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.saved == 0 {
			l.saved = l.printk[0]
		}
		l.printk[0] = l.printk[2]
		return 0, nil
	case SyslogConsoleOn:
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.saved != 0 {
			l.printk[0], l.saved = l.saved, 0
		}
		return 0, nil
	case SyslogConsoleLevel:
		if size < 1 || size > 8 {
			return 0, unix.EINVAL
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.printk[0], l.saved = max(size, l.printk[2]), 0
		return 0, nil
	case SyslogSizeUnread:
		l.mu.Lock()
		defer l.mu.Unlock()
		data, start := k.readLog(l.readPos)
		l.readPos = start
		return len(data), nil
	case SyslogSizeBuffer:
		return k.kernelLogSize, nil
	}
	return 0, unix.EINVAL
}

// readUnread hands output what SYSLOG_ACTION_READ has not read yet, up to
// size bytes, and reports whether there was any.
func (k *Kernel) readUnread(size int, output func([]byte) error) (int, bool, error) {
	l := &k.log
	l.mu.Lock()
	defer l.mu.Unlock()
	data, start := k.readLog(l.readPos)
	if len(data) == 0 {
		return 0, false, nil
	}
	n := wholeLines(data, size)
	if err := output(data[:n]); err != nil {
		return 0, true, err
	}
	l.readPos = start + uint64(n)
	return n, true, nil
}

// wholeLines is how much of data a read of size bytes takes: the whole
// lines that fit, or size bytes of a line longer than that.
func wholeLines(data []byte, size int) int {
	if len(data) <= size {
		return len(data)
	}
	if i := bytes.LastIndexByte(data[:size], '\n'); i >= 0 {
		return i + 1
	}
	return size
}

// Printk is /proc/sys/kernel/printk.
func (k *Kernel) Printk() string {
	k.log.mu.Lock()
	defer k.log.mu.Unlock()
	p := k.log.printk
	return fmt.Sprintf("%d\t%d\t%d\t%d", p[0], p[1], p[2], p[3])
}

// SetPrintk sets the levels root wrote to /proc/sys/kernel/printk: up to
// four integers, the ones given replacing the first ones (proc_dointvec).
func (k *Kernel) SetPrintk(b []byte) error {
	fields := strings.Fields(string(b))
	if len(fields) == 0 || len(fields) > 4 {
		return unix.EINVAL
	}
	var v [4]int
	for i, f := range fields {
		n, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return unix.EINVAL
		}
		v[i] = int(n)
	}
	k.log.mu.Lock()
	defer k.log.mu.Unlock()
	copy(k.log.printk[:len(fields)], v[:len(fields)])
	return nil
}

// DmesgRestrict is /proc/sys/kernel/dmesg_restrict.
func (k *Kernel) DmesgRestrict() string {
	if k.log.unrestricted.Load() {
		return "0"
	}
	return "1"
}

// SetDmesgRestrict sets dmesg_restrict from what root wrote: 0 or 1.
func (k *Kernel) SetDmesgRestrict(b []byte) error {
	switch strings.TrimSpace(string(b)) {
	case "0":
		k.log.unrestricted.Store(true)
	case "1":
		k.log.unrestricted.Store(false)
	default:
		return unix.EINVAL
	}
	return nil
}
