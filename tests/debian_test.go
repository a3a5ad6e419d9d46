package tests

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
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

// programsOnly skips a test of Debian's programs unless make
// test-programs runs it (JIEGE_PROGRAMS=1): together they would add more
// than make test can take.
func programsOnly(t *testing.T) {
	if os.Getenv("JIEGE_PROGRAMS") == "" {
		t.Skip("a Debian program test: make test-programs runs it")
	}
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
	programsOnly(t)
	recordProgram(t)
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
	programsOnly(t)
	recordProgram(t)
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
	programsOnly(t)
	recordProgram(t)
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

// curlFetch runs curl on the host with args (the URL last) and returns
// the status line and the headers (without Date, which moves) and the
// body.
func curlFetch(t *testing.T, args ...string) (string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	headers := filepath.Join(t.TempDir(), "headers")
	cmd := exec.CommandContext(ctx, "curl", append([]string{"-sS", "--max-time", "100", "-D", headers}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	body, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl %v: %v %s", args, err, stderr.String())
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
	env := []string{"PATH=" + filepath.Join(tree, "usr/bin"), "QEMU_LD_PREFIX=" + tree, "HOME=/", "LC_ALL=C"}
	return startHostProgram(t, dir, env, ready, "qemu-riscv64", append([]string{"-L", tree, filepath.Join(tree, prog)}, args...)...)
}

// startHostProgram starts a program on the host in dir with env (a
// riscv64 one runs under qemu-riscv64 through binfmt_misc), waits for
// ready in its output, and kills it when the test ends. It returns its
// output.
func startHostProgram(t *testing.T, dir string, env []string, ready, prog string, args ...string) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = env
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
	programsOnly(t)
	recordProgram(t)
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
	programsOnly(t)
	recordProgram(t)
	compareScript(t, scriptJob{
		pkgs:    redisPackages,
		script:  "testdata/programs/redis.sh",
		mem:     "512M",
		timeout: 5 * time.Minute,
	})
}

// redisBenchLine is a result line of redis-benchmark -q.
var redisBenchLine = regexp.MustCompile(`(?m)^([A-Z_]+[A-Z0-9_ ()]*): ([\d.]+) requests per second`)

// redisFigures returns the requests per second redis-benchmark printed
// after marker, by test, and fails when a test has none.
func redisFigures(t *testing.T, output, marker string) map[string]string {
	t.Helper()
	i := strings.Index(output, marker)
	if i < 0 {
		t.Fatalf("no %q in the output:\n%s", marker, output)
	}
	section := output[i+len(marker):]
	if j := strings.Index(section, "bench: "); j >= 0 {
		section = section[:j]
	}
	figures := map[string]string{}
	for _, m := range redisBenchLine.FindAllStringSubmatch(section, -1) {
		figures[m[1]] = m[2]
	}
	for _, test := range []string{"SET", "GET", "INCR", "LPUSH"} {
		if figures[test] == "" {
			t.Errorf("no %s figure after %q:\n%s", test, marker, section)
		}
	}
	return figures
}

// TestRedisBenchmark runs `redis-benchmark -q -n 20000 -t
// set,get,incr,lpush` in the guest
// against redis-server, on our kernel (over a Unix socket and over
// 127.0.0.1) and on Debian's Linux in the same QEMU (over a Unix socket),
// and logs the figures side by side. It checks that every run completed,
// not how fast: the machine is shared.
func TestRedisBenchmark(t *testing.T) {
	programsOnly(t)
	recordProgram(t)
	root := debianRootfs(t, redisPackages)
	script, err := os.ReadFile("testdata/programs/redisbench.sh")
	if err != nil {
		t.Fatal(err)
	}
	ours := bootKernel(t, "512M", "init=/usr/bin/bash -- /init", 20*time.Minute,
		"-initrd", withFiles(t, root.archive, map[string][]byte{"init": append([]byte("BENCH_TCP=1\n"), script...)}))
	if ours.timedOut || !strings.Contains(ours.console, "bench: done") {
		t.Fatalf("the benchmark did not finish on our kernel (timed out %v):\n%s", ours.timedOut, ours.console)
	}
	oursUnix := redisFigures(t, ours.console, "bench: unix socket")
	oursTCP := redisFigures(t, ours.console, "bench: tcp 127.0.0.1")

	linux, _ := bootLinux(t, withFiles(t, root.archive, map[string][]byte{"init": script}), "512M", 20*time.Minute)
	if !strings.Contains(linux, "bench: done") {
		t.Fatalf("the benchmark did not finish on Linux:\n%s", linux)
	}
	linuxUnix := redisFigures(t, linux, "bench: unix socket")
	var report strings.Builder
	fmt.Fprintf(&report, "redis-benchmark -q -n 20000 -t set,get,incr,lpush, requests per second:\n%-34s %12s %12s %12s\n", "test", "ours unix", "Linux unix", "ours tcp")
	tests := make([]string, 0, len(linuxUnix))
	for test := range linuxUnix {
		tests = append(tests, test)
	}
	sort.Strings(tests)
	for _, test := range tests {
		fmt.Fprintf(&report, "%-34s %12s %12s %12s\n", test, oursUnix[test], linuxUnix[test], oursTCP[test])
	}
	t.Log(report.String())
}

// serveFiles serves the curl test's files on a port of the host's
// loopback until the test ends: /file.bin (with ranges and a fixed
// Last-Modified), /hello, /redirect to /file.bin, /sha256 of a POST body.
func serveFiles(t *testing.T, file []byte) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /file.bin", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "file.bin", time.Unix(1700000000, 0), bytes.NewReader(file))
	})
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello from the host")
	})
	mux.HandleFunc("GET /redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/file.bin", http.StatusFound)
	})
	mux.HandleFunc("POST /sha256", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		fmt.Fprintf(w, "%d bytes, sha256 %x", n, h.Sum(nil))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: time.Minute}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// listenDNS binds UDP port 53 of a loopback address for answerDNS
// (resolv.conf names no port); another test may hold it for a while.
func listenDNS(t *testing.T, ip string) net.PacketConn {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		conn, err := net.ListenPacket("udp4", ip+":53")
		if err == nil {
			return conn
		}
		if time.Now().After(deadline) {
			t.Fatalf("a name server on %s:53: %v", ip, err)
		}
		time.Sleep(time.Second)
	}
}

// overlayTree returns a root for qemu-riscv64's -L that is tree with etc
// replaced: links to tree's entries plus files (qemu-user looks a path up
// in the root first and falls back to the host's, so a file the tree
// lacks, such as resolv.conf, must be there).
func overlayTree(t *testing.T, tree string, etc map[string][]byte) string {
	t.Helper()
	root := t.TempDir()
	link := func(from, to string) {
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if err := os.Symlink(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	link(tree, root)
	os.Remove(filepath.Join(root, "etc"))
	os.Mkdir(filepath.Join(root, "etc"), 0o755)
	link(filepath.Join(tree, "etc"), filepath.Join(root, "etc"))
	for name, data := range etc {
		os.Remove(filepath.Join(root, "etc", name))
		if err := os.WriteFile(filepath.Join(root, "etc", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestCurl runs Debian's curl in the guest against the test's HTTP server
// on the host's loopback (10.0.2.2 from the guest), by address and by a
// name that the test's own DNS server answers on the host's loopback, UDP
// port 53 (the guest's resolv.conf names 10.0.2.2; no query leaves the
// machine): downloads, HEAD, a redirect, a POST, a 404, a range, two URLs
// on one connection and a name that does not resolve
// (testdata/programs/curl.sh). Under qemu-riscv64 the same script talks to
// 127.0.0.1, and a second name server on 127.0.0.2 answers the same name
// with 127.0.0.1.
func TestCurl(t *testing.T) {
	programsOnly(t)
	recordProgram(t)
	root := debianRootfs(t, "base-passwd,bash,coreutils,curl")
	script, err := os.ReadFile("testdata/programs/curl.sh")
	if err != nil {
		t.Fatal(err)
	}
	port := serveFiles(t, bigFile()[:3<<20])
	guestDNS := answerDNS(t, listenDNS(t, "127.0.0.1"), map[string][4]byte{"files.jiege.test": {10, 0, 2, 2}})
	oracleDNS := answerDNS(t, listenDNS(t, "127.0.0.2"), map[string][4]byte{"files.jiege.test": {127, 0, 0, 1}})
	nsswitch := []byte("hosts: files dns\n")
	hosts := []byte("127.0.0.1 localhost\n")
	options := "options timeout:2 attempts:2\n"

	oracleRoot := overlayTree(t, root.tree, map[string][]byte{
		"resolv.conf": []byte("nameserver 127.0.0.2\n" + options), "nsswitch.conf": nsswitch, "hosts": hosts})
	files := map[string][]byte{"job.sh": script, "port": []byte(fmt.Sprint(port))}
	files["hostip"] = []byte("127.0.0.1")
	want, wantCode := treeOracle(t, oracleRoot, files, "usr/bin/bash", "job.sh")
	if wantCode != 7 || !strings.HasSuffix(want, "end\nexit trap: status 7\n") || oracleDNS.Load() == 0 {
		t.Fatalf("under qemu-riscv64 the script exited %d (%d queries):\n%s", wantCode, oracleDNS.Load(), want)
	}

	files["hostip"] = []byte("10.0.2.2")
	files["etc/resolv.conf"] = []byte("nameserver 10.0.2.2\n" + options)
	files["etc/nsswitch.conf"] = nsswitch
	files["etc/hosts"] = hosts
	r := bootKernel(t, "512M", "init=/usr/bin/bash -- /job.sh", 5*time.Minute, "-initrd", withFiles(t, root.archive, files),
		"-global", "virtio-mmio.force-legacy=false",
		"-netdev", "user,id=n0", "-device", "virtio-net-device,netdev=n0")
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	compareWithOracle(t, r, want, wantCode)
	if guestDNS.Load() == 0 {
		t.Errorf("the guest asked the test's name server nothing")
	}
}
