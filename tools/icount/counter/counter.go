// Package counter runs the icount QEMU plugin (../plugin/icount.c) for a
// guest and reads its counts: it builds the plugin, gives QEMU its
// arguments, asks for dumps, sums a dump's instructions by privilege mode
// and reads QEMU's host CPU time. tools/icount and `jiege bench --icount`
// use it.
//
// QEMU 7.2's plugin API (version 1) tells a plugin a translation block's
// virtual address, not the mode it runs in, so a block's mode comes from
// its address and the machine's layout (Layout): QEMU virt's boot ROM
// and the firmware image run in M-mode at their physical addresses; a
// kernel runs in the upper half of the address space (Linux and most
// kernels) or from its image's lowest address up (ours, linked above the
// 128 GiB of user memory), or untranslated at a physical address of RAM
// before it turns paging on; everything else is user code. What this
// misreads: code a kernel runs in M-mode from its own image at boot
// (ours' first few hundred instructions) counts as S-mode; a kernel
// linked in the lower half that is not an ELF file jiege knows counts as
// user; user code mapped at a physical address of RAM would count as
// S-mode (neither Linux nor ours maps programs there).
package counter

import (
	"bufio"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Mode is a RISC-V privilege mode.
type Mode int

const (
	User Mode = iota
	Supervisor
	Machine
)

func (m Mode) String() string { return [...]string{"user", "supervisor", "machine"}[m] }

// Counts are guest instructions by the mode that ran them.
type Counts [3]uint64

// Sub is c minus an earlier dump's counts.
func (c Counts) Sub(earlier Counts) Counts {
	var d Counts
	for m := range c {
		d[m] = c[m] - earlier[m]
	}
	return d
}

// The QEMU virt machine's memory map.
const (
	bootROMBase = 0x1000 // the reset vector's ROM, run in M-mode
	bootROMEnd  = 0x10000
	// RAMBase is where RAM starts, and QEMU loads -bios.
	RAMBase = 0x8000_0000
	// upperHalf is where a kernel of the usual layout starts.
	upperHalf = 1 << 63
)

// Layout is what tells a target's modes apart by address.
type Layout struct {
	// FirmwareSize is the -bios image's size: it runs in M-mode at RAMBase.
	FirmwareSize uint64
	// RAMSize is the guest's memory: other code at its physical
	// addresses is a kernel's, run before it turns paging on.
	RAMSize uint64
	// KernelBase is the kernel's lowest virtual address, when below the
	// upper half (0: the upper half).
	KernelBase uint64
}

// Mode is the mode that runs code at va.
func (l Layout) Mode(va uint64) Mode {
	kernelBase := l.KernelBase
	if kernelBase == 0 {
		kernelBase = upperHalf
	}
	switch {
	case va >= bootROMBase && va < bootROMEnd, va >= RAMBase && va-RAMBase < l.FirmwareSize:
		return Machine
	case va >= kernelBase, va >= RAMBase && va-RAMBase < l.RAMSize:
		return Supervisor
	}
	return User
}

// ELFKernelBase is the lowest virtual address an ELF kernel loads at,
// for Layout.KernelBase: 0 when it is in the upper half.
func ELFKernelBase(path string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	base := uint64(upperHalf)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Memsz > 0 {
			base = min(base, p.Vaddr)
		}
	}
	if base == upperHalf {
		return 0, nil
	}
	return base, nil
}

// Sum sums a dump's instructions by mode.
func (l Layout) Sum(insns map[uint64]uint64) Counts {
	var c Counts
	for va, n := range insns {
		c[l.Mode(va)] += n
	}
	return c
}

// ReadDump returns the instructions a dump's blocks at each address ran.
func ReadDump(r io.Reader) (map[uint64]uint64, error) {
	insns := map[uint64]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			return nil, fmt.Errorf("bad dump line %q", sc.Text())
		}
		va, err1 := strconv.ParseUint(fields[0], 16, 64)
		n, err2 := strconv.ParseUint(fields[1], 10, 64)
		count, err3 := strconv.ParseUint(fields[2], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("bad dump line %q: %w", sc.Text(), err)
		}
		insns[va] += n * count
	}
	return insns, sc.Err()
}

// ReadDumpFile is ReadDump of the file at path.
func ReadDumpFile(path string) (map[uint64]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	insns, err := ReadDump(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return insns, nil
}

// Build makes the plugin in the source tree repo (make icount-plugin)
// and returns its path; log gets make's output.
func Build(ctx context.Context, repo string, log io.Writer) (string, error) {
	if _, err := os.Stat(filepath.Join(repo, "tools", "icount", "plugin", "icount.c")); err != nil {
		return "", fmt.Errorf("the icount plugin's source is not in %s (give the source tree with --repo): %w", repo, err)
	}
	var out strings.Builder
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "icount-plugin")
	cmd.Dir = repo
	cmd.Stdout, cmd.Stderr = io.MultiWriter(log, &out), io.MultiWriter(log, &out)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("make icount-plugin in %s: %v: %s (it needs Debian's gcc and libc6-dev)", repo, err, strings.TrimSpace(out.String()))
	}
	return filepath.Join(repo, "build", "icount.so"), nil
}

// Session is the plugin in one QEMU: the files through which it takes
// requests and writes dumps.
type Session struct {
	plugin, req, dump string
}

// NewSession names the files of a plugin run after prefix.
func NewSession(plugin, prefix string) *Session {
	return &Session{plugin: plugin, req: prefix + ".icount-req", dump: prefix + ".icount-dump"}
}

// Args are QEMU's arguments that load the plugin.
func (s *Session) Args() []string {
	return []string{"-plugin", fmt.Sprintf("%s,req=%s,dump=%s", s.plugin, s.req, s.dump)}
}

// DumpPath is where the plugin writes its dumps, the last one as QEMU exits.
func (s *Session) DumpPath() string { return s.dump }

// dumpTimeout bounds the wait for a dump: the plugin looks for requests
// every 20 ms, and writes a few MB at most.
const dumpTimeout = 30 * time.Second

// Dump asks the plugin for the counts so far and returns them.
func (s *Session) Dump(ctx context.Context) (map[uint64]uint64, error) {
	if err := os.WriteFile(s.req, nil, 0o644); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(dumpTimeout)
	for {
		// The plugin removes the request after it renamed the dump in place.
		if _, err := os.Stat(s.req); errors.Is(err, os.ErrNotExist) {
			return ReadDumpFile(s.dump)
		}
		if time.Now().After(deadline) {
			os.Remove(s.req)
			return nil, fmt.Errorf("the icount plugin wrote no dump in %v (is QEMU running with %s?)", dumpTimeout, s.plugin)
		}
		select {
		case <-ctx.Done():
			os.Remove(s.req)
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Remove removes the session's files.
func (s *Session) Remove() {
	os.Remove(s.req)
	os.Remove(s.dump)
	os.Remove(s.dump + ".tmp")
}

// clockTick is Linux's USER_HZ, the unit of /proc/PID/stat's times: 100
// on every architecture Debian builds for.
const clockTick = 10 * time.Millisecond

// HostCPU is the CPU time process pid has used, user and system.
func HostCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(string(b))
}

// parseStat reads utime and stime (fields 14 and 15) from a
// /proc/PID/stat line; the command name, field 2, may hold spaces and
// parentheses, so fields count from its last ')'.
func parseStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("bad /proc stat line %q", stat)
	}
	fields := strings.Fields(stat[i+1:]) // from field 3, the state
	if len(fields) < 13 {
		return 0, fmt.Errorf("bad /proc stat line %q", stat)
	}
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("bad /proc stat line %q: %w", stat, err)
	}
	return time.Duration(utime+stime) * clockTick, nil
}
