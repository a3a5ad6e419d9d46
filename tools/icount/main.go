// Command icount attributes the guest instructions run between two dumps
// of the icount plugin (plugin/icount.c) to the kernel's functions and packages,
// per request: the kernel's instructions are exact where a sampled profile
// is not (interrupts masked, QEMU's own time, the host's noise), so two
// builds compare by them in one run each.
//
//	go run ./tools/icount -kernel build/kernel.elf -before B -after A -n 4000
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/jiege-go/jiege/tools/icount/counter"
)

// userTop is the end of user addresses (mm.MaxUserVA): a block below it
// is a user program's.
const userTop = 1 << 37

type function struct {
	start, end uint64
	name       string
}

// functions returns the ELF's functions by address.
func functions(path string) ([]function, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	var fns []function
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 {
			fns = append(fns, function{s.Value, s.Value + s.Size, s.Name})
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].start < fns[j].start })
	return fns, nil
}

// nameOf names the function at va.
func nameOf(fns []function, va uint64) string {
	if va < userTop {
		return "[user]"
	}
	i := sort.Search(len(fns), func(i int) bool { return fns[i].start > va }) - 1
	if i >= 0 && va < fns[i].end {
		return fns[i].name
	}
	return "[kernel]"
}

// packageOf is the package part of a function's name.
func packageOf(name string) string {
	slash := max(strings.LastIndex(name, "/"), 0)
	if dot := strings.Index(name[slash:], "."); dot >= 0 {
		return name[:slash+dot]
	}
	return name
}

func printTop(m map[string]float64, total float64, top int) {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return m[names[i]] > m[names[j]] })
	for i, name := range names {
		if i == top {
			break
		}
		fmt.Printf("%10.0f %5.1f%%  %s\n", m[name], 100*m[name]/total, name)
	}
}

func main() {
	kernel := flag.String("kernel", "build/kernel.elf", "the kernel ELF the guest ran")
	beforePath := flag.String("before", "", "the dump before the load")
	afterPath := flag.String("after", "", "the dump after the load")
	n := flag.Float64("n", 1, "requests in the load: figures are per request")
	top := flag.Int("top", 60, "functions to list")
	flag.Parse()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "icount:", err)
		os.Exit(1)
	}
	fns, err := functions(*kernel)
	if err != nil {
		fail(err)
	}
	before, err := counter.ReadDumpFile(*beforePath)
	if err != nil {
		fail(err)
	}
	after, err := counter.ReadDumpFile(*afterPath)
	if err != nil {
		fail(err)
	}
	byFunction, byPackage := map[string]float64{}, map[string]float64{}
	total := 0.0
	for va, insns := range after {
		if insns < before[va] {
			fail(fmt.Errorf("block %#x ran fewer instructions after than before: dumps swapped?", va))
		}
		d := float64(insns-before[va]) / *n
		name := nameOf(fns, va)
		byFunction[name] += d
		byPackage[packageOf(name)] += d
		total += d
	}
	fmt.Printf("%.0f instructions per request (%s)\n\nby package:\n", total, *kernel)
	printTop(byPackage, total, 30)
	fmt.Println("\nby function:")
	printTop(byFunction, total, *top)
}
