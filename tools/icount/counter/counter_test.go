package counter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestModeByLayout(t *testing.T) {
	linux := Layout{FirmwareSize: 115328, RAMSize: 512 << 20}
	ours := Layout{FirmwareSize: 24, RAMSize: 512 << 20, KernelBase: 0x20_8001_0000}
	for _, c := range []struct {
		l    Layout
		va   uint64
		want Mode
	}{
		{linux, 0x1000, Machine},         // the reset ROM
		{linux, 0x8000_0100, Machine},    // OpenSBI
		{linux, 0x8020_0000, Supervisor}, // Linux before paging
		{linux, 0xffff_ffff_8000_1000, Supervisor},
		{linux, 0xffff_ffff_0100_0000, Supervisor}, // a module, below the kernel's text
		{linux, 0x2a_aaaa_b000, User},
		{linux, 0x10078, User},
		{ours, 0x8000_0010, Machine}, // the trampoline
		{ours, 0x8001_0000, Supervisor},
		{ours, 0x20_8001_2340, Supervisor},
		{ours, 0x1f_0000_0000 - 0x1000, User},
		{ours, 0x10078, User},
	} {
		if got := c.l.Mode(c.va); got != c.want {
			t.Errorf("%+v: %#x is %v, want %v", c.l, c.va, got, c.want)
		}
	}
}

func TestReadDumpSums(t *testing.T) {
	// Two blocks at one address (translated twice) add up.
	insns, err := ReadDump(strings.NewReader("10078 4 100\n10078 4 50\nffffffff80001000 10 3\n80000000 2 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := Layout{FirmwareSize: 24, RAMSize: 1 << 20}.Sum(insns)
	if want := (Counts{600, 30, 2}); got != want {
		t.Errorf("counts %v, want %v", got, want)
	}
	if _, err := ReadDump(strings.NewReader("10078 4\n")); err == nil {
		t.Error("a short line read without error")
	}
}

func TestParseStat(t *testing.T) {
	// Field 2 with a space and a parenthesis; utime 250, stime 50 ticks.
	line := "4242 (qemu (x) 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 123 456 789"
	d, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if d != 3*time.Second {
		t.Errorf("cpu %v, want 3s", d)
	}
	if _, err := HostCPU(os.Getpid()); err != nil {
		t.Error(err)
	}
}

// TestDumpProtocol plays the plugin's side: it answers a request by
// renaming a dump in place and removing the request.
func TestDumpProtocol(t *testing.T) {
	s := NewSession("icount.so", filepath.Join(t.TempDir(), "run"))
	defer s.Remove()
	if a := strings.Join(s.Args(), " "); !strings.HasPrefix(a, "-plugin icount.so,req=") || !strings.Contains(a, ",dump=") {
		t.Fatalf("args %q", a)
	}
	go func() {
		for {
			if _, err := os.Stat(s.req); err == nil {
				os.WriteFile(s.dump+".tmp", []byte("10078 4 25\n"), 0o644)
				os.Rename(s.dump+".tmp", s.dump)
				os.Remove(s.req)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	insns, err := s.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if insns[0x10078] != 100 {
		t.Errorf("dump %v", insns)
	}
}
