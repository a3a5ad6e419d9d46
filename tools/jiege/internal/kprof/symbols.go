package kprof

import (
	"debug/elf"
	"debug/gosym"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/jiege-go/jiege/profiling"
)

// GoSymbols names the pcs of a Go program (the kernel) from its pc-line
// table: the function, its file and line; a pc outside Go's code (the
// kernel's own vDSO lives in its data) by the symbol that holds it.
type GoSymbols struct {
	table      *gosym.Table
	start, end uint64 // the loaded image, from the text section on
	symbols    []elfFunc
}

// OpenGo reads the pc-line table of a Go ELF binary.
func OpenGo(path string) (*GoSymbols, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	text, pcln := f.Section(".text"), f.Section(".gopclntab")
	if text == nil || pcln == nil {
		return nil, fmt.Errorf("%s: no .text or .gopclntab: not a Go binary", path)
	}
	data, err := pcln.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: .gopclntab: %v", path, err)
	}
	table, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	g := &GoSymbols{table: table, start: text.Addr, end: text.Addr + text.Size}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			g.end = max(g.end, p.Vaddr+p.Memsz)
		}
	}
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Size > 0 && s.Value >= g.start {
			g.symbols = append(g.symbols, elfFunc{s.Value, s.Size, s.Name})
		}
	}
	sort.Slice(g.symbols, func(i, j int) bool { return g.symbols[i].addr < g.symbols[j].addr })
	return g, nil
}

// Lookup returns the function holding pc, and pc's file and line.
func (g *GoSymbols) Lookup(pc uint64) (fn, file string, line int, ok bool) {
	file, line, f := g.table.PCToLine(pc)
	if f != nil {
		return f.Name, file, line, true
	}
	i := sort.Search(len(g.symbols), func(i int) bool { return g.symbols[i].addr > pc }) - 1
	if i >= 0 && pc < g.symbols[i].addr+g.symbols[i].size {
		return g.symbols[i].name, "", 0, true
	}
	return "", "", 0, false
}

// ELFSymbols names the pcs of an ELF file (a program or a shared library)
// from its symbol tables, by file offset, so that the load address does
// not matter.
type ELFSymbols struct {
	loads []elf.ProgHeader // PT_LOAD segments
	funcs []elfFunc        // by address
}

type elfFunc struct {
	addr, size uint64
	name       string
}

// OpenELF reads an ELF file's function symbols (.symtab and .dynsym).
func OpenELF(path string) (*ELFSymbols, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	e := &ELFSymbols{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			e.loads = append(e.loads, p.ProgHeader)
		}
	}
	seen := map[uint64]bool{}
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := read() // a stripped file has no .symtab
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || seen[s.Value] {
				continue
			}
			seen[s.Value] = true
			e.funcs = append(e.funcs, elfFunc{s.Value, s.Size, s.Name})
		}
	}
	sort.Slice(e.funcs, func(i, j int) bool { return e.funcs[i].addr < e.funcs[j].addr })
	return e, nil
}

// Lookup returns the function at a file offset: the symbol whose range
// holds it, or the closest below it when sizes are unknown (0).
func (e *ELFSymbols) Lookup(off uint64) (string, bool) {
	var addr uint64
	found := false
	for _, p := range e.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			addr, found = off-p.Off+p.Vaddr, true
			break
		}
	}
	if !found {
		return "", false
	}
	i := sort.Search(len(e.funcs), func(i int) bool { return e.funcs[i].addr > addr }) - 1
	if i < 0 {
		return "", false
	}
	if f := e.funcs[i]; f.size == 0 || addr < f.addr+f.size {
		return f.name, true
	}
	return "", false
}

// Files finds the files of a root filesystem tree by the size and
// FileHash that the profiler records for each mapping.
type Files struct {
	root  string
	paths map[fileID]string // path inside the tree, "/usr/sbin/nginx"
}

type fileID struct{ size, hash uint64 }

// FindFiles indexes the regular files under root whose sizes are among
// those of the mappings.
func FindFiles(root string, maps []profiling.Mapping) (*Files, error) {
	sizes := map[uint64]bool{}
	for _, m := range maps {
		sizes[m.FileSize] = true
	}
	fl := &Files{root: root, paths: map[fileID]string{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || !sizes[uint64(info.Size())] {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		head := make([]byte, 4096)
		n, _ := f.ReadAt(head, 0)
		id := fileID{uint64(info.Size()), profiling.FileHash(head[:n])}
		if _, dup := fl.paths[id]; !dup {
			rel, _ := filepath.Rel(root, path)
			fl.paths[id] = "/" + filepath.ToSlash(rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("indexing %s: %v", root, err)
	}
	return fl, nil
}

// Path returns a mapping's file as a path inside the tree, or "".
func (fl *Files) Path(m profiling.Mapping) string {
	return fl.paths[fileID{m.FileSize, m.FileHash}]
}

// HostPath is where a path inside the tree is on the host.
func (fl *Files) HostPath(p string) string { return filepath.Join(fl.root, filepath.FromSlash(p)) }
