// Package provenance owns jiege's checks of where a booted kernel comes
// from: the files its QEMU command line loads (a Linux Image header, an
// ELF or payload holding Linux's version banner, other known kernels'
// markers), the console (Linux's banner), and an attempt's git history
// (a first commit that already holds most of the code). A Linux kernel is
// a verdict (not written from scratch); every other sign is reported.
package provenance

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Sign is one observation about a kernel's origin.
type Sign struct {
	// Linux marks a sign that the booted kernel is Linux: the attempt was
	// not written from scratch.
	Linux bool
	What  string // plain words, naming the file or console line
}

func (s Sign) String() string { return s.What }

// Role says what a file on QEMU's command line is for.
type Role int

const (
	// Code is loaded and run: -kernel, -bios, a -device loader file.
	Code Role = iota
	// Data is only read by the guest: -initrd, a -drive image.
	Data
)

// File is a file QEMU loads for the guest.
type File struct {
	Path   string
	Option string // the QEMU option that names it, e.g. "-kernel"
	Role   Role
}

// BootFiles lists the files a QEMU command line (arguments without the
// binary) loads, resolving relative paths against dir (QEMU's working
// directory). "-bios default" and "-bios none" name no file.
func BootFiles(args []string, dir string) []File {
	var out []File
	add := func(opt, path string, role Role) {
		if path == "" {
			return
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		out = append(out, File{Path: path, Option: opt, Role: role})
	}
	for i := 0; i+1 < len(args); i++ {
		opt, val := args[i], args[i+1]
		switch strings.TrimPrefix(opt, "-") {
		case "-kernel", "kernel":
			add("-kernel", val, Code)
		case "-bios", "bios":
			if val != "default" && val != "none" {
				add("-bios", val, Code)
			}
		case "-initrd", "initrd":
			add("-initrd", val, Data)
		case "-device", "device":
			if strings.HasPrefix(val, "loader,") {
				add("-device loader", optionValue(val, "file"), Code)
			}
		case "-drive", "drive":
			role := Data
			if optionValue(val, "if") == "pflash" {
				role = Code
			}
			add("-drive", optionValue(val, "file"), role)
		case "-pflash", "pflash":
			add("-pflash", val, Code)
		default:
			continue
		}
		i++
	}
	return out
}

// optionValue returns key's value in a QEMU option string "a,key=v,b=w".
func optionValue(opts, key string) string {
	for _, kv := range strings.Split(opts, ",") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// imageMagic is the RISC-V Linux Image header's magic2, at imageMagicOff.
var imageMagic = []byte("RSC\x05")

const imageMagicOff = 0x38

// zbootMagic marks Linux's EFI zboot image (a PE that decompresses the
// kernel Image itself), at offset 4; the compression's name is at
// zbootTypeOff.
var zbootMagic = []byte("zimg")

const zbootTypeOff = 0x18

// linuxBanner matches Linux's version banner ("Linux version 6.12.107+deb13-riscv64 (...)").
var linuxBanner = regexp.MustCompile(`Linux version [0-9]+\.[0-9]+[^\x00\n]{0,200}`)

// otherKernels are markers that other existing kernels (and a boot loader)
// print or carry; exact phrases, since short names occur by chance in any
// large binary.
var otherKernels = []struct{ name, marker string }{
	{"FreeBSD", "The FreeBSD Project"},
	{"NetBSD", "The NetBSD Foundation"},
	{"xv6", "xv6 kernel is booting"},
	{"Zephyr", "Booting Zephyr OS"},
	{"NuttX", "NuttShell"},
	{"RT-Thread", "RT-Thread Operating System"},
	{"ArceOS", "ArceOS"},
	{"Asterinas", "Asterinas"},
	{"U-Boot", "U-Boot 20"},
}

// maxScan bounds how much of a file (or a decompressed payload) is read.
const maxScan = 512 << 20

// A file is scanned a window at a time, each window holding the last
// scanOverlap bytes of the one before: no file is held whole (jiege scans
// while the guest boots, and reading a 100 MB disk image into one growing
// buffer took a host core for a second of that boot). scanOverlap covers
// a banner's prefix with the 220 bytes findBanner looks at after it, and
// every marker.
const (
	scanWindow  = 1 << 20
	scanOverlap = 256
)

// ScanFile inspects one file QEMU loads. For Code files, a Linux Image
// header or Linux's banner is a Linux sign, and other kernels' markers are
// reported; in Data files (an initrd, a disk) a Linux header or banner is
// only reported. A gzip file is scanned decompressed.
func ScanFile(f File) ([]Sign, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	name := fmt.Sprintf("%s %s", f.Option, f.Path)
	var magic [2]byte
	if n, _ := io.ReadFull(fh, magic[:]); n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		if z, err := gzip.NewReader(fh); err == nil {
			// A payload that fails part way is scanned as far as it
			// came; one that yields nothing leaves the file's own bytes.
			if signs, n, _ := scanStream(name+" (gzip payload)", z, f.Role); n > 0 {
				return signs, nil
			}
		}
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	signs, _, err := scanStream(name, fh, f.Role)
	return signs, err
}

// scanStream looks for Linux and other kernels in the first maxScan bytes
// r yields, and returns what it found and how many bytes it read.
func scanStream(name string, r io.Reader, role Role) ([]Sign, int64, error) {
	r = io.LimitReader(r, maxScan)
	buf := make([]byte, scanOverlap+scanWindow)
	var (
		head    []Sign
		elf     bool
		banner  []byte
		markers = make([]bool, len(otherKernels))
		total   int64
		kept    int
	)
	for first := true; ; first = false {
		n, err := io.ReadFull(r, buf[kept:])
		total += int64(n)
		w := buf[:kept+n]
		last := err != nil
		if first {
			head, elf = headerSigns(name, w, role), bytes.HasPrefix(w, []byte("\x7fELF"))
		}
		// A banner starting in the overlap is looked at in the next
		// window, which holds all of its 220 bytes.
		limit := len(w)
		if !last {
			limit -= scanOverlap
		}
		if banner == nil {
			banner = bytes.Clone(findBanner(w, limit)) // buf is read into again
		}
		for i, k := range otherKernels {
			markers[i] = markers[i] || role == Code && bytes.Contains(w, []byte(k.marker))
		}
		if last {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = nil
			}
			return kernelSigns(name, head, elf, banner, markers, role), total, err
		}
		kept = copy(buf, w[len(w)-scanOverlap:])
	}
}

// headerSigns reads a Linux Image's or EFI zboot image's header at the
// start of a file. The plain Image header is a boot format, which SBI
// firmware and U-Boot load for any kernel (ours among them): alone it is
// reported, and Linux's banner in the file is what makes it Linux; the
// EFI stub and zboot wrappers are Linux's own.
func headerSigns(name string, b []byte, role Role) []Sign {
	var out []Sign
	if len(b) >= imageMagicOff+len(imageMagic) && bytes.Equal(b[imageMagicOff:imageMagicOff+len(imageMagic)], imageMagic) {
		what, efi := "a RISC-V Linux Image header (magic \"RSC\\x05\" at 0x38)", bytes.HasPrefix(b, []byte("MZ"))
		if efi {
			what = "an EFI-stub Linux Image (PE \"MZ\" with the RISC-V Linux Image header)"
		}
		out = append(out, Sign{Linux: role == Code && efi, What: fmt.Sprintf("%s is %s", name, what)})
	}
	if len(b) >= zbootTypeOff+8 && bytes.HasPrefix(b, []byte("MZ")) && bytes.Equal(b[4:8], zbootMagic) {
		comp, _, _ := bytes.Cut(b[zbootTypeOff:zbootTypeOff+8], []byte{0})
		out = append(out, Sign{Linux: role == Code, What: fmt.Sprintf("%s is an EFI zboot Linux image (\"zimg\" at 4, its payload compressed with %q)", name, comp)})
	}
	return out
}

// kernelSigns adds to a file's header signs its banner and, for Code, the
// other kernels' markers it holds.
func kernelSigns(name string, out []Sign, elf bool, banner []byte, markers []bool, role Role) []Sign {
	if banner != nil {
		kind := "holds"
		if elf {
			kind = "is an ELF that holds"
		}
		out = append(out, Sign{Linux: role == Code, What: fmt.Sprintf("%s %s Linux's banner %q", name, kind, shorten(string(banner)))})
	}
	if role != Code {
		return out // libraries in an initrd carry other systems' names
	}
	for i, k := range otherKernels {
		if markers[i] {
			out = append(out, Sign{What: fmt.Sprintf("%s holds %s's marker %q", name, k.name, k.marker)})
		}
	}
	return out
}

// findBanner returns Linux's banner starting before limit in b, or nil.
// It looks for the fixed prefix first: the regexp alone is slow over a
// 100 MB initrd.
func findBanner(b []byte, limit int) []byte {
	prefix := []byte("Linux version ")
	for off := 0; off < limit; {
		i := bytes.Index(b[off:], prefix)
		if i < 0 || off+i >= limit {
			return nil
		}
		i += off
		if m := linuxBanner.Find(b[i:min(len(b), i+len(prefix)+220)]); m != nil {
			return m
		}
		off = i + len(prefix)
	}
	return nil
}

// ScanConsole inspects console text: Linux's banner there is a Linux sign,
// other kernels' markers are reported.
func ScanConsole(text string) []Sign {
	var out []Sign
	if m := linuxBanner.FindString(text); m != "" {
		out = append(out, Sign{Linux: true, What: fmt.Sprintf("the console shows Linux's banner %q", shorten(m))})
	}
	for _, k := range otherKernels {
		if strings.Contains(text, k.marker) {
			out = append(out, Sign{What: fmt.Sprintf("the console shows %s's marker %q", k.name, k.marker)})
		}
	}
	return out
}

// LinuxBanner returns Linux's version banner if line holds it, else "".
func LinuxBanner(line string) string {
	return linuxBanner.FindString(line)
}

func shorten(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}
