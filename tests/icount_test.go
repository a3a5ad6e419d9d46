package tests

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jiege-go/jiege/tools/icount/counter"
)

// TestIcountSyscallLoop boots a static program that makes N getppid
// system calls as /init, with the icount plugin that `jiege bench
// --icount` loads, for N = 0, calls and 2*calls: the counts by mode of
// the last boot must add calls times the per-call counts the second one
// measured (within 1%), and the user per-call count must be the loop's
// four instructions. QEMU runs with -icount, so that the guest's clock,
// and with it the kernel's timer interrupts, follows the instructions run
// and not the host's load: on the host's clock the second 100,000 calls
// took up to 0.9% more kernel instructions than the first on a loaded host.
func TestIcountSyscallLoop(t *testing.T) {
	const calls = 100000
	if out, err := exec.Command("make", "-C", repoRoot, "--no-print-directory", "icount-plugin").CombinedOutput(); err != nil {
		t.Fatalf("make icount-plugin: %v\n%s", err, out)
	}
	plugin := filepath.Join(repoRoot, "build", "icount.so")
	var counts [3]counter.Counts
	for i := range counts {
		bin := crossCompile(t, "getppid_loop.c", "-static", "-DCALLS="+strconv.Itoa(i*calls))
		s := counter.NewSession(plugin, filepath.Join(t.TempDir(), "run"))
		r := bootKernel(t, "256M", "", 3*time.Minute, append(s.Args(), "-icount", "shift=3", "-initrd", initramfs(t, bin, nil))...)
		if r.timedOut || r.exitCode != 0 {
			t.Fatalf("%d calls: exit %d (timed out %v):\n%s", i*calls, r.exitCode, r.timedOut, r.console)
		}
		insns, err := counter.ReadDumpFile(s.DumpPath())
		if err != nil {
			t.Fatalf("%d calls: the dump QEMU's exit writes: %v", i*calls, err)
		}
		counts[i] = oursLayout(t, 256<<20).Sum(insns)
		t.Logf("%d calls: %v", i*calls, counts[i])
	}
	first, second := counts[1].Sub(counts[0]), counts[2].Sub(counts[1])
	for _, m := range []counter.Mode{counter.User, counter.Supervisor} {
		perCall := float64(first[m]) / calls
		got := float64(second[m]) / calls
		t.Logf("%v: %.2f instructions a call over the first %d calls, %.2f over the next", m, perCall, calls, got)
		if math.Abs(got-perCall) > 0.01*perCall {
			t.Errorf("%v: the second %d calls ran %.2f instructions a call, the first %.2f: not within 1%%", m, calls, got, perCall)
		}
	}
	if user := float64(second[counter.User]) / calls; math.Abs(user-4) > 0.04 {
		t.Errorf("user: %.2f instructions a call, want the loop's 4", user)
	}
}

// oursLayout tells our kernel's modes apart (counter.Layout): the
// trampoline is its firmware, and it is linked above user memory.
func oursLayout(t *testing.T, ram uint64) counter.Layout {
	t.Helper()
	tramp, err := os.Stat(filepath.Join(repoRoot, "build", "tramp.bin"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := counter.ELFKernelBase(filepath.Join(repoRoot, "build", "kernel.elf"))
	if err != nil {
		t.Fatal(err)
	}
	if base == 0 {
		t.Fatal(fmt.Errorf("build/kernel.elf loads in the upper half: the test expects it above user memory"))
	}
	return counter.Layout{FirmwareSize: uint64(tramp.Size()), RAMSize: ram, KernelBase: base}
}
