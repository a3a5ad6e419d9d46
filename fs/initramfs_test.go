package fs

import (
	"bytes"
	"testing"

	"github.com/u-root/u-root/pkg/cpio"
)

func archive(t *testing.T, recs ...cpio.Record) []byte {
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
