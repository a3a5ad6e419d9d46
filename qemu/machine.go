package qemu

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultBinary is the system emulator every machine runs under.
const DefaultBinary = "qemu-system-riscv64"

// Machine describes one virt guest: what it boots and how it is reached.
type Machine struct {
	QEMU      string // emulator binary; DefaultBinary when empty
	Kernel    string // -kernel: an ELF (with a trampoline BIOS) or a Linux Image
	BIOS      string // -bios: a trampoline blob, "default" (OpenSBI) or "none"
	Initrd    string // -initrd, optional
	Disk      string // a file attached read-only as a virtio block device, optional
	Append    string // -append, optional
	Mem       string // -m, default "512M"
	SMP       int    // -smp, default 1
	HostPort  int    // 127.0.0.1 port forwarded to the guest; 0 picks a free one
	GuestPort int    // guest TCP port, default 80
	LogPath   string // console (serial, stdout and stderr of QEMU) log file
	ExtraArgs []string
}

// MemBytes parses a -m size as QEMU does: a number of MiB, or a number
// with a K, M, G or T suffix, optionally as "size=N" followed by other
// ",key=value" options.
func MemBytes(mem string) (int64, error) {
	v, _, _ := strings.Cut(strings.TrimPrefix(mem, "size="), ",")
	unit := int64(1 << 20)
	if k := len(v); k > 0 {
		if shift := strings.IndexByte("KMGT", v[k-1]&^0x20); shift >= 0 {
			unit, v = 1<<(10*(shift+1)), v[:k-1]
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n <= 0 || n*float64(unit) > 1<<50 {
		return 0, fmt.Errorf("-m %q: want a size such as 512M or 2G", mem)
	}
	return int64(n * float64(unit)), nil
}

// netdevID names the user-mode network backend of every machine.
const netdevID = "n0"

// Args returns QEMU's arguments (without the binary) for m with the host
// port already chosen.
func (m Machine) Args() []string {
	mem := m.Mem
	if mem == "" {
		mem = "512M"
	}
	smp := m.SMP
	if smp <= 0 {
		smp = 1
	}
	bios := m.BIOS
	if bios == "" {
		bios = "default"
	}
	args := []string{
		"-machine", "virt", "-nographic", "-no-reboot",
		"-m", mem, "-smp", strconv.Itoa(smp),
		"-bios", bios,
	}
	if m.Kernel != "" {
		args = append(args, "-kernel", m.Kernel)
	}
	if m.Initrd != "" {
		args = append(args, "-initrd", m.Initrd)
	}
	if m.Append != "" {
		args = append(args, "-append", m.Append)
	}
	if m.Disk != "" {
		args = append(args, "-drive", diskOption(m.Disk), "-device", "virtio-blk-device,drive=disk0")
	}
	// Modern (version 2) virtio-mmio: our kernel drives no legacy devices,
	// and Linux drives both, so every kernel meets the same machine.
	args = append(args,
		"-global", "virtio-mmio.force-legacy=false",
		"-netdev", "user,id="+netdevID+","+HostFwd(m.HostPort, m.guestPort()),
		"-device", "virtio-net-device,netdev="+netdevID,
		"-device", "virtio-rng-device",
	)
	return append(args, m.ExtraArgs...)
}

// diskOption is the -drive option of a read-only raw disk. QEMU's default
// AIO hands each request to a pool thread that it must wake; on a busy
// 2-core host the 238 requests of nginx's start from its root disk waited
// 240-370 ms in all with it, 45-60 ms with io_uring, which the disk uses
// when the host allows it.
func diskOption(path string) string {
	opt := "file=" + strings.ReplaceAll(path, ",", ",,") + ",format=raw,if=none,id=disk0,readonly=on"
	if ioURingWorks() {
		opt += ",aio=io_uring"
	}
	return opt
}

// ioURingWorks reports whether this host lets a process use io_uring (a
// kernel may disable it, a sandbox filter it out).
var ioURingWorks = sync.OnceValue(func() bool {
	var params [120]byte // struct io_uring_params, zeroed
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	if errno != 0 {
		return false
	}
	unix.Close(int(fd))
	return true
})

func (m Machine) guestPort() int {
	if m.GuestPort == 0 {
		return 80
	}
	return m.GuestPort
}

// HostFwd is the user-networking option that forwards 127.0.0.1:host to the
// guest's TCP port.
func HostFwd(host, guest int) string {
	return fmt.Sprintf("hostfwd=tcp:127.0.0.1:%d-:%d", host, guest)
}

// KernelKind says how a kernel file boots.
type KernelKind int

const (
	KindUnknown KernelKind = iota
	KindELF                // RISC-V ELF: -bios <trampoline to its entry> -kernel <elf>
	KindImage              // Linux RISC-V Image: -bios default (OpenSBI) -kernel <Image>
)

func (k KernelKind) String() string {
	switch k {
	case KindELF:
		return "ELF"
	case KindImage:
		return "Linux Image"
	}
	return "unknown"
}

// imageMagic is the RISC-V Linux Image header's magic2 field, at offset 0x38.
var imageMagic = []byte("RSC\x05")

// ErrNotKernel reports a file that is neither a RISC-V ELF nor a Linux Image.
var ErrNotKernel = errors.New("not a RISC-V ELF or Linux Image")

// Kind inspects a kernel file's header.
func Kind(path string) (KernelKind, error) {
	f, err := os.Open(path)
	if err != nil {
		return KindUnknown, err
	}
	defer f.Close()
	hdr := make([]byte, 0x40)
	n, _ := f.ReadAt(hdr, 0)
	hdr = hdr[:n]
	if bytes.HasPrefix(hdr, []byte(elf.ELFMAG)) {
		ef, err := elf.NewFile(f)
		if err != nil {
			return KindUnknown, fmt.Errorf("%s: %w", path, err)
		}
		if ef.Machine != elf.EM_RISCV || ef.Class != elf.ELFCLASS64 {
			return KindUnknown, fmt.Errorf("%s: ELF for %v %v, want 64-bit RISC-V", path, ef.Class, ef.Machine)
		}
		return KindELF, nil
	}
	if len(hdr) >= 0x3c && bytes.Equal(hdr[0x38:0x3c], imageMagic) {
		return KindImage, nil
	}
	return KindUnknown, fmt.Errorf("%s: %w", path, ErrNotKernel)
}
