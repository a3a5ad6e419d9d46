package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Ppoll, sysPpoll)
	register(sysno.Pselect6, sysPselect6)
}

// pollSet is the files one poll or select call watches, each held by a
// reference until the call is done (release).
type pollSet struct {
	descs   []*fs.Description // nil: no file (a negative or bad fd)
	masks   []uint32
	changed chan struct{}
	cancels []func()
}

// watch registers for changes of every waitable file.
func (s *pollSet) watch() {
	s.changed = make(chan struct{}, 1)
	notify := func() {
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
	for _, d := range s.descs {
		if w, ok := fileWaitable(d); ok {
			s.cancels = append(s.cancels, w.Watch(notify))
		}
	}
}

func (s *pollSet) stop() {
	for _, c := range s.cancels {
		c()
	}
}

// release drops the references to the files.
func (s *pollSet) release() {
	for _, d := range s.descs {
		if d != nil {
			d.DecRef()
		}
	}
}

func fileWaitable(d *fs.Description) (fs.Waitable, bool) {
	if d == nil {
		return nil, false
	}
	return d.Waitable()
}

// readiness is what poll reports for d: a file that cannot be waited for
// (a regular file) is always ready for reading and writing, as on Linux.
func readiness(d *fs.Description, mask uint32) uint32 {
	const always = unix.POLLIN | unix.POLLOUT | pollRdNorm | pollWrNorm
	w, ok := fileWaitable(d)
	if !ok {
		return always & mask
	}
	return w.Readiness(mask|unix.POLLERR|unix.POLLHUP) & (mask | unix.POLLERR | unix.POLLHUP)
}

// wait calls scan until it finds something ready, the deadline passes (a
// zero deadline with noWait: return at once) or the task is interrupted.
// A signal mask given to the call is in force meanwhile.
func (s *pollSet) wait(t *kernel.Task, deadline time.Time, noWait bool, mask *kernel.SigSet, scan func() int) (n int, err error) {
	s.watch()
	defer s.stop()
	if mask != nil {
		t.BeginMaskedWait(*mask)
		defer func() { t.EndMaskedWait(err) }()
	}
	for {
		if n := scan(); n > 0 || noWait {
			return n, nil
		}
		if err := t.Block(s.changed, deadline); err == unix.ETIMEDOUT {
			return scan(), nil
		} else if err != nil {
			return 0, err
		}
	}
}

// timeoutArg reads a relative struct timespec; a null pointer is no
// timeout. It returns the deadline and whether the call must not wait.
func timeoutArg(t *kernel.Task, addr uint64) (time.Time, bool, error) {
	if addr == 0 {
		return time.Time{}, false, nil
	}
	var ts linux.Timespec
	if err := copyInStruct(t, addr, &ts); err != nil {
		return time.Time{}, false, err
	}
	sec, nsec := ts.Sec, ts.Nsec
	if sec < 0 || nsec < 0 || nsec >= 1e9 {
		return time.Time{}, false, unix.EINVAL
	}
	if sec == 0 && nsec == 0 {
		return time.Time{}, true, nil
	}
	if sec > 1<<33 { // beyond any wait: none
		return time.Time{}, false, nil
	}
	return time.Now().Add(time.Duration(sec)*time.Second + time.Duration(nsec)), false, nil
}

// writeRemaining stores the time left until deadline in the timespec at
// addr, as ppoll and pselect6 do, unless the personality has
// STICKY_TIMEOUTS.
func writeRemaining(t *kernel.Task, addr uint64, deadline time.Time) error {
	if addr == 0 || deadline.IsZero() || t.Proc.Personality.Load()&stickyTimeouts != 0 {
		return nil
	}
	return copyOutStruct(t, addr, linux.DurationTimespec(max(time.Until(deadline), 0)))
}

// sigmaskArg reads the signal mask of ppoll, pselect6 and epoll_pwait
// (nil when the pointer is null): EINVAL unless its size is 8.
func sigmaskArg(t *kernel.Task, addr, size uint64) (*kernel.SigSet, error) {
	if addr == 0 {
		return nil, nil
	}
	if size != 8 {
		return nil, unix.EINVAL
	}
	m, err := copyInSigset(t, addr)
	return &m, err
}

// sysPpoll implements ppoll(2).
func sysPpoll(t *kernel.Task, a Args) (uint64, error) {
	nfds := a[1]
	if nfds > uint64(t.Proc.Files.Limit()) {
		return 0, unix.EINVAL
	}
	raw := make([]linux.PollFd, nfds)
	if err := copyIn(t, a[0], linux.SliceAsBytes(raw)); err != nil {
		return 0, err
	}
	deadline, noWait, err := timeoutArg(t, a[2])
	if err != nil {
		return 0, err
	}
	sigmask, err := sigmaskArg(t, a[3], a[4])
	if err != nil {
		return 0, err
	}
	s := &pollSet{descs: make([]*fs.Description, nfds), masks: make([]uint32, nfds)}
	defer s.release()
	bad := make([]bool, nfds)
	for i := range s.descs {
		fd := raw[i].FD
		s.masks[i] = uint32(uint16(raw[i].Events))
		if fd < 0 {
			continue
		}
		if s.descs[i], err = t.Proc.Files.Get(int(fd)); err != nil {
			bad[i] = true
		}
	}
	n, err := s.wait(t, deadline, noWait, sigmask, func() int {
		ready := 0
		for i, d := range s.descs {
			var r uint32
			switch {
			case bad[i]:
				r = unix.POLLNVAL
			case d != nil:
				r = readiness(d, s.masks[i])
			}
			raw[i].Revents = int16(r)
			if r != 0 {
				ready++
			}
		}
		return ready
	})
	if err != nil {
		return 0, err
	}
	if err := copyOutStructs(t, a[0], raw); err != nil {
		return 0, err
	}
	return uint64(n), writeRemaining(t, a[2], deadline)
}

// Poll events that x/sys/unix does not name on every host (asm-generic/poll.h).
const (
	pollRdNorm = 0x40
	pollRdBand = 0x80
	pollWrNorm = 0x100
	pollWrBand = 0x200
)

// select's sets, as poll events.
const (
	selectIn  = unix.POLLIN | pollRdNorm | pollRdBand | unix.POLLHUP | unix.POLLERR
	selectOut = unix.POLLOUT | pollWrNorm | pollWrBand | unix.POLLERR
	selectEx  = unix.POLLPRI
)

// sysPselect6 implements pselect6(2); its sixth argument points at the
// signal mask's address and size.
func sysPselect6(t *kernel.Task, a Args) (uint64, error) {
	if int64(a[0]) < 0 || int32(a[0]) < 0 {
		return 0, unix.EINVAL
	}
	nfds := min(int(a[0]), t.Proc.Files.Limit())
	nwords := (nfds + 63) / 64
	var sets [3][]uint64
	for k, addr := range []uint64{a[1], a[2], a[3]} {
		if addr == 0 {
			continue
		}
		sets[k] = make([]uint64, nwords)
		if err := copyIn(t, addr, linux.SliceAsBytes(sets[k])); err != nil {
			return 0, err
		}
	}
	deadline, noWait, err := timeoutArg(t, a[4])
	if err != nil {
		return 0, err
	}
	var sigmask *kernel.SigSet
	if a[5] != 0 {
		var arg struct{ Addr, Size uint64 }
		if err := copyInStruct(t, a[5], &arg); err != nil {
			return 0, err
		}
		if sigmask, err = sigmaskArg(t, arg.Addr, arg.Size); err != nil {
			return 0, err
		}
	}
	s := &pollSet{descs: make([]*fs.Description, nfds), masks: make([]uint32, nfds)}
	defer s.release()
	for fd := 0; fd < nfds; fd++ {
		for k, events := range []uint32{selectIn, selectOut, selectEx} {
			if sets[k] != nil && sets[k][fd/64]&(1<<(fd%64)) != 0 {
				s.masks[fd] |= events
			}
		}
		if s.masks[fd] == 0 {
			continue
		}
		if s.descs[fd], err = t.Proc.Files.Get(fd); err != nil {
			return 0, unix.EBADF
		}
	}
	var out [3][]uint64
	n, err := s.wait(t, deadline, noWait, sigmask, func() int {
		ready := 0
		for k := range out {
			out[k] = make([]uint64, nwords)
		}
		for fd, d := range s.descs {
			if d == nil {
				continue
			}
			r := readiness(d, s.masks[fd])
			for k, events := range []uint32{selectIn, selectOut, selectEx} {
				if sets[k] != nil && sets[k][fd/64]&(1<<(fd%64)) != 0 && r&events != 0 {
					out[k][fd/64] |= 1 << (fd % 64)
					ready++
				}
			}
		}
		return ready
	})
	if err != nil {
		return 0, err
	}
	for k, addr := range []uint64{a[1], a[2], a[3]} {
		if addr == 0 {
			continue
		}
		if err := copyOutStructs(t, addr, out[k]); err != nil {
			return 0, err
		}
	}
	return uint64(n), writeRemaining(t, a[4], deadline)
}
