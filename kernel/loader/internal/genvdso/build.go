package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/kernel/rvasm"
	"github.com/jiege-go/jiege/mm"
)

// vdsoTextOffset is where the code starts in the image; the ELF headers,
// the dynamic symbol table and its versions come before it.
const vdsoTextOffset = 0x400

// vdsoVersion is the version of every symbol, Linux riscv64's.
const vdsoVersion = "LINUX_4.15"

// vdsoSoname is the DT_SONAME of Linux's vDSO.
const vdsoSoname = "linux-vdso.so.1"

// riscvFlags is the image's e_flags: EF_RISCV_RVC | EF_RISCV_FLOAT_ABI_DOUBLE.
const riscvFlags = 0x5

// vdsoImage is the built image and the offsets of its functions.
type vdsoImage struct {
	image   []byte
	symbols map[string]uintptr
}

// vdsoCode assembles the functions; the code starts at vdsoTextOffset.
func vdsoCode() ([]byte, map[string]uintptr) {
	var a rvasm.Asm
	funcs := map[string]uintptr{}
	fn := func(name string) {
		a.Label(name)
		funcs[name] = uintptr(vdsoTextOffset + a.PC())
	}
	// vvar puts the data page's address in t6, pc-relative.
	vvar := func() {
		off := int32(-arch.VvarSize - (vdsoTextOffset + a.PC()))
		hi := (off + 0x800) >> 12
		a.Emit(rvasm.AUIPC(rvasm.T6, uint32(hi)&0xfffff), rvasm.ADDI(rvasm.T6, rvasm.T6, off-hi<<12))
	}
	ret := rvasm.JALR(rvasm.Zero, rvasm.RA, 0)
	syscall := func(nr int32) { a.Emit(rvasm.ADDI(rvasm.A7, rvasm.Zero, nr), rvasm.ECALL(), ret) }
	const billion = 1_000_000_000

	fn("__vdso_rt_sigreturn")
	a.Emit(rvasm.ADDI(rvasm.A7, rvasm.Zero, 139), rvasm.ECALL())

	// clock_gettime(a0 = clock, a1 = timespec)
	fn("__vdso_clock_gettime")
	vvar()
	a.Emit(rvasm.ADDI(rvasm.T2, rvasm.Zero, arch.VvarRealtime))
	a.Beq(rvasm.A0, rvasm.Zero, "gettime.read") // CLOCK_REALTIME
	a.Emit(rvasm.ADDI(rvasm.T0, rvasm.Zero, 5)) // CLOCK_REALTIME_COARSE
	a.Beq(rvasm.A0, rvasm.T0, "gettime.read")
	a.Emit(rvasm.ADDI(rvasm.T2, rvasm.Zero, arch.VvarMonotonic))
	for _, clock := range []int32{1, 4, 6} { // MONOTONIC, _RAW, _COARSE
		a.Emit(rvasm.ADDI(rvasm.T0, rvasm.Zero, clock))
		a.Beq(rvasm.A0, rvasm.T0, "gettime.read")
	}
	a.Emit(rvasm.ADDI(rvasm.T2, rvasm.Zero, arch.VvarBoottime))
	a.Emit(rvasm.ADDI(rvasm.T0, rvasm.Zero, 7)) // CLOCK_BOOTTIME
	a.Beq(rvasm.A0, rvasm.T0, "gettime.read")
	syscall(113) // other clocks: the system call answers
	a.Label("gettime.read")
	a.Jal(rvasm.A6, "clockns")
	a.Emit(rvasm.DIVU(rvasm.A3, rvasm.A2, rvasm.A4), rvasm.REMU(rvasm.A5, rvasm.A2, rvasm.A4),
		rvasm.SD(rvasm.A3, rvasm.A1, 0), rvasm.SD(rvasm.A5, rvasm.A1, 8), rvasm.ADDI(rvasm.A0, rvasm.Zero, 0), ret)

	// gettimeofday(a0 = timeval, a1 = timezone)
	fn("__vdso_gettimeofday")
	vvar()
	a.Beq(rvasm.A0, rvasm.Zero, "gettimeofday.tz")
	a.Emit(rvasm.ADDI(rvasm.T2, rvasm.Zero, arch.VvarRealtime))
	a.Jal(rvasm.A6, "clockns")
	a.Emit(rvasm.DIVU(rvasm.A3, rvasm.A2, rvasm.A4), rvasm.REMU(rvasm.A5, rvasm.A2, rvasm.A4),
		rvasm.ADDI(rvasm.T0, rvasm.Zero, 1000), rvasm.DIVU(rvasm.A5, rvasm.A5, rvasm.T0),
		rvasm.SD(rvasm.A3, rvasm.A0, 0), rvasm.SD(rvasm.A5, rvasm.A0, 8))
	a.Label("gettimeofday.tz")
	a.Beq(rvasm.A1, rvasm.Zero, "gettimeofday.done")
	a.Emit(rvasm.SD(rvasm.Zero, rvasm.A1, 0)) // UTC, no DST
	a.Label("gettimeofday.done")
	a.Emit(rvasm.ADDI(rvasm.A0, rvasm.Zero, 0), ret)

	// time(a0 = time_t *)
	fn("__vdso_time")
	vvar()
	a.Emit(rvasm.ADDI(rvasm.T2, rvasm.Zero, arch.VvarRealtime))
	a.Jal(rvasm.A6, "clockns")
	a.Emit(rvasm.DIVU(rvasm.A3, rvasm.A2, rvasm.A4))
	a.Beq(rvasm.A0, rvasm.Zero, "time.ret")
	a.Emit(rvasm.SD(rvasm.A3, rvasm.A0, 0))
	a.Label("time.ret")
	a.Emit(rvasm.ADDI(rvasm.A0, rvasm.A3, 0), ret)

	// clock_getres(a0 = clock, a1 = timespec): the system call answers.
	fn("__vdso_clock_getres")
	syscall(114)

	// clockns: a2 = the clock whose offset is at t2 in the data page (t6),
	// in ns; a4 = 1e9. Returns to a6; uses t0-t5, a3.
	a.Label("clockns")
	a.Emit(rvasm.ADD(rvasm.T2, rvasm.T6, rvasm.T2))
	a.Label("clockns.retry")
	a.Emit(rvasm.LD(rvasm.T3, rvasm.T6, arch.VvarSeq), rvasm.ANDI(rvasm.T4, rvasm.T3, 1))
	a.Bne(rvasm.T4, rvasm.Zero, "clockns.retry")
	a.Emit(rvasm.FenceRR(), rvasm.RDTIME(rvasm.T0), rvasm.LD(rvasm.T1, rvasm.T6, arch.VvarTimebase), rvasm.LD(rvasm.T4, rvasm.T2, 0),
		rvasm.FenceRR(), rvasm.LD(rvasm.T5, rvasm.T6, arch.VvarSeq))
	a.Bne(rvasm.T5, rvasm.T3, "clockns.retry")
	// ns = ticks/f*1e9 + ticks%f*1e9/f + offset, as the kernel converts.
	hi := int32((billion + 0x800) >> 12)
	a.Emit(rvasm.DIVU(rvasm.A2, rvasm.T0, rvasm.T1), rvasm.REMU(rvasm.A3, rvasm.T0, rvasm.T1),
		rvasm.LUI(rvasm.A4, uint32(hi)), rvasm.ADDI(rvasm.A4, rvasm.A4, billion-hi<<12),
		rvasm.MUL(rvasm.A2, rvasm.A2, rvasm.A4), rvasm.MUL(rvasm.A3, rvasm.A3, rvasm.A4), rvasm.DIVU(rvasm.A3, rvasm.A3, rvasm.T1),
		rvasm.ADD(rvasm.A2, rvasm.A2, rvasm.A3), rvasm.ADD(rvasm.A2, rvasm.A2, rvasm.T4),
		rvasm.JALR(rvasm.Zero, rvasm.A6, 0))
	return a.Bytes(), funcs
}

// Section indices of the image.
const (
	vdsoSecHash = 1 + iota
	vdsoSecDynsym
	vdsoSecDynstr
	vdsoSecVersym
	vdsoSecVerdef
	vdsoSecDynamic
	vdsoSecText
	vdsoSecShstrtab
	vdsoSections
)

// elfHash is the System V ABI's symbol hash (DT_HASH, vd_hash).
func elfHash(name string) uint32 {
	var h uint32
	for i := 0; i < len(name); i++ {
		h = h<<4 + uint32(name[i])
		if g := h & 0xf000_0000; g != 0 {
			h ^= g >> 24
		}
		h &^= 0xf000_0000
	}
	return h
}

// buildVDSO lays out the image: ELF header, two program headers (PT_LOAD
// of everything, PT_DYNAMIC), DT_HASH, the dynamic symbols, their strings,
// versions (index 1 the object itself, 2 LINUX_4.15 for every function),
// the dynamic section, the code, and section headers for tools.
func buildVDSO() vdsoImage {
	code, funcs := vdsoCode()
	names := []string{"__vdso_rt_sigreturn", "__vdso_gettimeofday", "__vdso_clock_gettime", "__vdso_clock_getres", "__vdso_time"}

	var strtab bytes.Buffer
	str := func(s string) uint32 {
		off := uint32(strtab.Len())
		strtab.WriteString(s)
		strtab.WriteByte(0)
		return off
	}
	str("")
	sonameOff, versionOff := str(vdsoSoname), str(vdsoVersion)
	nameOff := make([]uint32, len(names))
	for i, n := range names {
		nameOff[i] = str(n)
	}

	le := binary.LittleEndian
	img := make([]byte, arch.VDSOMaxSize)
	at := uintptr(64 + 2*56)
	align := func(n uintptr) { at = (at + n - 1) &^ (n - 1) }
	nsyms := uint32(len(names) + 1)

	// DT_HASH: one bucket chaining every symbol.
	hashOff := at
	le.PutUint32(img[at:], 1)
	le.PutUint32(img[at+4:], nsyms)
	le.PutUint32(img[at+8:], nsyms-1)
	for i := uint32(2); i < nsyms; i++ {
		le.PutUint32(img[at+12+4*uintptr(i):], i-1)
	}
	at += uintptr(12 + 4*nsyms)

	align(8)
	symOff := at
	for i, n := range names {
		s := img[at+24*uintptr(i+1):]
		le.PutUint32(s, nameOff[i])
		s[4] = elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC)
		le.PutUint16(s[6:], vdsoSecText)
		le.PutUint64(s[8:], uint64(funcs[n]))
	}
	at += 24 * uintptr(nsyms)

	strOff := at
	copy(img[at:], strtab.Bytes())
	at += uintptr(strtab.Len())

	align(2)
	versymOff := at
	for i := uintptr(1); i < uintptr(nsyms); i++ {
		le.PutUint16(img[at+2*i:], 2)
	}
	at += 2 * uintptr(nsyms)

	// Two Elf64_Verdef of 20 bytes, each followed by its Elf64_Verdaux.
	align(4)
	verdefOff := at
	for i, name := range []uint32{sonameOff, versionOff} {
		d := img[at+28*uintptr(i):]
		le.PutUint16(d, 1) // vd_version
		if i == 0 {
			le.PutUint16(d[2:], uint16(elf.VER_FLG_BASE))
		}
		le.PutUint16(d[4:], uint16(i+1))
		le.PutUint16(d[6:], 1)
		le.PutUint32(d[8:], elfHash([]string{vdsoSoname, vdsoVersion}[i]))
		le.PutUint32(d[12:], 20)
		if i == 0 {
			le.PutUint32(d[16:], 28)
		}
		le.PutUint32(d[20:], name)
	}
	at += 2 * 28

	align(8)
	dynOff := at
	for _, d := range [][2]uint64{
		{uint64(elf.DT_HASH), uint64(hashOff)}, {uint64(elf.DT_STRTAB), uint64(strOff)}, {uint64(elf.DT_SYMTAB), uint64(symOff)},
		{uint64(elf.DT_STRSZ), uint64(strtab.Len())}, {uint64(elf.DT_SYMENT), 24}, {uint64(elf.DT_SONAME), uint64(sonameOff)},
		{uint64(elf.DT_VERSYM), uint64(versymOff)}, {uint64(elf.DT_VERDEF), uint64(verdefOff)}, {uint64(elf.DT_VERDEFNUM), 2},
		{uint64(elf.DT_NULL), 0},
	} {
		le.PutUint64(img[at:], d[0])
		le.PutUint64(img[at+8:], d[1])
		at += 16
	}
	dynSize := at - dynOff
	if at > vdsoTextOffset {
		panic("vdso: tables overlap the code")
	}
	at = vdsoTextOffset
	copy(img[at:], code)
	at += uintptr(len(code))

	var shstr bytes.Buffer
	shname := func(s string) uint32 {
		off := uint32(shstr.Len())
		shstr.WriteString(s)
		shstr.WriteByte(0)
		return off
	}
	shname("")
	shstrOff := at
	type section struct {
		name           string
		typ            uint32
		flags          uint64
		off, size      uintptr
		link, info     uint32
		align, entsize uint64
		nameOff        uint32
	}
	secs := [vdsoSections]section{
		vdsoSecHash:     {name: ".hash", typ: uint32(elf.SHT_HASH), flags: uint64(elf.SHF_ALLOC), off: hashOff, size: uintptr(12 + 4*nsyms), link: vdsoSecDynsym, align: 8, entsize: 4},
		vdsoSecDynsym:   {name: ".dynsym", typ: uint32(elf.SHT_DYNSYM), flags: uint64(elf.SHF_ALLOC), off: symOff, size: 24 * uintptr(nsyms), link: vdsoSecDynstr, info: 1, align: 8, entsize: 24},
		vdsoSecDynstr:   {name: ".dynstr", typ: uint32(elf.SHT_STRTAB), flags: uint64(elf.SHF_ALLOC), off: strOff, size: uintptr(strtab.Len()), align: 1},
		vdsoSecVersym:   {name: ".gnu.version", typ: uint32(elf.SHT_GNU_VERSYM), flags: uint64(elf.SHF_ALLOC), off: versymOff, size: 2 * uintptr(nsyms), link: vdsoSecDynsym, align: 2, entsize: 2},
		vdsoSecVerdef:   {name: ".gnu.version_d", typ: uint32(elf.SHT_GNU_VERDEF), flags: uint64(elf.SHF_ALLOC), off: verdefOff, size: 56, link: vdsoSecDynstr, info: 2, align: 4},
		vdsoSecDynamic:  {name: ".dynamic", typ: uint32(elf.SHT_DYNAMIC), flags: uint64(elf.SHF_ALLOC), off: dynOff, size: dynSize, link: vdsoSecDynstr, align: 8, entsize: 16},
		vdsoSecText:     {name: ".text", typ: uint32(elf.SHT_PROGBITS), flags: uint64(elf.SHF_ALLOC | elf.SHF_EXECINSTR), off: vdsoTextOffset, size: uintptr(len(code)), align: 4},
		vdsoSecShstrtab: {name: ".shstrtab", typ: uint32(elf.SHT_STRTAB), align: 1},
	}
	for i := 1; i < vdsoSections; i++ {
		secs[i].nameOff = shname(secs[i].name)
	}
	secs[vdsoSecShstrtab].off, secs[vdsoSecShstrtab].size = shstrOff, uintptr(shstr.Len())
	copy(img[at:], shstr.Bytes())
	at += uintptr(shstr.Len())
	align(8)
	shOff := at
	for i, s := range secs {
		h := img[at+64*uintptr(i):]
		le.PutUint32(h, s.nameOff)
		le.PutUint32(h[4:], s.typ)
		le.PutUint64(h[8:], s.flags)
		if s.flags&uint64(elf.SHF_ALLOC) != 0 {
			le.PutUint64(h[16:], uint64(s.off)) // sh_addr: the image is linked at 0
		}
		le.PutUint64(h[24:], uint64(s.off))
		le.PutUint64(h[32:], uint64(s.size))
		le.PutUint32(h[40:], s.link)
		le.PutUint32(h[44:], s.info)
		le.PutUint64(h[48:], s.align)
		le.PutUint64(h[56:], s.entsize)
	}
	at += 64 * vdsoSections
	if at > arch.VDSOMaxSize {
		panic("vdso: image larger than a page")
	}
	img = img[:at]

	// ELF header.
	copy(img, "\x7fELF\x02\x01\x01")
	le.PutUint16(img[16:], 3) // ET_DYN
	le.PutUint16(img[18:], uint16(elf.EM_RISCV))
	le.PutUint32(img[20:], 1)
	le.PutUint64(img[32:], 64) // e_phoff
	le.PutUint64(img[40:], uint64(shOff))
	le.PutUint32(img[48:], riscvFlags)
	le.PutUint16(img[52:], 64)
	le.PutUint16(img[54:], 56)
	le.PutUint16(img[56:], 2)
	le.PutUint16(img[58:], 64)
	le.PutUint16(img[60:], vdsoSections)
	le.PutUint16(img[62:], vdsoSecShstrtab)
	// Program headers.
	for i, p := range []struct {
		typ, flags       uint32
		off, size, align uint64
	}{
		{uint32(elf.PT_LOAD), uint32(elf.PF_R | elf.PF_X), 0, uint64(at), mm.PageSize},
		{uint32(elf.PT_DYNAMIC), uint32(elf.PF_R), uint64(dynOff), uint64(dynSize), 8},
	} {
		h := img[64+56*i:]
		le.PutUint32(h, p.typ)
		le.PutUint32(h[4:], p.flags)
		le.PutUint64(h[8:], p.off)
		le.PutUint64(h[16:], p.off)
		le.PutUint64(h[24:], p.off)
		le.PutUint64(h[32:], p.size)
		le.PutUint64(h[40:], p.size)
		le.PutUint64(h[48:], p.align)
	}
	return vdsoImage{image: img, symbols: funcs}
}
