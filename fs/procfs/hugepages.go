package procfs

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Huge pages as /proc and /sys show them: /proc/meminfo's HugePages_
// lines of the default size, /proc/sys/vm/nr_hugepages, and a directory
// per size under /sys/kernel/mm/hugepages.

// hugeMeminfo is /proc/meminfo's huge page lines, in Linux's format: the
// default pool's counts, and the memory of every pool's pages.
func hugeMeminfo(pools []*mm.HugePool) string {
	var all uintptr
	for _, p := range pools {
		total, _, _ := p.Counts()
		all += uintptr(total) * p.Size
	}
	total, free, reserved := pools[0].Counts()
	return fmt.Sprintf("HugePages_Total:   %5d\nHugePages_Free:    %5d\nHugePages_Rsvd:    %5d\nHugePages_Surp:    %5d\n"+
		"Hugepagesize:   %8d kB\nHugetlb:        %8d kB\n", total, free, reserved, 0, pools[0].Size>>10, all>>10)
}

// nrHugepages is a pool's nr_hugepages, which root sets: a decimal
// count (EINVAL otherwise, as proc_doulongvec_minmax).
func nrHugepages(p *mm.HugePool) *fs.Node {
	return fs.NewSetting(func() []byte {
		total, _, _ := p.Counts()
		return []byte(strconv.Itoa(total) + "\n")
	}, func(b []byte) error {
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 31)
		if err != nil {
			return unix.EINVAL
		}
		p.SetPages(int(n))
		return nil
	})
}

// hugepagesDir is /sys/kernel/mm/hugepages: hugepages-<size>kB for each
// size, with its pool's counts.
func hugepagesDir(pools []*mm.HugePool) *fs.Node {
	dirs := map[string]*fs.Node{}
	for _, p := range pools {
		count := func(pick func(total, free, reserved int) int) *fs.Node {
			n := procFile(func() []byte { return []byte(strconv.Itoa(pick(p.Counts())) + "\n") })
			n.Dev = fs.DevSysfs
			return n
		}
		nr := nrHugepages(p)
		nr.Dev = fs.DevSysfs
		dirs[fmt.Sprintf("hugepages-%dkB", p.Size>>10)] = sysDir(map[string]*fs.Node{
			"nr_hugepages":      nr,
			"free_hugepages":    count(func(_, free, _ int) int { return free }),
			"resv_hugepages":    count(func(_, _, reserved int) int { return reserved }),
			"surplus_hugepages": count(func(int, int, int) int { return 0 }),
		})
	}
	return sysDir(dirs)
}

// dropCaches is /proc/sys/vm/drop_caches, which root writes 1 to 4 to
// (EINVAL otherwise) and no one reads: the kernel's heap is collected and
// its free pages given back, this kernel's only cache of freeable memory.
func dropCaches() *fs.Node {
	n := fs.NewSetting(func() []byte { return nil }, func(b []byte) error {
		v, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || v < 1 || v > 4 {
			return unix.EINVAL
		}
		mm.ReclaimHeap(0)
		return nil
	})
	n.Mode = 0o200
	return n
}

// compactMemory is /proc/sys/vm/compact_memory, which root writes 1 to
// (EINVAL otherwise): nothing to do, since a huge page here needs no
// contiguous frames (mm/hugetlb.go).
func compactMemory() *fs.Node {
	n := fs.NewSetting(func() []byte { return nil }, func(b []byte) error {
		if strings.TrimSpace(string(b)) != "1" {
			return unix.EINVAL
		}
		return nil
	})
	n.Mode = 0o200
	return n
}
