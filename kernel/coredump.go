package kernel

import (
	"encoding/binary"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Core dumps. A process killed by a signal whose default action dumps
// core leaves an ELF core file, as Linux's do_coredump: named by
// /proc/sys/kernel/core_pattern ("core" in the working directory by
// default; a pattern that pipes to a program gives no dump), created anew
// (an old one is unlinked first), owned by its fsuid, mode 0600. The other threads end first, as Linux's zap_threads
// stops them (here they exit, so only the dumping thread's registers are
// in the file). It holds NT_PRSTATUS with those registers, NT_PRPSINFO
// and NT_SIGINFO (the signal's number), and a PT_LOAD segment per mapping
// with the pages that mm.CoreSegments chooses; pages never touched are
// holes. There is no dump when the process is not dumpable, when
// RLIMIT_CORE is under a page, or when the file cannot be made. Writing
// stops at RLIMIT_CORE (holes do not count), and the wait status's core
// bit says only that the file was made, as Linux's has_dumped.

// coreSignals are the signals whose default action dumps core
// (SIG_KERNEL_COREDUMP_MASK).
var coreSignals = Bit(unix.SIGQUIT) | Bit(unix.SIGILL) | Bit(unix.SIGTRAP) | Bit(unix.SIGABRT) |
	Bit(unix.SIGBUS) | Bit(unix.SIGFPE) | Bit(unix.SIGSEGV) | Bit(unix.SIGXCPU) | Bit(unix.SIGXFSZ) |
	Bit(unix.SIGSYS)

// ELF core file constants (include/uapi/linux/elf.h).
const (
	elfHeaderSize   = 64
	elfPhdrSize     = 56
	etCore          = 4
	emRISCV         = 243
	ptLoad          = 1
	ptNote          = 4
	ntPrstatus      = 1
	ntPrpsinfo      = 3
	ntSiginfo       = 0x53494749
	prstatusSize    = 376 // struct elf_prstatus on riscv64
	prstatusRegs    = 112 // offset of pr_reg: pc, then x1..x31
	prpsinfoSize    = 136 // struct elf_prpsinfo
	coreSiginfoSize = 128
)

// dumpCoreFor dumps core if sig does, and records it for wait.
func (t *Task) dumpCoreFor(sig unix.Signal) {
	if !t.dumpCore(sig) {
		return
	}
	p := t.Proc
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	p.sig.coreDumped = true
}

// dumpCore writes t's process's core file for sig and reports whether it
// made one (the core bit of the wait status). t is the thread that takes
// the signal.
func (t *Task) dumpCore(sig unix.Signal) bool {
	p := t.Proc
	if coreSignals&Bit(sig) == 0 || p.Settings.NotDumpable.Load() {
		return false
	}
	limit := p.Limit(unix.RLIMIT_CORE).Cur
	if limit < mm.PageSize { // Linux's binfmt min_coredump
		return false
	}
	if t.endOtherThreads() != nil {
		return false // another thread's exit or execve came first
	}
	notes := t.coreNotes(sig)
	name, ok := t.coreName(sig)
	if !ok {
		return false
	}
	c := p.Cred()
	p.Root.Remove(c, name, false)
	n, _, err := p.Root.Open(c, name, fs.OpenFlags{Create: true, Excl: true, Perm: 0o600, Want: fs.MayWrite})
	if err != nil || !n.Mode.IsRegular() {
		return false
	}
	f := p.Root.OpenNode(n, name)
	defer f.Close()

	if size := p.writeCore(f, notes, limit); size > 0 {
		f.Truncate(int64(size)) // the trailing holes
	}
	return true
}

// writeCore writes the core file's headers, notes and pages to f under
// p's address-space lock, at most limit bytes besides holes, and returns
// the file's length when all of it was written, 0 when a write was
// refused.
func (p *Process) writeCore(f *fs.NodeFile, notes []byte, limit uint64) uint64 {
	p.Lock()
	defer p.Unlock()
	segs := p.AS.CoreSegments(p.Settings.CoredumpFilter.Load())
	// The headers and notes, then each segment's pages at a page-aligned
	// offset.
	offset := uint64(elfHeaderSize + elfPhdrSize*(1+len(segs)))
	head := make([]byte, offset, offset+uint64(len(notes)))
	le := binary.LittleEndian
	copy(head, "\x7fELF\x02\x01\x01")
	le.PutUint16(head[16:], etCore)
	le.PutUint16(head[18:], emRISCV)
	le.PutUint32(head[20:], 1) // EV_CURRENT
	le.PutUint64(head[32:], elfHeaderSize)
	le.PutUint16(head[52:], elfHeaderSize)
	le.PutUint16(head[54:], elfPhdrSize)
	le.PutUint16(head[56:], uint16(1+len(segs)))
	phdr := func(i int, typ, flags uint32, off, va, filesz, memsz, align uint64) {
		b := head[elfHeaderSize+elfPhdrSize*i:]
		le.PutUint32(b[0:], typ)
		le.PutUint32(b[4:], flags)
		le.PutUint64(b[8:], off)
		le.PutUint64(b[16:], va)
		le.PutUint64(b[32:], filesz)
		le.PutUint64(b[40:], memsz)
		le.PutUint64(b[48:], align)
	}
	phdr(0, ptNote, 0, offset, 0, uint64(len(notes)), 0, 4)
	head = append(head, notes...)
	offset = (uint64(len(head)) + mm.PageSize - 1) &^ (mm.PageSize - 1)
	offsets := make([]uint64, len(segs))
	for i, s := range segs {
		flags := uint32(0)
		if s.Perm&mm.PTERead != 0 {
			flags |= 4
		}
		if s.Perm&mm.PTEWrite != 0 {
			flags |= 2
		}
		if s.Perm&mm.PTEExec != 0 {
			flags |= 1
		}
		offsets[i] = offset
		phdr(1+i, ptLoad, flags, offset, uint64(s.Start), uint64(s.DumpSize), uint64(s.End-s.Start), mm.PageSize)
		offset += uint64(s.DumpSize)
	}
	// Linux counts what it writes, holes aside, against RLIMIT_CORE and
	// stops at the first write past it.
	written := uint64(0)
	complete := true
	emit := func(b []byte, off uint64) bool {
		if written+uint64(len(b)) > limit {
			complete = false
			return false
		}
		written += uint64(len(b))
		_, err := f.WriteAt(b, int64(off))
		complete = complete && err == nil
		return complete
	}
	if emit(head, 0) { // complete turns false at the first write refused
		for i, s := range segs {
			p.AS.DumpPages(s.Start, s.Start+s.DumpSize, func(va uintptr, page *[mm.PageSize]byte) {
				if complete {
					emit(page[:], offsets[i]+uint64(va-s.Start))
				}
			})
		}
	}
	if !complete {
		return 0
	}
	return offset
}

// corePatternMax is CORENAME_MAX_SIZE: a longer pattern is cut.
const corePatternMax = 128

// CorePattern is /proc/sys/kernel/core_pattern.
func (k *Kernel) CorePattern() string {
	if s := k.corePattern.Load(); s != nil {
		return *s
	}
	return "core"
}

// SetCorePattern sets /proc/sys/kernel/core_pattern from what was written:
// its first line, cut to corePatternMax-1 bytes, as proc_dostring.
func (k *Kernel) SetCorePattern(s string) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) >= corePatternMax {
		s = s[:corePatternMax-1]
	}
	k.corePattern.Store(&s)
}

// coreName is the core file's path for t's death by sig, the pattern's
// specifiers replaced as Linux's format_corename (%p %P pid, %i %I tid,
// %u %g uid and gid, %s signal, %t time, %h host name, %e the thread's
// name, %E the executable's path with '!' for '/', %c RLIMIT_CORE, %%);
// false for a pipe ("|program").
func (t *Task) coreName(sig unix.Signal) (string, bool) {
	p := t.Proc
	pattern := p.k.CorePattern()
	if strings.HasPrefix(pattern, "|") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '%' || i+1 == len(pattern) {
			b.WriteByte(pattern[i])
			continue
		}
		i++
		switch pattern[i] {
		case '%':
			b.WriteByte('%')
		case 'p', 'P':
			b.WriteString(strconv.Itoa(p.PID))
		case 'i', 'I':
			b.WriteString(strconv.Itoa(t.TID))
		case 'u':
			b.WriteString(strconv.FormatUint(uint64(p.UID), 10))
		case 'g':
			b.WriteString(strconv.FormatUint(uint64(p.GID), 10))
		case 's':
			b.WriteString(strconv.Itoa(int(sig)))
		case 't':
			b.WriteString(strconv.FormatInt(p.k.Now().Unix(), 10))
		case 'h':
			host, _ := t.UTSNames()
			b.WriteString(host)
		case 'e':
			b.WriteString(strings.ReplaceAll(t.Comm(), "/", "!"))
		case 'E':
			p.mu.Lock()
			exe := p.Exe
			p.mu.Unlock()
			b.WriteString(strings.ReplaceAll(exe, "/", "!"))
		case 'c':
			if l := p.Limit(unix.RLIMIT_CORE).Cur; l == RlimInfinity {
				b.WriteString("18446744073709551615")
			} else {
				b.WriteString(strconv.FormatUint(l, 10))
			}
		}
	}
	name := b.String()
	if !path.IsAbs(name) {
		name = path.Join(p.Cwd(), name)
	}
	return name, true
}

// coreNotes are the core file's notes: NT_PRSTATUS for t, NT_PRPSINFO
// and NT_SIGINFO.
func (t *Task) coreNotes(sig unix.Signal) []byte {
	p := t.Proc
	var out []byte
	le := binary.LittleEndian
	note := func(typ uint32, desc []byte) {
		var h [12]byte
		le.PutUint32(h[0:], 5) // "CORE" and its NUL
		le.PutUint32(h[4:], uint32(len(desc)))
		le.PutUint32(h[8:], typ)
		out = append(out, h[:]...)
		out = append(out, "CORE\x00\x00\x00\x00"...)
		out = append(out, desc...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	ppid, pgid, sid := p.ParentPID(), p.PGID(), p.SID()
	var st [prstatusSize]byte
	le.PutUint32(st[0:], uint32(sig)) // pr_info.si_signo
	le.PutUint16(st[12:], uint16(sig))
	le.PutUint64(st[16:], uint64(t.Pending()))
	le.PutUint64(st[24:], uint64(t.Mask()))
	le.PutUint32(st[32:], uint32(t.TID))
	le.PutUint32(st[36:], uint32(ppid))
	le.PutUint32(st[40:], uint32(pgid))
	le.PutUint32(st[44:], uint32(sid))
	u := t.Usage()
	putTimeval(st[48:], u.User)
	putTimeval(st[64:], u.System)
	le.PutUint64(st[prstatusRegs:], t.Regs.PC)
	for r := 1; r < 32; r++ {
		le.PutUint64(st[prstatusRegs+8*r:], t.Regs.X[r])
	}
	note(ntPrstatus, st[:])
	var ps [prpsinfoSize]byte
	ps[1] = 'R'
	le.PutUint32(ps[16:], p.UID)
	le.PutUint32(ps[20:], p.GID)
	le.PutUint32(ps[24:], uint32(p.PID))
	le.PutUint32(ps[28:], uint32(ppid))
	le.PutUint32(ps[32:], uint32(pgid))
	le.PutUint32(ps[36:], uint32(sid))
	p.mu.Lock()
	exe, args := p.Exe, p.Cmdline
	p.mu.Unlock()
	copy(ps[40:55], path.Base(exe))
	psargs := ps[56:135]
	for i, a := range args {
		if i > 0 && len(psargs) > 0 {
			psargs[0], psargs = ' ', psargs[1:]
		}
		psargs = psargs[copy(psargs, a):]
	}
	note(ntPrpsinfo, ps[:])
	var si [coreSiginfoSize]byte
	le.PutUint32(si[0:], uint32(sig))
	note(ntSiginfo, si[:])
	return out
}

func putTimeval(b []byte, d time.Duration) {
	binary.LittleEndian.PutUint64(b, uint64(d/time.Second))
	binary.LittleEndian.PutUint64(b[8:], uint64(d%time.Second/time.Microsecond))
}
