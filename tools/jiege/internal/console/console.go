// Package console owns reading a guest's console the way jiege watches it:
// which lines are the firmware's (OpenSBI's banner), QEMU's or jiege's own
// and which are the kernel's, which lines show a panic or a trap dump, and
// following a console log file as it grows.
package console

import (
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
)

var openSBI = regexp.MustCompile(`^OpenSBI v[0-9]`)

// notKernel matches console lines that the kernel under test did not print:
// OpenSBI's banner (its logo, its "Name : value" table), QEMU's own
// messages, jiege's shim, make, and a run command's echo of QEMU's command
// line.
var notKernel = []*regexp.Regexp{
	openSBI,
	regexp.MustCompile(`^(Platform|Firmware|Runtime SBI|Standard SBI|Experimental SBI|Domain[0-9]+|Boot HART)\b[^:]*:`),
	regexp.MustCompile("^[ _/\\\\|()'.<>,`-]*$"), // OpenSBI's logo, rules, blank lines
	regexp.MustCompile(`^qemu-system-[a-z0-9_]+: `),
	regexp.MustCompile(`^QEMU[ :]`),
	regexp.MustCompile(`^(\S*/)?qemu-system-riscv64\s`),
	// The next lines of a QEMU command that make echoes over several lines.
	regexp.MustCompile(`^-{1,2}(machine|M|m|smp|cpu|bios|kernel|initrd|append|dtb|netdev|nic|net|device|drive|global|object|serial|monitor|nographic|display|accel|chardev)\b`),
	regexp.MustCompile(`^jiege: `),
	regexp.MustCompile(`^make(\[[0-9]+\])?: `),
}

// FromKernel reports whether a console line is the kernel's (or its
// programs') output rather than the firmware's, QEMU's or jiege's.
func FromKernel(line string) bool {
	line = strings.TrimSpace(line)
	for _, re := range notKernel {
		if re.MatchString(line) {
			return false
		}
	}
	return true
}

var (
	// panicWord is "panic" or "panicked" as a word, in any case, not an
	// option such as "panic=10" or "panic_on_oops".
	panicWord = regexp.MustCompile(`(?i)(^|[^a-z0-9_])panic(ked|king)?([^a-z0-9_=]|$)`)
	// trapDump is a trap register with a value: "scause 0xd", "mcause=0x5",
	// Linux's "badaddr: 0000000000000000".
	trapDump = regexp.MustCompile(`(?i)\b(scause|mcause|sepc|mepc|stval|mtval|badaddr)\b\s*[:=]?\s*(0x)?[0-9a-f]{2,}`)
	// oops is the words of a kernel fault: Linux's, Go's runtime's
	// ("fatal error: "), a trap no handler took (OpenSBI's
	// "sbi_trap_error", "unhandled exception", "unexpected trap").
	oops = regexp.MustCompile(`Unable to handle kernel|\bOops\b|^(\[[ 0-9.]+\] )?BUG: |(?i:\bfatal error\b)|\bsbi_trap_error\b|(?i:\b(unhandled|unexpected|unknown) (exception|trap|interrupt|scause)\b)`)
	// nginxLog is a line of nginx's error log, which quotes request URIs.
	nginxLog = regexp.MustCompile(`^[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9:]{8} \[[a-z]+\] `)
)

// Panic reports whether a console line's words say the kernel (or the
// firmware it trapped into) panicked or faulted.
func Panic(line string) bool {
	line = strings.TrimSpace(line)
	if nginxLog.MatchString(line) {
		return false
	}
	return panicWord.MatchString(line) || oops.MatchString(line)
}

// TrapDump reports whether a console line shows a trap register with its
// value ("sepc=0x80201234"). Alone that is no panic: some kernels print
// sepc on every fork. It is one when the kernel went silent after it.
func TrapDump(line string) bool {
	line = strings.TrimSpace(line)
	return !nginxLog.MatchString(line) && trapDump.MatchString(line)
}

// Follower reads a console log file as it grows and sorts its lines.
type Follower struct {
	path string

	mu      sync.Mutex
	off     int64
	partial string // bytes after the last newline
	stale   int    // polls the partial line stayed the same
	text    strings.Builder
	recent  []string
	kernel  string   // the first line from the kernel
	panic   []string // the first panic line and the lines after it
	// dump is the last trap register dump: its first line and the lines
	// after it; sinceDump counts the kernel's lines after its last
	// register line.
	dump      []string
	sinceDump int
	sawFW     bool
	fw        string // the firmware's banner line, e.g. "OpenSBI v1.1"
	// continued says the last line added was flushed before its newline;
	// its rest, when it comes, is sorted as its start was (contKernel).
	continued, contKernel bool
}

const (
	keepRecent = 200
	keepText   = 1 << 20
	// panicContext is how many lines after a panic line are kept with it.
	panicContext = 8
	// dumpTrail is how many of the kernel's lines may follow a register
	// dump (its backtrace, a last message) with the kernel still counted
	// silent after it; a dump more lines back is a new dump's start.
	dumpTrail = 32
	// maxLine splits long lines, and flushes a line that never ends (a
	// kernel printing without newlines) once it is this long.
	maxLine = 256
)

// Follow follows the file at path from byte offset from.
func Follow(path string, from int64) *Follower {
	return &Follower{path: path, off: from}
}

// Poll reads what was appended since the last call. A partial last line
// counts once it stayed unchanged over two polls or grew past maxLine.
func (f *Follower) Poll() error {
	fh, err := os.Open(f.path)
	if err != nil {
		return err
	}
	defer fh.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := io.ReadAll(io.NewSectionReader(fh, f.off, 64<<20))
	f.off += int64(len(b))
	if len(b) > 0 {
		f.stale = 0
	} else if f.partial != "" {
		f.stale++
	}
	s := f.partial + string(b)
	lines := strings.Split(s, "\n")
	f.partial = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		f.add(l, true)
	}
	if f.partial != "" && (f.stale >= 2 || len(f.partial) >= maxLine) {
		f.add(f.partial, false)
		f.partial, f.stale = "", 0
	}
	return err
}

// add sorts one line, in maxLine pieces that all belong where its start
// does (a long "jiege: qemu ..." line is no kernel output in any piece);
// complete says it ended with a newline. f.mu is held.
func (f *Follower) add(l string, complete bool) {
	kernel := f.contKernel
	if !f.continued {
		kernel = FromKernel(clean(l))
	}
	for len(l) > maxLine {
		f.addLine(l[:maxLine], kernel)
		l = l[maxLine:]
	}
	f.addLine(l, kernel)
	f.continued, f.contKernel = !complete, kernel
}

func (f *Follower) addLine(raw string, fromKernel bool) {
	l := clean(raw)
	if f.text.Len() < keepText {
		f.text.WriteString(l)
		f.text.WriteByte('\n')
	}
	f.recent = append(f.recent, l)
	if len(f.recent) > 2*keepRecent {
		f.recent = append(f.recent[:0], f.recent[len(f.recent)-keepRecent:]...)
	}
	switch {
	case f.panic != nil && len(f.panic) <= panicContext:
		f.panic = append(f.panic, l)
	case f.panic == nil && Panic(l):
		f.panic = []string{l}
	}
	if strings.TrimSpace(l) == "" {
		return
	}
	switch {
	case TrapDump(l):
		if f.sinceDump > dumpTrail {
			f.dump = nil
		}
		if len(f.dump) <= panicContext {
			f.dump = append(f.dump, l)
		}
		f.sinceDump = 0
	case f.dump != nil && fromKernel:
		if len(f.dump) <= panicContext {
			f.dump = append(f.dump, l)
		}
		f.sinceDump++
	}
	if !fromKernel {
		f.sawFW = true
		if f.fw == "" && openSBI.MatchString(l) {
			f.fw = strings.TrimSpace(l)
		}
	} else if f.kernel == "" {
		f.kernel = l
	}
}

// ansi matches terminal escape sequences.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// clean drops escape sequences and control characters.
func clean(s string) string {
	s = ansi.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// KernelLine is the first line the kernel printed, if any.
func (f *Follower) KernelLine() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kernel, f.kernel != ""
}

// OtherOutput reports whether lines from the firmware, QEMU or jiege came.
func (f *Follower) OtherOutput() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sawFW
}

// Firmware is the firmware's banner line ("OpenSBI v1.1"), if one came.
func (f *Follower) Firmware() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fw
}

// Panic returns the first panic line and the lines after it, or nil.
func (f *Follower) Panic() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.panic...)
}

// Dump returns the last trap register dump with the lines after it, or
// nil, and whether the kernel went silent after it: at most dumpTrail of
// its lines came after the dump's last register line.
func (f *Follower) Dump() (lines []string, silent bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.dump...), f.dump != nil && f.sinceDump <= dumpTrail
}

// Tail returns up to n of the last non-blank lines.
func (f *Follower) Tail(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i := len(f.recent) - 1; i >= 0 && len(out) < n; i-- {
		if strings.TrimSpace(f.recent[i]) != "" {
			out = append(out, f.recent[i])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Text is the console text read so far (its first MiB).
func (f *Follower) Text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.text.String()
}
