// Package ownnginx owns an attempt's own nginx as its oracle: finding an
// nginx ELF with its libraries in the files the attempt's QEMU loads (an
// -initrd cpio archive, maybe gzip-compressed, a -device loader file, an
// archive embedded in the kernel image, or ELFs carved out of any of
// them, such as those a kernel carries in its sections), extracting or
// building that tree, running that nginx under qemu-riscv64 with the
// attempt's own configuration, and telling whose build the binary is.
package ownnginx

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Limits on what is read: a boot file, an archive's unpacked size, and
// how many places in a file that is not itself an archive are tried.
const (
	maxFile       = 512 << 20
	maxUnpacked   = 1 << 30
	maxEmbedTries = 32
)

// Source is one file QEMU loads.
type Source struct {
	Path   string
	Option string // e.g. "-initrd", "-kernel", "-device loader"
}

// Tree is an attempt's root filesystem as extracted from one boot file.
type Tree struct {
	Dir    string // the extracted tree, a temporary directory
	Nginx  string // the nginx ELF, relative to Dir (e.g. "usr/sbin/nginx")
	Source Source // where it came from
	// Offset is where the archive starts in the file (0 unless embedded).
	Offset int64
	// Carved says the tree was built from ELFs carved out of the boot
	// files, not extracted from an archive; conf and mimeTypes are the
	// configuration text carved with them ("" when none was found).
	Carved          bool
	conf, mimeTypes string
}

// Remove deletes the extracted tree.
func (t *Tree) Remove() error { return os.RemoveAll(t.Dir) }

// ErrNoNginx reports boot files that hold no riscv64 nginx.
var ErrNoNginx = errors.New("no riscv64 nginx ELF in the files QEMU loads")

// Find extracts the first archive among sources that holds a riscv64
// nginx ELF. The archive is the file itself (newc cpio, maybe gzip), or
// one embedded in it (a kernel image that carries its initramfs). When
// none does, it builds a tree from the ELFs carved out of the sources.
func Find(sources []Source) (*Tree, error) {
	var notes []string
	for _, src := range sources {
		t, err := findIn(src)
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, ErrNoNginx) {
			notes = append(notes, fmt.Sprintf("%s %s: %v", src.Option, src.Path, err))
		}
	}
	t, err := findCarved(sources)
	if err == nil {
		return t, nil
	}
	if !errors.Is(err, ErrNoNginx) {
		return nil, err
	}
	if len(notes) > 0 {
		return nil, fmt.Errorf("%w (%s)", ErrNoNginx, strings.Join(notes, "; "))
	}
	return nil, ErrNoNginx
}

func findIn(src Source) (*Tree, error) {
	f, err := os.Open(src.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxFile {
		return nil, fmt.Errorf("not read: larger than %d MiB", maxFile>>20)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return nil, err
	}
	// Places an archive may start: the file's start, then embedded
	// newc headers and gzip streams.
	offsets := []int{0}
	for _, magic := range [][]byte{[]byte("070701"), {0x1f, 0x8b, 0x08}} {
		for i, n := 0, 0; n < maxEmbedTries; n++ {
			j := bytes.Index(b[i:], magic)
			if j < 0 {
				break
			}
			if i+j > 0 {
				offsets = append(offsets, i+j)
			}
			i += j + len(magic)
		}
	}
	for _, off := range offsets {
		data := b[off:]
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				continue
			}
			u, err := io.ReadAll(io.LimitReader(zr, maxUnpacked))
			if err != nil && len(u) == 0 {
				continue
			}
			data = u
		}
		if !bytes.HasPrefix(data, []byte("07070")) {
			continue
		}
		dir, err := os.MkdirTemp("", "jiege-own-nginx-")
		if err != nil {
			return nil, err
		}
		if err := extractNewc(data, dir); err != nil {
			os.RemoveAll(dir)
			continue
		}
		if bin := findNginx(dir); bin != "" {
			return &Tree{Dir: dir, Nginx: bin, Source: src, Offset: int64(off)}, nil
		}
		os.RemoveAll(dir)
	}
	return nil, ErrNoNginx
}

// extractNewc unpacks newc (070701/070702) archives, one after the other
// as the kernel reads an initramfs, into dir: later entries replace
// earlier ones. Regular files, directories and symbolic links only.
func extractNewc(b []byte, dir string) error {
	links := map[string][]string{} // hard links without data yet, by inode
	off, entries := 0, 0
	for off+110 <= len(b) {
		h := b[off : off+110]
		if !bytes.HasPrefix(h, []byte("07070")) || (h[5] != '1' && h[5] != '2') {
			if entries == 0 {
				return errors.New("not a newc cpio archive")
			}
			return nil // garbage or padding after the last archive
		}
		field := func(i int) (int, error) {
			v, err := strconv.ParseUint(string(h[6+8*i:14+8*i]), 16, 32)
			return int(v), err
		}
		ino, _ := field(0)
		mode, err1 := field(1)
		nlink, _ := field(4)
		mtime, _ := field(5)
		size, err2 := field(6)
		namesize, err3 := field(11)
		if err1 != nil || err2 != nil || err3 != nil || namesize == 0 {
			return fmt.Errorf("bad cpio header at %d", off)
		}
		nameEnd := off + 110 + namesize
		dataStart := align4(nameEnd)
		dataEnd := dataStart + size
		if dataEnd > len(b) || nameEnd > len(b) {
			return fmt.Errorf("cpio entry at %d runs past the end", off)
		}
		name := string(b[off+110 : nameEnd-1])
		data := b[dataStart:dataEnd]
		off = align4(dataEnd)
		entries++
		if name == "TRAILER!!!" {
			for off < len(b) && b[off] == 0 {
				off++
			}
			continue
		}
		rel, ok := cleanName(name)
		if !ok {
			continue
		}
		key := strconv.Itoa(ino)
		switch mode & 0o170000 {
		case 0o040000:
			p, err := resolve(dir, rel, true)
			if err == nil {
				err = os.MkdirAll(p, 0o755)
			}
			if err != nil {
				return err
			}
		case 0o100000:
			if size == 0 && nlink > 1 {
				links[key] = append(links[key], rel)
			}
			for _, r := range append(links[key], rel) {
				// The guest's files keep the archive's mtimes (as Linux's
				// initramfs does): Last-Modified and ETag come from them.
				if err := writeFile(dir, r, data, mode&0o777|0o200, time.Unix(int64(mtime), 0)); err != nil {
					return err
				}
			}
			if size > 0 {
				delete(links, key)
			}
		case 0o120000:
			p, err := resolve(dir, rel, false)
			if err != nil {
				return err
			}
			os.RemoveAll(p)
			if err := os.Symlink(string(data), p); err != nil {
				return err
			}
		}
	}
	if entries == 0 {
		return errors.New("not a newc cpio archive")
	}
	return nil
}

func align4(n int) int { return (n + 3) &^ 3 }

// cleanName makes an archive name relative and refuses one that leaves
// the tree.
func cleanName(name string) (string, bool) {
	c := path.Clean("/" + name)
	if c == "/" {
		return "", false
	}
	return c[1:], true
}

func writeFile(dir, rel string, data []byte, mode int, mtime time.Time) error {
	p, err := resolve(dir, rel, false)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		os.RemoveAll(p)
	}
	if err := os.WriteFile(p, data, fs.FileMode(mode)); err != nil {
		return err
	}
	return os.Chtimes(p, mtime, mtime)
}

// resolve returns the host path of rel inside the tree dir, following
// symbolic links of the tree as the guest would, with the tree as root
// (an absolute link target is taken inside the tree, never on the host),
// and creating missing directories on the way. The last component is
// followed only when follow is set.
func resolve(dir, rel string, follow bool) (string, error) {
	parts := strings.Split(rel, "/")
	var cur []string
	for hops := 0; len(parts) > 0; {
		comp := parts[0]
		parts = parts[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(cur) > 0 {
				cur = cur[:len(cur)-1]
			}
			continue
		}
		p := filepath.Join(dir, filepath.Join(cur...), comp)
		if len(parts) == 0 && !follow {
			cur = append(cur, comp)
			break
		}
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			if hops++; hops > 40 {
				return "", fmt.Errorf("%s: too many symbolic links", rel)
			}
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(target, "/") {
				cur = nil
			}
			parts = append(strings.Split(target, "/"), parts...)
		case err == nil:
			cur = append(cur, comp)
		case errors.Is(err, fs.ErrNotExist) && len(parts) > 0:
			if err := os.Mkdir(p, 0o755); err != nil {
				return "", err
			}
			cur = append(cur, comp)
		case errors.Is(err, fs.ErrNotExist):
			cur = append(cur, comp)
		default:
			return "", err
		}
	}
	return filepath.Join(dir, filepath.Join(cur...)), nil
}

// Usual places of nginx, searched before the rest of the tree.
var nginxPaths = []string{"usr/sbin/nginx", "sbin/nginx", "usr/local/sbin/nginx", "usr/local/nginx/sbin/nginx", "usr/bin/nginx", "bin/nginx"}

// findNginx returns the tree-relative path of a riscv64 ELF named nginx.
func findNginx(dir string) string {
	for _, rel := range nginxPaths {
		if p, err := resolve(dir, rel, true); err == nil && isRISCVELF(p) {
			r, _ := filepath.Rel(dir, p)
			return r
		}
	}
	var found string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return nil
		}
		if d.Type().IsRegular() && d.Name() == "nginx" && isRISCVELF(p) {
			found, _ = filepath.Rel(dir, p)
		}
		return nil
	})
	return found
}

func isRISCVELF(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := elf.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Machine == elf.EM_RISCV && f.Class == elf.ELFCLASS64
}
