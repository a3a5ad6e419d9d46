package ltp

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/u-root/u-root/pkg/cpio"
)

// InitPath is where the guest's init lies in the image.
const InitPath = "/ltp-init"

// Image writes dst: the root filesystem archive base (the ours flavour's
// tree, Debian's glibc) followed by a second newc archive with opt (as
// /opt/ltp), init at InitPath, list at /opt/ltp/jiege-list and extra
// files (path -> content; ELF files and scripts executable). Both kernels unpack the archives in order.
func Image(dst, base, opt string, init []byte, list string, extra map[string][]byte) error {
	tmp := dst + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	bw := bufio.NewWriterSize(f, 1<<20)
	b, err := os.Open(base)
	if err != nil {
		f.Close()
		return err
	}
	_, err = io.Copy(bw, b)
	b.Close()
	if err != nil {
		f.Close()
		return err
	}
	w := &archive{w: cpio.Newc.Writer(bw), ino: 1 << 24, dirs: map[string]bool{}}
	err = filepath.WalkDir(opt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(opt, p)
		name := path.Join("opt/ltp", filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return w.dir(name)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return w.write(cpio.Symlink(name, target))
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return w.file(name, data, uint32(info.Mode().Perm()))
		}
		return nil
	})
	if err == nil {
		err = w.file("opt/ltp/jiege-list", []byte(list), 0o644)
	}
	if err == nil {
		err = w.file(InitPath[1:], init, 0o755)
	}
	for name, data := range extra {
		perm := uint32(0o644)
		if bytes.HasPrefix(data, []byte("\x7fELF")) || bytes.HasPrefix(data, []byte("#!")) {
			perm = 0o755
		}
		if err == nil {
			err = w.file(name, data, perm)
		}
	}
	if err == nil {
		err = cpio.WriteTrailer(w.w)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// archive writes root-owned records with inode numbers of their own
// (above the base archive's) and each directory once.
type archive struct {
	w    cpio.RecordWriter
	ino  uint64
	dirs map[string]bool
}

func (a *archive) write(r cpio.Record) error {
	r.Ino = a.ino
	a.ino++
	r.UID, r.GID, r.NLink = 0, 0, 1
	return a.w.WriteRecord(r)
}

func (a *archive) dir(name string) error {
	if name == "." || a.dirs[name] {
		return nil
	}
	if err := a.dir(path.Dir(name)); err != nil {
		return err
	}
	a.dirs[name] = true
	return a.write(cpio.Directory(name, 0o755))
}

func (a *archive) file(name string, data []byte, perm uint32) error {
	if err := a.dir(path.Dir(name)); err != nil {
		return err
	}
	return a.write(cpio.StaticRecord(data, cpio.Info{Name: name, Mode: cpio.S_IFREG | uint64(perm&0o7777)}))
}
