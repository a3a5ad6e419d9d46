package tests

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoHTTPServer runs a static Go net/http server (testdata/gohttp,
// built by the test for linux/riscv64) as /init on the kernel and under
// qemu-riscv64 on the host's loopback, fetches the same URLs from both
// with curl on the host (a GET, a 2 MiB file, a range, a POST, handlers
// that fan out to goroutines), and compares status lines, headers (but
// Date) and bodies; /quit shuts the server down and the guest powers off.
func TestGoHTTPServer(t *testing.T) {
	recordProgram(t)
	prog := buildGo(t, "testdata/gohttp")
	body := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(body, bytes.Repeat([]byte("riscv "), 50000), 0o644); err != nil {
		t.Fatal(err)
	}
	fetchAll := func(port int) string {
		var out strings.Builder
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		for _, args := range [][]string{
			{base + "/hello"},
			{base + "/payload.bin"},
			{"-r", "1000-1999", base + "/payload.bin"},
			{"--data-binary", "@" + body, base + "/sha256"},
			{base + "/parallel"},
			{base + "/missing"},
			{base + "/quit"},
		} {
			head, b := curlFetch(t, args...)
			fmt.Fprintf(&out, "%v:\n%s\n%d bytes, sha256 %x: %.80q\n", args[:len(args)-1], head, len(b), sha256.Sum256(b), b)
		}
		return out.String()
	}

	port := freePort(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gohttp"), prog, 0o755); err != nil {
		t.Fatal(err)
	}
	requireBinfmt(t)
	oracle := startHostProgram(t, dir, nil, "gohttp: listening", filepath.Join(dir, "gohttp"), "-addr", fmt.Sprintf("127.0.0.1:%d", port))
	want := fetchAll(port)
	if !strings.Contains(want, "hello from Go on linux/riscv64") {
		t.Fatalf("under qemu-riscv64:\n%s\n%s", want, oracle.String())
	}

	gport, console, exited := startKernelExit(t, 5*time.Minute, "256M", "", initramfs(t, prog, nil), 8080)
	waitConsole(t, console, "gohttp: listening", 2*time.Minute)
	if got := fetchAll(gport); got != want {
		t.Errorf("on the kernel:\n%s\nunder qemu-riscv64:\n%s", got, want)
	}
	expectExit(t, exited, console, "gohttp: shut down")
}
