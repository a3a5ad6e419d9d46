package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestProfileNginx runs `jiege profile ours`: our kernel booted with
// profile=1000 serves nginx under the bench's load, and the samples, read
// from the stopped guest over QMP, come back as a pprof profile. It must
// parse, hold kernel samples named from kernel.elf with file and line in
// the kernel's own packages, and user samples named from the root
// filesystem's files: nginx's executable, which exec loads, and libc,
// which the dynamic loader maps with mmap (the load keeps nginx in both).
func TestProfileNginx(t *testing.T) {
	p := runProfile(t, 10*time.Minute, "--duration", "4s", "--rate", "1000")
	if p.Period != 1_000_000 || len(p.SampleType) != 2 || p.SampleType[1].Type != "cpu" {
		t.Errorf("period %d ns, sample types %v; want 1 ms and samples/cpu", p.Period, p.SampleType)
	}
	var kernelOurs, kernel, user, userNamed int
	files, named := map[string]bool{}, map[string]bool{}
	for _, s := range p.Sample {
		loc := s.Location[0]
		fn := loc.Line[0].Function
		if s.Label["pid"][0] == "kernel" {
			kernel++
			if loc.Mapping == nil || filepath.Base(loc.Mapping.File) != "kernel.elf" {
				t.Fatalf("kernel sample at %#x outside the kernel.elf mapping", loc.Address)
			}
			if strings.HasPrefix(fn.Name, "github.com/jiege-go/jiege/") && strings.HasSuffix(fn.Filename, ".go") && loc.Line[0].Line > 0 {
				kernelOurs++
			}
			continue
		}
		user++
		if loc.Mapping != nil && loc.Mapping.File != "" {
			files[loc.Mapping.File] = true
			if !strings.HasPrefix(fn.Name, "[") {
				userNamed++
				named[loc.Mapping.File] = true
			}
		}
	}
	t.Logf("%d samples: %d kernel (%d in the kernel's packages), %d user (%d named); user files %v, with named samples %v",
		len(p.Sample), kernel, kernelOurs, user, userNamed, files, named)
	if kernelOurs == 0 || user == 0 {
		t.Errorf("want kernel samples in the kernel's own functions and user samples")
	}
	for _, f := range []string{"/usr/sbin/nginx", "/usr/lib/riscv64-linux-gnu/libc.so.6"} {
		if !files[f] || !named[f] {
			t.Errorf("no user sample named in %s: files %v, with named samples %v", f, files, named)
		}
	}
}

// TestProfileIdle runs `jiege profile ours --initrd` on an init that
// only sleeps: the hart has nothing to run, and its sleep must show as
// samples of the kernel's idle instruction (arch/riscv64.wfi), one per
// sampling period slept, not as one sample of whatever pc the hart
// resumed after each sleep. The samples cover the run.
func TestProfileIdle(t *testing.T) {
	initrd := initramfs(t, crossCompile(t, "sleeper.c"), nil)
	p := runProfile(t, 5*time.Minute, "--initrd", initrd, "--duration", "3s", "--rate", "1000")
	idle := 0
	for _, s := range p.Sample {
		if s.Location[0].Line[0].Function.Name == "github.com/jiege-go/jiege/arch/riscv64.wfi" {
			idle++
		}
	}
	d := time.Duration(p.DurationNanos)
	t.Logf("%d samples over %v, %d of them idle", len(p.Sample), d, idle)
	if min := int(d / time.Millisecond * 8 / 10); len(p.Sample) < min {
		t.Errorf("%d samples over %v at 1000 Hz, want at least %d", len(p.Sample), d, min)
	}
	if idle < len(p.Sample)*9/10 {
		t.Errorf("%d of %d samples in arch/riscv64.wfi, want nine in ten or more: the hart only sleeps", idle, len(p.Sample))
	}
}

// TestProfileBoot runs `jiege profile ours --boot`: the samples from the
// profiler's start to the first 200, no load. They must hold the boot's
// own work, which a load never shows: the kernel unpacking the root
// file system (fs) and the dynamic loader mapping nginx's libraries.
func TestProfileBoot(t *testing.T) {
	p := runProfile(t, 5*time.Minute, "--boot", "--rate", "1000")
	unpack, loader := 0, 0
	for _, s := range p.Sample {
		loc := s.Location[0]
		if s.Label["pid"][0] == "kernel" && strings.HasPrefix(loc.Line[0].Function.Name, "github.com/jiege-go/jiege/fs.") {
			unpack++
		}
		if loc.Mapping != nil && filepath.Base(loc.Mapping.File) == "ld-linux-riscv64-lp64d.so.1" {
			loader++
		}
	}
	t.Logf("%d samples over %v: %d in the kernel's fs, %d in the dynamic loader", len(p.Sample), time.Duration(p.DurationNanos), unpack, loader)
	if unpack == 0 || loader == 0 {
		t.Errorf("want samples of the kernel's fs package and of ld.so in a boot's profile")
	}
}

// runProfile runs `jiege profile ours` with args and returns the parsed
// profile it wrote.
func runProfile(t *testing.T, limit time.Duration, args ...string) *profile.Profile {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cpu.pb.gz")
	r := jiege(t, limit, nil, append([]string{"profile", "ours", "--out", out}, args...)...)
	if r.code != 0 {
		t.Fatalf("jiege profile %v: exit %d\nstderr:\n%s", args, r.code, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("the profile does not parse: %v", err)
	}
	return p
}
