package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/icount/counter"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// Counting (bench --icount): every target's QEMU loads the icount plugin,
// and the bench brackets each phase (boot to first 200, keep-alive,
// fresh connections, the transfer) with a dump of its counts and a
// reading of QEMU's CPU time.

// openSBI is the firmware QEMU runs for -bios default (Debian's
// qemu-system-data).
const openSBI = "/usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.bin"

// firmwareWindow is the firmware's size where jiege does not know it (an
// attempt's own QEMU): the 2 MiB OpenSBI keeps below a kernel at
// 0x80200000.
const firmwareWindow = 2 << 20

// buildPlugin builds the icount plugin for --icount.
func (b *bencher) buildPlugin(ctx context.Context) error {
	b.progress("icount: building the QEMU plugin (make icount-plugin)")
	so, err := counter.Build(ctx, b.repo, io.Discard)
	if err != nil {
		return envErr(err)
	}
	b.plugin = so
	return nil
}

// layout tells t's privilege modes apart (counter.Layout).
func (b *bencher) layout(t *target) counter.Layout {
	ram, _ := qemu.MemBytes(b.mem)
	l := counter.Layout{FirmwareSize: firmwareWindow, RAMSize: uint64(ram)}
	if t.att != nil {
		return l
	}
	m := t.machine
	if mem, err := qemu.MemBytes(m.Mem); err == nil {
		l.RAMSize = uint64(mem)
	}
	bios := m.BIOS
	if bios == "default" {
		bios = openSBI
	}
	if st, err := os.Stat(bios); err == nil {
		l.FirmwareSize = uint64(st.Size())
	}
	if k, err := qemu.Kind(m.Kernel); err == nil && k == qemu.KindELF {
		l.KernelBase, _ = counter.ELFKernelBase(m.Kernel)
	}
	return l
}

// counting reads one guest's counts at the end of each phase.
type counting struct {
	session *counter.Session
	layout  counter.Layout
	g       *guest
	last    counter.Counts
	lastCPU time.Duration
}

// phase returns the instructions by mode and QEMU's CPU time since the
// last call (the first: since QEMU started), each divided by units.
func (c *counting) phase(ctx context.Context, units float64) (report.RunWork, error) {
	insns, err := c.session.Dump(ctx)
	if err != nil {
		return report.RunWork{}, err
	}
	pid := c.g.qemuPID()
	if pid == 0 {
		return report.RunWork{}, fmt.Errorf("icount: the guest's QEMU is not running")
	}
	cpu, err := counter.HostCPU(pid)
	if err != nil {
		return report.RunWork{}, fmt.Errorf("icount: QEMU's CPU time: %w", err)
	}
	now := c.layout.Sum(insns)
	d := now.Sub(c.last)
	w := report.RunWork{
		Kernel:    float64(d[counter.Supervisor]) / units,
		Machine:   float64(d[counter.Machine]) / units,
		User:      float64(d[counter.User]) / units,
		HostCPUMS: ms(cpu-c.lastCPU) / units,
	}
	c.last, c.lastCPU = now, cpu
	return w, nil
}

// qemuPID is the process id of the guest's QEMU, 0 if none runs.
func (g *guest) qemuPID() int {
	if g.run != nil {
		if l, _, _, ok := g.run.Serving(); ok {
			return l.PID
		}
		return 0
	}
	return g.PID()
}
