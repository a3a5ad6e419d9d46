package rootfs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/u-root/u-root/pkg/cpio"
)

// override is a file that replaces or joins the tree in the archive.
type override struct {
	data []byte
	mode uint32 // permission bits
}

// packer writes newc records with root ownership, a fixed mtime and
// sequential inode numbers, so equal inputs give byte-identical archives.
type packer struct {
	w   cpio.RecordWriter
	ino uint64
	dir map[string]bool // directories written so far
}

func newPacker(w io.Writer, firstIno uint64) *packer {
	return &packer{w: cpio.Newc.Writer(w), ino: firstIno, dir: map[string]bool{}}
}

func (p *packer) write(r cpio.Record) error {
	r.Ino = p.ino
	p.ino++
	r.UID, r.GID = 0, 0
	r.MTime = fixedMTime
	r.NLink = 1
	if r.Mode&cpio.S_IFMT == cpio.S_IFDIR {
		r.NLink = 2
		p.dir[r.Name] = true
	}
	return p.w.WriteRecord(r)
}

func (p *packer) file(name string, data []byte, mode uint32) error {
	return p.write(cpio.StaticRecord(data, cpio.Info{Name: name, Mode: cpio.S_IFREG | uint64(mode&0o7777)}))
}

// parents writes any missing parent directories of name.
func (p *packer) parents(name string) error {
	dir := path.Dir(name)
	if dir == "." || p.dir[dir] {
		return nil
	}
	if err := p.parents(dir); err != nil {
		return err
	}
	return p.write(cpio.Directory(dir, 0o755))
}

// packTree writes tree (and the overrides) as a newc archive at dst. With
// console set, it adds /dev/console, which Linux opens for /init before any
// devtmpfs exists.
func packTree(dst, tree string, overrides map[string]override, console bool) error {
	tmp := dst + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	bw := bufio.NewWriterSize(f, 1<<20)
	p := newPacker(bw, 1)
	done := map[string]bool{}
	err = filepath.WalkDir(tree, func(full string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(tree, full)
		if err != nil || rel == "." {
			return err
		}
		name := filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no stat", full)
		}
		mode := uint64(st.Mode)
		if ov, ok := overrides[name]; ok && d.Type().IsRegular() {
			done[name] = true
			return p.file(name, ov.data, ov.mode)
		}
		switch {
		case d.IsDir():
			return p.write(cpio.Directory(name, mode&0o7777))
		case d.Type().IsRegular():
			fh, err := os.Open(full)
			if err != nil {
				return err
			}
			// The writer closes fh after copying it.
			return p.write(cpio.Record{ReaderAt: fh, Info: cpio.Info{Name: name, Mode: mode, FileSize: uint64(info.Size())}})
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return err
			}
			return p.write(cpio.Symlink(name, target))
		default:
			return fmt.Errorf("%s: unsupported file type %v", full, d.Type())
		}
	})
	if err != nil {
		f.Close()
		return err
	}
	var rest []string
	for name := range overrides {
		if !done[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	for _, name := range rest {
		if err := p.parents(name); err != nil {
			f.Close()
			return err
		}
		if err := p.file(name, overrides[name].data, overrides[name].mode); err != nil {
			f.Close()
			return err
		}
	}
	if console {
		if err := p.write(cpio.CharDev("dev/console", 0o600, 5, 1)); err != nil {
			f.Close()
			return err
		}
	}
	if err := finish(p, bw, f); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func finish(p *packer, bw *bufio.Writer, f *os.File) error {
	err := cpio.WriteTrailer(p.w)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// nonceIno starts the nonce archive's inode numbers far above the base
// archive's, so the two never share one.
const nonceIno = 1 << 30

// appendNonce writes base followed by a small second archive holding the
// nonce file, and zeros up to a whole 512-byte sector: Linux unpacks
// concatenated newc archives in order and skips zero padding, and a
// virtio disk made of the file (our kernel's root disk) drops a partial
// last sector.
func appendNonce(dst, base string, n File) error {
	if err := copyFile(dst, base); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	p := newPacker(bw, nonceIno)
	name := strings.TrimPrefix(WebRoot+n.URLPath, "/")
	if err := p.file(name, n.Content, 0o644); err != nil {
		f.Close()
		return err
	}
	if err := finish(p, bw, f); err != nil {
		return err
	}
	st, err := os.Stat(dst)
	if err != nil {
		return err
	}
	return os.Truncate(dst, (st.Size()+sectorSize-1)/sectorSize*sectorSize)
}

// sectorSize is a disk's unit.
const sectorSize = 512
