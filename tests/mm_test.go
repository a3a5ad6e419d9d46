package tests

import (
	"strings"
	"testing"
	"time"
)

// TestMemorySv39Answers checks memory calls whose answers qemu-user cannot
// give, against Linux's on Sv39 (TASK_SIZE 2^38), read from Linux 6.12:
// munmap's "start > TASK_SIZE || len > TASK_SIZE-start" and PAGE_ALIGN(len)
// == 0 give EINVAL (mm/mmap.c, do_vmi_munmap); mmap's get_unmapped_area
// gives ENOMEM for a length or a fixed range beyond TASK_SIZE;
// MAP_FIXED_NOREPLACE over a mapping, EEXIST; madvise_behavior_valid fails
// with EINVAL, and an unmapped range is ENOMEM (mm/madvise.c); mprotect of
// length 0 returns 0 before it looks at prot, and over a hole changes the
// mapped prefix and answers ENOMEM (mm/mprotect.c); mremap's new length 0
// is EINVAL (mm/mremap.c); brk past TASK_SIZE keeps the break (mm/mmap.c).
func TestMemorySv39Answers(t *testing.T) {
	bin := crossCompile(t, "mmsv39.c")
	r := bootKernel(t, "256M", "", 2*time.Minute, "-initrd", initramfs(t, bin, nil))
	if r.timedOut || r.exitCode != 0 {
		t.Fatalf("exit %d (timed out %v):\n%s", r.exitCode, r.timedOut, r.console)
	}
	want := []string{
		"munmap.lastpage: -1 EINVAL",
		"munmap.wraps: -1 EINVAL",
		"munmap.alias: -1 EINVAL",
		"munmap.tasksize: -1 EINVAL",
		"munmap.kept: aa",
		"mmap.1tib: -1 ENOMEM",
		"mmap.fixed.tasksize: -1 ENOMEM",
		"mmap.noreplace: -1 EEXIST",
		"madvise.badadvice: -1 EINVAL",
		"madvise.unmapped: -1 ENOMEM",
		"mprotect.zero.badprot: 0",
		"mremap.newlen0: -1 EINVAL",
		"brk.tasksize: 1",
		"munmap.last: 0",
		"mprotect.hole: -1 ENOMEM",
		"mprotect.hole.prefix.writable: 0 0",
	}
	got := initOutput(r.console)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ours:\n%s\nLinux:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
