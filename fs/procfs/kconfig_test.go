package procfs

import (
	"bytes"
	"compress/gzip"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/jiege-go/jiege/fs"
)

// TestConfigGz reads /proc/config.gz with Go's gzip reader, which checks
// the CRC and length, and with the host's zcat, as LTP reads it.
func TestConfigGz(t *testing.T) {
	tree := fs.NewTree(fs.NewDir(0o755))
	if err := Mount(tree, fakeKernel{&fakeProcess{tree: tree, files: &fs.FDTable{}}}); err != nil {
		t.Fatal(err)
	}
	gz := read(t, tree, "/proc/config.gz")
	r, err := gzip.NewReader(strings.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"CONFIG_EVENTFD=y\n", "CONFIG_IKCONFIG_PROC=y\n", "# CONFIG_IO_URING is not set\n"} {
		if !bytes.Contains(text, []byte(line)) {
			t.Errorf("config lacks %q:\n%s", line, text)
		}
	}
	if zcat, err := exec.LookPath("zcat"); err == nil {
		cmd := exec.Command(zcat)
		cmd.Stdin = strings.NewReader(gz)
		out, err := cmd.Output()
		if err != nil || !bytes.Equal(out, text) {
			t.Errorf("zcat: %v, %d bytes, want %d", err, len(out), len(text))
		}
	}
}

// TestGzipStoredLarge checks a file longer than one stored block.
func TestGzipStoredLarge(t *testing.T) {
	data := bytes.Repeat([]byte("CONFIG_X=y\n"), 20000)
	r, err := gzip.NewReader(bytes.NewReader(gzipStored(data)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("%v, %d bytes, want %d", err, len(got), len(data))
	}
	if _, err := gzip.NewReader(bytes.NewReader(gzipStored(nil))); err != nil {
		t.Fatal(err)
	}
}
