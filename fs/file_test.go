package fs

import (
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

func TestFDTable(t *testing.T) {
	var tab FDTable
	var out []byte
	con := &Console{Out: func(p []byte) { out = append(out, p...) }}
	for want := 0; want < 3; want++ {
		if fd, err := tab.Install(con, false, 0); err != nil || fd != want {
			t.Fatalf("Install = %d, %v; want %d", fd, err, want)
		}
	}
	f, err := tab.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("hi"))
	if string(out) != "hi" {
		t.Fatalf("console got %q", out)
	}
	if err := tab.Close(1); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Get(1); err != unix.EBADF {
		t.Fatalf("Get closed fd: %v", err)
	}
	if fd, _ := tab.Install(con, false, 0); fd != 1 {
		t.Fatalf("lowest free fd not reused: %d", fd)
	}
	if fd, _ := tab.Install(con, true, 10); fd != 10 {
		t.Fatalf("Install min 10 = %d", fd)
	}
	if _, err := tab.Get(-1); err != unix.EBADF {
		t.Fatal("negative fd accepted")
	}
}

func TestNodeFileReadSeekStat(t *testing.T) {
	n := &Node{Mode: 0o644, Ino: 42, Data: []byte("0123456789")}
	f := OpenNode(n)
	buf := make([]byte, 4)
	if k, _ := f.Read(buf); k != 4 || string(buf) != "0123" {
		t.Fatalf("Read %q", buf[:k])
	}
	if off, _ := f.Seek(-2, io.SeekEnd); off != 8 {
		t.Fatalf("Seek = %d", off)
	}
	if k, _ := f.Read(buf); k != 2 || string(buf[:2]) != "89" {
		t.Fatalf("Read at end %q", buf[:k])
	}
	if k, _ := f.Read(buf); k != 0 {
		t.Fatalf("Read past end = %d", k)
	}
	if k, _ := f.ReadAt(buf, 3); k != 4 || string(buf) != "3456" {
		t.Fatalf("ReadAt %q", buf[:k])
	}
	st := f.Stat()
	if st.Mode != unix.S_IFREG|0o644 || st.Size != 10 || st.Ino != 42 {
		t.Fatalf("Stat %+v", st)
	}
	if _, err := f.Write(buf); err != unix.EBADF {
		t.Fatalf("Write to initramfs file: %v", err)
	}
	if _, err := f.Seek(-1, io.SeekStart); err != unix.EINVAL {
		t.Fatalf("negative seek: %v", err)
	}
}
