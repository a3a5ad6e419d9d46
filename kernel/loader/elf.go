package loader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// ErrNoExec reports a file that is not a RISC-V 64-bit ELF the kernel can
// run; execve returns ENOEXEC for it. A sentinel, never written.
var ErrNoExec = errors.New("exec format error")

// Image is an ELF file loaded into an address space.
type Image struct {
	Entry  uintptr // entry point, load bias included
	Phdr   uintptr // where the program headers are in memory (AT_PHDR)
	Phent  int
	Phnum  int
	Bias   uintptr // 0 for ET_EXEC, the load address for ET_DYN
	End    uintptr // end of the highest segment: the program break starts here
	Interp string  // PT_INTERP, the dynamic loader to run instead
	// The code's and the data's bounds, as Linux's load_elf_binary
	// computes them: the executable segments' lowest start and highest
	// file end, the last segment's start and the highest file end.
	StartCode, EndCode, StartData, EndData uintptr
}

// LoadELF maps the PT_LOAD segments of an ELF executable or shared object
// into as. An ET_DYN file is placed at bias; an ET_EXEC file at its own
// addresses. data is the file's contents; file, when not nil, is the file
// itself, whose pages each segment then maps privately as Linux does
// (mapSegment): programs share their code and copy a page when they write
// it. Otherwise, and for a segment laid out so that its pages cannot be
// the file's, the contents are copied in. The rest of each segment reads
// as zeros. Malformed files return an error wrapping ErrNoExec.
func LoadELF(as *mm.AddressSpace, data []byte, bias uintptr, file *fs.Node, path string) (*Image, error) {
	f, err := parseELF(data)
	if err != nil {
		return nil, err
	}
	if f.typ == elfETExec {
		bias = 0
	}
	img := &Image{Entry: uintptr(f.entry) + bias, Bias: bias, Phent: elfPhdrSize, Phnum: len(f.progs)}
	var mappedEnd uintptr
	loads := 0
	for i := range f.progs {
		p := &f.progs[i]
		switch p.typ {
		case elfPTInterp:
			if p.off+p.filesz > uint64(len(data)) || p.off+p.filesz < p.off || p.filesz == 0 {
				return nil, fmt.Errorf("%w: PT_INTERP out of the file", ErrNoExec)
			}
			img.Interp = string(bytes.TrimRight(data[p.off:p.off+p.filesz], "\x00"))
		case elfPTLoad:
			if err := loadSegment(as, data, file, path, p, bias, &mappedEnd); err != nil {
				return nil, err
			}
			img.bound(p, bias)
			if f.phoff >= p.off && f.phoff < p.off+p.filesz {
				img.Phdr = uintptr(p.vaddr+f.phoff-p.off) + bias
			}
			img.End = max(img.End, uintptr(p.vaddr+p.memsz)+bias)
			loads++
		}
	}
	if loads == 0 {
		return nil, fmt.Errorf("%w: no loadable segment", ErrNoExec)
	}
	return img, nil
}

// ELF constants (Linux include/uapi/linux/elf.h) of exec.
// debug/elf has them too, but would bring the package inits of its DWARF
// reader and decompressors into the kernel's boot.
const (
	elfHeaderSize   = 64    // Elf64_Ehdr
	elfPhdrSize     = 56    // Elf64_Phdr
	elfMaxPhdrBytes = 65536 // Linux's bound on a file's program headers
	elfClass64      = 2     // EI_CLASS
	elfDataLSB      = 1     // EI_DATA: little-endian
	elfETExec       = 2
	elfETDyn        = 3
	elfPTLoad       = 1
	elfPTInterp     = 3
	elfPFX          = 1
	elfPFW          = 2
	elfPFR          = 4
	elfEMRISCV      = 243
)

// elfFile is what exec reads of an ELF file: the header's fields it uses
// and the program headers.
type elfFile struct {
	typ   uint16
	entry uint64
	phoff uint64
	progs []elfProg
}

// elfProg is an Elf64_Phdr.
type elfProg struct {
	typ, flags                uint32
	off, vaddr, filesz, memsz uint64
}

// parseELF reads the ELF header and the program headers of data and checks
// them as Linux's binfmt_elf does: the magic, a RISC-V 64-bit
// little-endian executable or shared object, program headers of the
// native size that lie in the file. Section headers, which a program
// does not need to run, are not read.
func parseELF(data []byte) (*elfFile, error) {
	if len(data) < elfHeaderSize || string(data[:4]) != "\x7fELF" {
		return nil, fmt.Errorf("%w: not an ELF file", ErrNoExec)
	}
	le := binary.LittleEndian
	class, order, machine := data[4], data[5], le.Uint16(data[18:])
	if class != elfClass64 || order != elfDataLSB || machine != elfEMRISCV {
		return nil, fmt.Errorf("%w: class %d, data %d, machine %d, want RISC-V 64-bit little-endian", ErrNoExec, class, order, machine)
	}
	f := &elfFile{typ: le.Uint16(data[16:]), entry: le.Uint64(data[24:]), phoff: le.Uint64(data[32:])}
	if f.typ != elfETExec && f.typ != elfETDyn {
		return nil, fmt.Errorf("%w: ELF type %d", ErrNoExec, f.typ)
	}
	phentsize, phnum := le.Uint16(data[54:]), uint64(le.Uint16(data[56:]))
	size := phnum * elfPhdrSize
	if phentsize != elfPhdrSize || size == 0 || size > elfMaxPhdrBytes {
		return nil, fmt.Errorf("%w: %d program headers of %d bytes", ErrNoExec, phnum, phentsize)
	}
	if f.phoff > uint64(len(data)) || size > uint64(len(data))-f.phoff {
		return nil, fmt.Errorf("%w: program headers out of the file", ErrNoExec)
	}
	f.progs = make([]elfProg, phnum)
	for i := range f.progs {
		b := data[f.phoff+uint64(i)*elfPhdrSize:]
		f.progs[i] = elfProg{
			typ: le.Uint32(b[0:]), flags: le.Uint32(b[4:]),
			off: le.Uint64(b[8:]), vaddr: le.Uint64(b[16:]), filesz: le.Uint64(b[32:]), memsz: le.Uint64(b[40:]),
		}
	}
	return f, nil
}

// bound widens the image's code and data bounds by segment p.
func (img *Image) bound(p *elfProg, bias uintptr) {
	start, fileEnd := uintptr(p.vaddr)+bias, uintptr(p.vaddr+p.filesz)+bias
	if p.flags&elfPFX != 0 {
		if img.StartCode == 0 || start < img.StartCode {
			img.StartCode = start
		}
		img.EndCode = max(img.EndCode, fileEnd)
	}
	img.StartData = max(img.StartData, start)
	img.EndData = max(img.EndData, fileEnd)
}

func loadSegment(as *mm.AddressSpace, data []byte, file *fs.Node, path string, p *elfProg, bias uintptr, mappedEnd *uintptr) error {
	if p.filesz > p.memsz || p.off+p.filesz > uint64(len(data)) || p.off+p.filesz < p.off {
		return fmt.Errorf("%w: segment at %#x exceeds the file", ErrNoExec, p.vaddr)
	}
	start := uintptr(p.vaddr) + bias
	end := start + uintptr(p.memsz)
	if end < start || start < mm.UserMin || end > mm.UserMmapTop {
		return fmt.Errorf("%w: segment %#x-%#x outside user memory", ErrNoExec, start, end)
	}
	perm := segmentPerm(p.flags)
	lo, hi := start&^(mm.PageSize-1), (end+mm.PageSize-1)&^(mm.PageSize-1)
	if file != nil && p.filesz > 0 && lo >= *mappedEnd && uintptr(p.vaddr)%mm.PageSize == uintptr(p.off)%mm.PageSize {
		*mappedEnd = hi
		return mapSegment(as, file, path, uintptr(p.off), start, start+uintptr(p.filesz), end, perm)
	}
	if lo < *mappedEnd {
		// The segment shares its first page with the previous one: that page
		// gets both segments' permissions.
		shared := *mappedEnd - mm.PageSize
		if lo < shared {
			return fmt.Errorf("%w: overlapping segments at %#x", ErrNoExec, start)
		}
		if err := as.Protect(shared, mm.PageSize, perm|vmaPermAt(as, shared)); err != nil {
			return fmt.Errorf("%w: %v", ErrNoExec, err)
		}
		lo = *mappedEnd
	}
	if hi > lo {
		if _, err := as.Map(lo, hi-lo, perm, true); err != nil {
			return err
		}
	}
	*mappedEnd = max(*mappedEnd, hi)
	return as.Populate(start, data[p.off:p.off+p.filesz])
}

// mapSegment maps a segment whose file bytes [off, off+fileEnd-start)
// belong at [start, fileEnd) and whose zeros follow up to end: the file's
// pages privately (each mapped now, so that the program does not trap for
// them), the rest of the last file page zeroed when zeros follow (a copy
// of that page), and whole pages of zeros anonymous, as Linux's ELF
// loader maps them.
func mapSegment(as *mm.AddressSpace, file *fs.Node, path string, off, start, fileEnd, end uintptr, perm uint64) error {
	lo, fileHi := start&^(mm.PageSize-1), (fileEnd+mm.PageSize-1)&^(mm.PageSize-1)
	hi := (end + mm.PageSize - 1) &^ (mm.PageSize - 1)
	fm := file.Map(func(src fs.MappedNode) fs.FileMapping { return as.NewFileMemory(src) }, false).(*mm.SharedMemory)
	if _, err := as.Mmap(lo, fileHi-lo, mm.Mapping{Perm: perm, Fixed: true, FilePrivate: fm, Offset: off &^ (mm.PageSize - 1), Path: path}); err != nil {
		fm.ReleasePrivate()
		return err
	}
	if err := as.MapFilePages(lo, fileHi); err != nil {
		return err
	}
	if hi > fileHi {
		if _, err := as.Map(fileHi, hi-fileHi, perm, true); err != nil {
			return err
		}
	}
	if end > fileEnd && fileHi > fileEnd {
		return as.Populate(fileEnd, make([]byte, fileHi-fileEnd))
	}
	return nil
}

func vmaPermAt(as *mm.AddressSpace, va uintptr) uint64 {
	for _, v := range as.VMAs() {
		if v.Start <= va && va < v.End {
			return v.Perm
		}
	}
	return 0
}

func segmentPerm(flags uint32) uint64 {
	return mm.Perm(flags&elfPFR != 0, flags&elfPFW != 0, flags&elfPFX != 0)
}
