package fs

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

// readBytes and writeBytes read and write a file with a []byte, as the
// kernel's own users do.
func readBytes(f File, b []byte) (int, error) {
	n, err := f.ReadTo(NewBytes(b))
	return int(n), err
}

func writeBytes(f File, b []byte) (int, error) {
	n, err := f.WriteFrom(NewBytes(b))
	return int(n), err
}

// faultingIO is user memory of which the first good bytes may be written,
// then a page that faults.
type faultingIO struct {
	out  []byte
	good int
}

func (u *faultingIO) Len() int64 { return IOChunk }

func (u *faultingIO) CopyOut(src []byte) (int, error) {
	k := min(len(src), u.good-len(u.out))
	u.out = append(u.out, src[:k]...)
	if k < len(src) {
		return k, unix.EFAULT
	}
	return k, nil
}

func (u *faultingIO) CopyIn(dst []byte) (int, error) { return 0, unix.EFAULT }

func (u *faultingIO) Writable(n int) int { return min(n, u.good-len(u.out)) }

func TestPipeReadFaultTakesWholePagesOnly(t *testing.T) {
	r, w := NewPipeLimits().NewPipe(0, true)
	data := bytes.Repeat([]byte("abcdefgh"), 1024) // two pipe pages
	if n, err := writeBytes(w, data); n != len(data) || err != nil {
		t.Fatalf("write: %d %v", n, err)
	}
	// The first page reaches dst; the second faults after 904 bytes and
	// stays in the pipe, as on Linux.
	dst := &faultingIO{good: 5000}
	if n, err := r.ReadTo(dst); n != pipePage || err != nil || !bytes.Equal(dst.out[:n], data[:n]) {
		t.Fatalf("read up to the fault: %d %v", n, err)
	}
	if n, err := r.ReadTo(&faultingIO{good: 100}); n != 0 || err != unix.EFAULT {
		t.Fatalf("read of a page that faults: %d %v", n, err)
	}
	rest := make([]byte, len(data))
	if n, err := readBytes(r, rest); n != len(data)-pipePage || err != nil || !bytes.Equal(rest[:n], data[pipePage:]) {
		t.Fatalf("the rest: %d %v", n, err)
	}
}

func TestNodeFileReadAtTo(t *testing.T) {
	f := NewTree(NewDir(0o755)).OpenNode(&Node{Mode: 0o644}, "/f")
	data := bytes.Repeat([]byte("0123456789"), 1000)
	if _, err := f.WriteAt(data, 3000); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		off  int64
		want []byte
	}{
		{0, append(make([]byte, 3000), data...)}, // a hole reads as zeros
		{4095, data[1095:]},                      // across pages
		{13000, nil},                             // the end
		{20000, nil},                             // past it
	} {
		b := make([]byte, 16000)
		n, err := f.ReadAtTo(NewBytes(b), c.off)
		if err != nil || !bytes.Equal(b[:n], c.want) {
			t.Errorf("pread at %d: %d %v", c.off, n, err)
		}
	}
	dst := &faultingIO{good: 100}
	if n, err := f.ReadAtTo(dst, 3000); n != 100 || err != nil || !bytes.Equal(dst.out, data[:100]) {
		t.Errorf("pread up to a fault: %d %v", n, err)
	}
	if n, err := f.ReadAtTo(&faultingIO{}, 20000); n != 0 || err != unix.EFAULT {
		t.Errorf("pread past the end into a faulting buffer: %d %v (EFAULT before EOF)", n, err)
	}
	if f.Offset() != 0 {
		t.Errorf("pread moved the position to %d", f.Offset())
	}
}

func TestReadStagedTakesNothingItCannotDeliver(t *testing.T) {
	e := NewEventFD(7, false)
	if n, err := e.ReadTo(&faultingIO{good: 4}); n != 0 || err != unix.EINVAL {
		t.Fatalf("eventfd read into 4 writable bytes: %d %v", n, err)
	}
	if n, err := e.ReadTo(&faultingIO{}); n != 0 || err != unix.EFAULT {
		t.Fatalf("eventfd read into a faulting buffer: %d %v", n, err)
	}
	b := make([]byte, 8)
	if n, err := readBytes(e, b); n != 8 || err != nil || b[0] != 7 {
		t.Fatalf("the count is still there: %d %v %v", n, err, b)
	}
}
