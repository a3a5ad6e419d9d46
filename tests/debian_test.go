package tests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bigFile is 10 MiB that compress as real files do: runs of text between
// runs of noise, the same on every run (a fixed seed).
func bigFile() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"kernel ", "riscv ", "debian ", "nginx ", "page ", "frame ", "trap ", "\n"}
	b := make([]byte, 0, 10<<20)
	for len(b) < 10<<20 {
		if r.IntN(4) == 0 {
			for range 256 + r.IntN(4096) {
				b = append(b, byte(r.Uint32()))
			}
			continue
		}
		for range 64 + r.IntN(1024) {
			b = append(b, words[r.IntN(len(words))]...)
		}
	}
	return b[:10<<20]
}

// scriptJob is a bash script run as init in a root filesystem of Debian
// packages, and under qemu-riscv64 in the same tree.
type scriptJob struct {
	pkgs    string            // the set for jiege rootfs --packages
	script  string            // path under tests/
	files   map[string][]byte // beside the script
	mem     string            // the guest's RAM
	timeout time.Duration     // for the guest
}

// compareScript runs job on the kernel and under qemu-riscv64 and compares
// every line and the exit status. A script ends with `echo end` and exit
// 7 under an EXIT trap, so one that fails early fails the test even where
// Linux fails alike.
func compareScript(t *testing.T, job scriptJob) {
	t.Helper()
	script, err := os.ReadFile(job.script)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"job.sh": script}
	for name, data := range job.files {
		files[name] = data
	}
	root := debianRootfs(t, job.pkgs)
	want, wantCode := treeOracle(t, root.tree, files, "usr/bin/bash", "job.sh")
	if wantCode != 7 || !strings.HasSuffix(want, "end\nexit trap: status 7\n") {
		t.Fatalf("under qemu-riscv64 the script exited %d:\n%s", wantCode, want)
	}
	initrd := withFiles(t, root.archive, files)
	r := bootKernel(t, job.mem, "init=/usr/bin/bash -- /job.sh", job.timeout, "-initrd", initrd)
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	compareWithOracle(t, r, want, wantCode)
}

// TestCoreutils runs Debian's coreutils (ls -la, find, sort, sha256sum,
// cp -a, du), gzip and xz round trips of a 10 MiB file, and make running
// shell recipes (testdata/programs/coreutils.sh).
func TestCoreutils(t *testing.T) {
	compareScript(t, scriptJob{
		pkgs:    "base-passwd,bash,coreutils,findutils,gzip,xz-utils,make",
		script:  "testdata/programs/coreutils.sh",
		files:   map[string][]byte{"big.bin": bigFile()},
		mem:     "512M",
		timeout: 5 * time.Minute,
	})
}

// TestScripting runs Debian's perl and lua5.4 on scripts and sqlite3 on a
// database file: 1000 rows inserted in one transaction, queries, an
// update, a rollback, VACUUM and PRAGMA integrity_check
// (testdata/programs/scripting.sh).
func TestScripting(t *testing.T) {
	compareScript(t, scriptJob{
		pkgs:    "base-passwd,bash,coreutils,lua5.4,perl,sqlite3",
		script:  "testdata/programs/scripting.sh",
		mem:     "512M",
		timeout: 5 * time.Minute,
	})
}

// pythonPackages is the root filesystem of the python3 tests.
const pythonPackages = "base-passwd,bash,coreutils,python3"

// TestPython runs Debian's python3 on a script: json, re, hashlib,
// subprocess.run, threading with 8 threads, a thread pool
// (testdata/programs/python.sh).
func TestPython(t *testing.T) {
	compareScript(t, scriptJob{
		pkgs:    pythonPackages,
		script:  "testdata/programs/python.sh",
		mem:     "512M",
		timeout: 5 * time.Minute,
	})
}

// talk holds conversations with a line server on the host's loopback
// port: one connection per conversation, a reply line per line sent. It
// returns the transcript.
func talk(port int, conversations [][]string) (string, error) {
	var out strings.Builder
	for i, lines := range conversations {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 15*time.Second)
		if err != nil {
			return out.String(), err
		}
		c.SetDeadline(time.Now().Add(time.Minute))
		r := bufio.NewReader(c)
		for _, l := range lines {
			if _, err := fmt.Fprintf(c, "%s\n", l); err != nil {
				c.Close()
				return out.String(), err
			}
			reply, err := r.ReadString('\n')
			if err != nil {
				c.Close()
				return out.String(), fmt.Errorf("conversation %d, after %q: %w", i, l, err)
			}
			fmt.Fprintf(&out, "%d %s -> %s", i, l, reply)
		}
		c.Close()
	}
	return out.String(), nil
}

// curlFetch runs curl on the host and returns the status line and the
// headers (without Date, which moves) and the body.
func curlFetch(t *testing.T, url string) (string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	headers := filepath.Join(t.TempDir(), "headers")
	cmd := exec.CommandContext(ctx, "curl", "-s", "--max-time", "100", "-D", headers, url)
	body, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl %s: %v", url, err)
	}
	h, err := os.ReadFile(headers)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(strings.ReplaceAll(string(h), "\r\n", "\n"), "\n") {
		if l != "" && !strings.HasPrefix(strings.ToLower(l), "date:") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n"), body
}

// waitConsole waits until the console shows want, or fails after limit.
func waitConsole(t *testing.T, console *syncBuffer, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(console.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the console after %v:\n%s", want, limit, console.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startTreeServer starts a program of the tree under qemu-riscv64 on the
// host with dir as its working directory, waits for ready in its output,
// and kills it when the test ends. It returns the output so far.
func startTreeServer(t *testing.T, tree, dir, ready string, prog string, args ...string) *syncBuffer {
	t.Helper()
	requireBinfmt(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "qemu-riscv64", append([]string{"-L", tree, filepath.Join(tree, prog)}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + filepath.Join(tree, "usr/bin"), "QEMU_LD_PREFIX=" + tree, "HOME=/", "LC_ALL=C"}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = dieWithTest
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	waitConsole(t, out, ready, 2*time.Minute)
	return out
}

// TestPythonServers: Debian's python3 on the kernel serves the host, first
// a socketserver (testdata/programs/server.py) that the test talks to over
// three connections, then `python3 -m http.server` serving a 1 MiB file
// and a 404 to curl on the host. The same programs run under qemu-riscv64
// on the host's loopback, and the host sees the same replies, status
// lines, headers (but Date) and bodies from both.
func TestPythonServers(t *testing.T) {
	root := debianRootfs(t, pythonPackages)
	serverPy, err := os.ReadFile("testdata/programs/server.py")
	if err != nil {
		t.Fatal(err)
	}
	job, err := os.ReadFile("testdata/programs/pyserve.sh")
	if err != nil {
		t.Fatal(err)
	}
	payload := bigFile()[:1<<20]
	conversations := [][]string{{"hello", "riscv"}, {"second connection"}, {"last", "shutdown"}}

	dir := t.TempDir()
	for name, data := range map[string][]byte{"server.py": serverPy, "payload.bin": payload} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The archive's files have mtime 0: so has the oracle's, for Last-Modified.
	os.Chtimes(filepath.Join(dir, "payload.bin"), time.Unix(0, 0), time.Unix(0, 0))
	port := freePort(t)
	startTreeServer(t, root.tree, dir, "listening", "usr/bin/python3", "-u", "server.py", "127.0.0.1", fmt.Sprint(port))
	want, err := talk(port, conversations)
	if err != nil {
		t.Fatalf("server.py under qemu-riscv64: %v", err)
	}
	port = freePort(t)
	startTreeServer(t, root.tree, dir, "Serving HTTP", "usr/bin/python3", "-u", "-m", "http.server", fmt.Sprint(port), "--bind", "127.0.0.1", "--directory", dir)
	wantHead, wantBody := curlFetch(t, fmt.Sprintf("http://127.0.0.1:%d/payload.bin", port))
	want404, _ := curlFetch(t, fmt.Sprintf("http://127.0.0.1:%d/missing", port))
	if !bytes.Equal(wantBody, payload) || !strings.HasPrefix(wantHead, "HTTP/1.0 200 OK") {
		t.Fatalf("http.server under qemu-riscv64: %q, %d bytes", wantHead, len(wantBody))
	}

	initrd := withFiles(t, root.archive, map[string][]byte{"pyserve.sh": job, "server.py": serverPy, "payload.bin": payload})
	gport, console, _ := startKernelExit(t, 5*time.Minute, "512M", "init=/usr/bin/bash -- /pyserve.sh", initrd, 8000)
	waitConsole(t, console, "listening", 2*time.Minute)
	got, err := talk(gport, conversations)
	if err != nil {
		t.Fatalf("server.py on the kernel: %v\n%s", err, console.String())
	}
	if got != want {
		t.Errorf("server.py on the kernel answered:\n%s\nunder qemu-riscv64:\n%s", got, want)
	}
	waitConsole(t, console, "Serving HTTP", 2*time.Minute)
	if !strings.Contains(strings.ReplaceAll(console.String(), "\r\n", "\n"), "server stopped\nserver.py exited 0\n") {
		t.Errorf("server.py did not stop cleanly:\n%s", console.String())
	}
	head, body := curlFetch(t, fmt.Sprintf("http://127.0.0.1:%d/payload.bin", gport))
	if head != wantHead || !bytes.Equal(body, payload) {
		t.Errorf("GET /payload.bin: %d bytes, headers\n%s\nunder qemu-riscv64:\n%s", len(body), head, wantHead)
	}
	if head404, _ := curlFetch(t, fmt.Sprintf("http://127.0.0.1:%d/missing", gport)); head404 != want404 {
		t.Errorf("GET /missing: headers\n%s\nunder qemu-riscv64:\n%s", head404, want404)
	}
	if !strings.Contains(console.String(), `"GET /payload.bin HTTP/1.1" 200`) {
		t.Errorf("http.server logged no request:\n%s", console.String())
	}
}

// redisPackages is the root filesystem of the redis tests.
const redisPackages = "base-passwd,bash,coreutils,redis-server,redis-tools"

// TestRedis runs Debian's redis-server and redis-cli in the guest over the
// loopback interface and a Unix socket: SET/GET/INCR/LPUSH and other
// types, 10,000 keys through redis-cli --pipe, a Lua script, SAVE
// (testdata/programs/redis.sh).
func TestRedis(t *testing.T) {
	compareScript(t, scriptJob{
		pkgs:    redisPackages,
		script:  "testdata/programs/redis.sh",
		mem:     "512M",
		timeout: 5 * time.Minute,
	})
}
