package kernel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// ErrNoExec reports a file that is not a RISC-V 64-bit ELF the kernel can
// run; execve returns ENOEXEC for it.
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
}

// LoadELF maps the PT_LOAD segments of an ELF executable or shared object
// into as. An ET_DYN file is placed at bias; an ET_EXEC file at its own
// addresses. data is the file's contents; file, when not nil, is the file
// itself, whose pages each segment then maps privately as Linux does
// (mapSegment): programs share their code and copy a page when they write
// it. Otherwise, and for a segment laid out so that its pages cannot be
// the file's, the contents are copied in. The rest of each segment reads
// as zeros. Malformed files return an error wrapping ErrNoExec.
func LoadELF(as *mm.AddressSpace, data []byte, bias uintptr, file *fs.Node) (*Image, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoExec, err)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || f.Machine != elf.EM_RISCV {
		return nil, fmt.Errorf("%w: %v %v %v, want RISC-V 64-bit little-endian", ErrNoExec, f.Class, f.Data, f.Machine)
	}
	switch f.Type {
	case elf.ET_EXEC:
		bias = 0
	case elf.ET_DYN:
	default:
		return nil, fmt.Errorf("%w: ELF type %v", ErrNoExec, f.Type)
	}
	img := &Image{Entry: uintptr(f.Entry) + bias, Bias: bias, Phent: 56, Phnum: len(f.Progs)}
	phoff := uint64(0)
	if len(data) >= 64 {
		phoff = binary.LittleEndian.Uint64(data[32:40]) // e_phoff
	}
	var mappedEnd uintptr
	loads := 0
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			if p.Off+p.Filesz > uint64(len(data)) || p.Filesz == 0 {
				return nil, fmt.Errorf("%w: PT_INTERP out of the file", ErrNoExec)
			}
			img.Interp = string(bytes.TrimRight(data[p.Off:p.Off+p.Filesz], "\x00"))
		case elf.PT_LOAD:
			if err := loadSegment(as, data, file, p, bias, &mappedEnd); err != nil {
				return nil, err
			}
			if phoff >= p.Off && phoff < p.Off+p.Filesz {
				img.Phdr = uintptr(p.Vaddr+phoff-p.Off) + bias
			}
			img.End = max(img.End, uintptr(p.Vaddr+p.Memsz)+bias)
			loads++
		}
	}
	if loads == 0 {
		return nil, fmt.Errorf("%w: no loadable segment", ErrNoExec)
	}
	return img, nil
}

func loadSegment(as *mm.AddressSpace, data []byte, file *fs.Node, p *elf.Prog, bias uintptr, mappedEnd *uintptr) error {
	if p.Filesz > p.Memsz || p.Off+p.Filesz > uint64(len(data)) || p.Off+p.Filesz < p.Off {
		return fmt.Errorf("%w: segment at %#x exceeds the file", ErrNoExec, p.Vaddr)
	}
	start := uintptr(p.Vaddr) + bias
	end := start + uintptr(p.Memsz)
	if end < start || start < mm.UserMin || end > mm.UserMmapTop {
		return fmt.Errorf("%w: segment %#x-%#x outside user memory", ErrNoExec, start, end)
	}
	perm := segmentPerm(p.Flags)
	lo, hi := start&^(mm.PageSize-1), (end+mm.PageSize-1)&^(mm.PageSize-1)
	if file != nil && p.Filesz > 0 && lo >= *mappedEnd && uintptr(p.Vaddr)%mm.PageSize == uintptr(p.Off)%mm.PageSize {
		*mappedEnd = hi
		return mapSegment(as, file, uintptr(p.Off), start, start+uintptr(p.Filesz), end, perm)
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
	return as.Populate(start, data[p.Off:p.Off+p.Filesz])
}

// mapSegment maps a segment whose file bytes [off, off+fileEnd-start)
// belong at [start, fileEnd) and whose zeros follow up to end: the file's
// pages privately (each mapped now, so that the program does not trap for
// them), the rest of the last file page zeroed when zeros follow (a copy
// of that page), and whole pages of zeros anonymous, as Linux's ELF
// loader maps them.
func mapSegment(as *mm.AddressSpace, file *fs.Node, off, start, fileEnd, end uintptr, perm uint64) error {
	lo, fileHi := start&^(mm.PageSize-1), (fileEnd+mm.PageSize-1)&^(mm.PageSize-1)
	hi := (end + mm.PageSize - 1) &^ (mm.PageSize - 1)
	fm := file.Map(func(src fs.MappedNode) fs.FileMapping { return as.NewFileMemory(src) }, false).(*mm.SharedMemory)
	if _, err := as.Mmap(lo, fileHi-lo, mm.Mapping{Perm: perm, Fixed: true, FilePrivate: fm, Offset: off &^ (mm.PageSize - 1)}); err != nil {
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

func segmentPerm(f elf.ProgFlag) uint64 {
	return mm.Perm(f&elf.PF_R != 0, f&elf.PF_W != 0, f&elf.PF_X != 0)
}
