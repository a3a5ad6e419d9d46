package fs

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/u-root/u-root/pkg/cpio"
)

func archive(t testing.TB, recs ...cpio.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := cpio.Newc.Writer(&buf)
	if err := cpio.WriteRecordsAndDirs(w, recs); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestUnpackConcatenatedArchives(t *testing.T) {
	base := archive(t,
		cpio.Directory("usr", 0o755),
		cpio.Directory("usr/bin", 0o755),
		cpio.StaticFile("usr/bin/hello", "first", 0o755),
		cpio.Symlink("bin", "usr/bin"),
		cpio.StaticFile("etc/motd", "hi", 0o644),
	)
	extra := archive(t, cpio.StaticFile("usr/bin/hello", "second", 0o755), cpio.StaticFile("nonce.txt", "n0nce", 0o644))
	image := append(append(append([]byte{}, base...), make([]byte, 512)...), extra...)
	tr, err := Unpack(image)
	if err != nil {
		t.Fatal(err)
	}
	n, err := tr.Lookup(nil, "/bin/hello", true)
	if err != nil || string(n.Data) != "second" || n.Mode.Perm() != 0o755 {
		t.Fatalf("/bin/hello: %+v, %v", n, err)
	}
	if n, err := tr.Lookup(nil, "/nonce.txt", true); err != nil || string(n.Data) != "n0nce" {
		t.Fatalf("nonce: %v", err)
	}
	if n, err := tr.Lookup(nil, "/bin", false); err != nil || n.Link != "usr/bin" {
		t.Fatalf("symlink itself: %+v %v", n, err)
	}
	if n, err := tr.Lookup(nil, "/usr/bin/../../etc/motd", true); err != nil || string(n.Data) != "hi" {
		t.Fatalf("dot-dot: %v", err)
	}
	if _, err := tr.Lookup(nil, "/missing", true); err != ErrNotExist {
		t.Fatalf("missing: %v", err)
	}
	if _, err := tr.Lookup(nil, "/etc/motd/x", true); err != ErrNotDir {
		t.Fatalf("file as dir: %v", err)
	}
}

// Each record is linked into the directory its parent path leads to, as
// a walk of the whole name would find it, even when the record before it
// went into the same parent path and changed where that path leads: /s
// leads to /p through /p/c/up, and a record replaces /p/c with a file.
func TestUnpackFollowsChangedPaths(t *testing.T) {
	records := func(last ...cpio.Record) []byte {
		var buf bytes.Buffer
		w := cpio.Newc.Writer(&buf)
		recs := append([]cpio.Record{
			cpio.Directory("p", 0o755),
			cpio.Directory("p/c", 0o755),
			cpio.Symlink("p/c/up", ".."),
			cpio.Symlink("s", "p/c/up"),
			cpio.StaticFile("s/x", "x", 0o644),
		}, last...)
		if err := cpio.WriteRecords(w, recs); err != nil { // no parents added
			t.Fatal(err)
		}
		if err := cpio.WriteTrailer(w); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	tr, err := Unpack(records(cpio.StaticFile("s/y", "y", 0o644)))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := tr.Lookup(nil, "/p/y", true); err != nil || string(n.Data) != "y" {
		t.Fatalf("/p/y: %v", err)
	}
	_, err = Unpack(records(cpio.StaticFile("s/c", "c is a file now", 0o644), cpio.StaticFile("s/y", "y", 0o644)))
	if err == nil || !strings.Contains(err.Error(), "s/y: parent directory missing") {
		t.Fatalf("s/y after /p/c became a file: %v, want its parent missing", err)
	}
}

func TestUnpackRejectsGarbage(t *testing.T) {
	for name, img := range map[string][]byte{
		"garbage":   []byte("this is not a cpio archive"),
		"truncated": archive(t, cpio.StaticFile("a", "0123456789", 0o644))[:120],
	} {
		if _, err := Unpack(img); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if tr, err := Unpack(nil); err != nil || len(tr.Root.Children) != 0 {
		t.Errorf("empty image: %v", err)
	}
}

func TestSymlinkLoop(t *testing.T) {
	tr, err := Unpack(archive(t, cpio.Symlink("a", "b"), cpio.Symlink("b", "a")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Lookup(nil, "/a", true); err != ErrLoop {
		t.Fatalf("loop: %v", err)
	}
}

// TestAppendToUnpackedFile: a file's data aliases the image; appending
// to it must copy, not run into the next file's bytes.
func TestAppendToUnpackedFile(t *testing.T) {
	image := archive(t, cpio.StaticFile("a", "aaaa", 0o644), cpio.StaticFile("b", "bbbb", 0o644))
	tr, err := Unpack(image)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tr.Lookup(nil, "/a", true)
	f := tr.OpenNode(a, "/a")
	f.SetStatusFlags(unix.O_APPEND)
	if _, err := writeBytes(f, []byte("0123456789012345678901234567890123456789")); err != nil {
		t.Fatal(err)
	}
	b, _ := tr.Lookup(nil, "/b", true)
	aData, _ := a.Contents()
	bData, _ := b.Contents()
	if string(bData) != "bbbb" || !bytes.HasPrefix(aData, []byte("aaaa0123")) {
		t.Fatalf("after appending to /a: /a %q, /b %q", aData, bData)
	}
	img2 := archive(t, cpio.StaticFile("a", "aaaa", 0o644), cpio.StaticFile("b", "bbbb", 0o644))
	if !bytes.Equal(image, img2) {
		t.Fatal("the image changed under the write")
	}
}

// TestHardLinksShareData: newc gives a hard-linked file's data to its
// last name; every name must read it.
func TestHardLinksShareData(t *testing.T) {
	first := cpio.StaticFile("x", "", 0o755)
	first.NLink, first.Ino = 2, 77
	second := cpio.StaticFile("y", "shared data", 0o755)
	second.NLink, second.Ino = 2, 77
	tr, err := Unpack(archive(t, first, second))
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tr.Lookup(nil, "/x", true)
	y, _ := tr.Lookup(nil, "/y", true)
	if x != y || string(x.Data) != "shared data" || StatNode(x).Nlink != 2 {
		t.Fatalf("hard links: x %q y %q, nlink %d", x.Data, y.Data, StatNode(x).Nlink)
	}
}

// FuzzReadNewc checks the kernel's reading of a newc header against
// u-root's reader: a header u-root reads, the kernel reads with the same
// fields, name and data offset, unless its name does not end in NUL or
// is longer than PATH_MAX (Linux refuses both); and a header u-root
// refuses, the kernel refuses too.
func FuzzReadNewc(f *testing.F) {
	f.Add(archive(f, cpio.StaticFile("etc/nginx/nginx.conf", "user www-data;\n", 0o644)))
	f.Add(archive(f, cpio.Symlink("lib", "usr/lib"), cpio.CharDev("dev/null", 0o666, 1, 3)))
	f.Add([]byte("070701zz"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, dataOff, err := readNewc(bytes.NewReader(data), 0, int64(len(data)))
		if len(data) >= newcHeader {
			// u-root allocates the name's stated size before reading it.
			if size, ok := parseHex8(data[94:102]); ok && size > uint64(len(data)) {
				if err == nil {
					t.Fatalf("read %+v with a name past the end", rec)
				}
				return
			}
		}
		theirs, theirErr := cpio.Newc.Reader(bytes.NewReader(data)).ReadRecord()
		if theirErr != nil {
			if err == nil {
				t.Fatalf("read %+v; u-root: %v", rec, theirErr)
			}
			return
		}
		if err != nil {
			size, _ := parseHex8(data[94:102])
			if size > maxNameSize || data[newcHeader+size-1] != 0 {
				return
			}
			t.Fatalf("%v; u-root read %+v", err, theirs.Info)
		}
		want := newcRecord{ino: theirs.Ino, mode: theirs.Mode, uid: theirs.UID, gid: theirs.GID, nlink: theirs.NLink,
			mtime: theirs.MTime, size: theirs.FileSize, major: theirs.Major, minor: theirs.Minor,
			rmajor: theirs.Rmajor, rminor: theirs.Rminor, nameSize: rec.nameSize, check: rec.check, name: rec.name}
		if rec != want || CleanPath("/"+rec.name) != CleanPath("/"+theirs.Name) || dataOff != int64(theirs.FilePos) {
			t.Fatalf("read %+v, data at %d; u-root %+v, data at %d", rec, dataOff, theirs.Info, theirs.FilePos)
		}
	})
}
