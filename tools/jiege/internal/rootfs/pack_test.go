package rootfs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/u-root/u-root/pkg/cpio"
)

// readArchive reads every record of a possibly concatenated newc archive;
// a later archive's record replaces an earlier one of the same name, as
// when Linux unpacks an initramfs.
func readArchive(t *testing.T, path string) (map[string]cpio.Record, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]cpio.Record{}
	archives := 0
	r := bytes.NewReader(data)
	for off := int64(0); off < int64(len(data)); {
		if data[off] == 0 {
			off++
			continue
		}
		archives++
		rr := cpio.Newc.Reader(io.NewSectionReader(r, off, int64(len(data))-off)).(cpio.EOFReader).RecordReader
		for {
			rec, err := rr.ReadRecord()
			if err != nil {
				t.Fatalf("archive %d at %d: %v", archives, off, err)
			}
			if rec.Name == cpio.Trailer {
				off += rec.FilePos
				break
			}
			recs[rec.Name] = rec
		}
	}
	return recs, archives
}

func content(t *testing.T, r cpio.Record) string {
	t.Helper()
	b, err := io.ReadAll(io.NewSectionReader(r.ReaderAt, 0, int64(r.FileSize)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPackTree(t *testing.T) {
	tree := t.TempDir()
	os.MkdirAll(filepath.Join(tree, "usr/bin"), 0o755)
	os.WriteFile(filepath.Join(tree, "usr/bin/tool"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(tree, "init"), []byte("default init"), 0o755)
	os.Symlink("usr/bin", filepath.Join(tree, "bin"))
	os.Mkdir(filepath.Join(tree, "tmp"), 0o755)
	os.Chmod(filepath.Join(tree, "tmp"), 0o777|os.ModeSticky)
	os.MkdirAll(filepath.Join(tree, "var/www/html"), 0o755)
	if err := fixTimes(tree); err != nil {
		t.Fatal(err)
	}
	ov := map[string]override{
		"init":          {data: []byte("replaced"), mode: 0o755},
		"etc/extra/x.y": {data: []byte("extra"), mode: 0o644},
	}
	out := filepath.Join(t.TempDir(), "a.cpio")
	if err := packTree(out, tree, ov, true); err != nil {
		t.Fatal(err)
	}
	recs, count := readArchive(t, out)
	if count != 1 {
		t.Fatalf("%d archives, want 1", count)
	}
	check := func(name string, mode uint64) cpio.Record {
		t.Helper()
		r, ok := recs[name]
		if !ok {
			t.Fatalf("%s missing from the archive", name)
		}
		if r.Mode != mode {
			t.Errorf("%s: mode %o, want %o", name, r.Mode, mode)
		}
		if r.UID != 0 || r.GID != 0 || r.MTime != fixedMTime {
			t.Errorf("%s: uid %d gid %d mtime %d", name, r.UID, r.GID, r.MTime)
		}
		return r
	}
	if got := content(t, check("bin", cpio.S_IFLNK|0o777)); got != "usr/bin" {
		t.Errorf("symlink target %q", got)
	}
	check("tmp", cpio.S_IFDIR|0o1777)
	check("usr/bin/tool", cpio.S_IFREG|0o755)
	if got := content(t, check("init", cpio.S_IFREG|0o755)); got != "replaced" {
		t.Errorf("init = %q, want the override", got)
	}
	check("etc", cpio.S_IFDIR|0o755)
	check("etc/extra", cpio.S_IFDIR|0o755)
	if got := content(t, check("etc/extra/x.y", cpio.S_IFREG|0o644)); got != "extra" {
		t.Errorf("extra = %q", got)
	}
	if c := check("dev/console", cpio.S_IFCHR|0o600); c.Rmajor != 5 || c.Rminor != 1 {
		t.Errorf("console device %d:%d", c.Rmajor, c.Rminor)
	}

	// Packing again gives the same bytes.
	again := filepath.Join(t.TempDir(), "b.cpio")
	packTree(again, tree, ov, true)
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Error("packing is not deterministic")
	}

	// A nonce archive appended to the base.
	n := newNonce()
	withNonce := filepath.Join(t.TempDir(), "n.cpio")
	if err := appendNonce(withNonce, out, n); err != nil {
		t.Fatal(err)
	}
	recs, archives := readArchive(t, withNonce)
	if archives != 2 {
		t.Fatalf("%d archives, want 2", archives)
	}
	name := "var/www/html" + n.URLPath
	if got := content(t, check(name, cpio.S_IFREG|0o644)); got != string(n.Content) {
		t.Errorf("nonce content differs")
	}
	if _, ok := recs["usr/bin/tool"]; !ok {
		t.Error("base archive lost after appending")
	}
	nb, _ := os.ReadFile(withNonce)
	if !bytes.Equal(nb[:len(a)], a) {
		t.Error("base archive changed by appending")
	}
	if len(nb)%512 != 0 {
		t.Errorf("%d bytes: not whole 512-byte sectors (a disk would drop the tail)", len(nb))
	}
	if len(nb)-len(a) > 4096+len(n.Content) {
		t.Errorf("nonce archive is %d bytes, not small", len(nb)-len(a))
	}
}
