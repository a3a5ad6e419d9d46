package tests

// End-to-end tests of the jiege binary against real QEMU guests: Debian's
// Linux with the linux-flavor root filesystem (built once through the
// rootfs cache, downloading from the host's Debian mirror), the negative
// controls, attempts through the QEMU shim, and the bad-input paths. Guests
// run one at a time; every jiege run is bounded by a timeout and each test
// checks that no QEMU of its own outlives it.

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// jiegeBin builds the jiege binary once per test run.
var jiegeBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "jiege-e2e-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "jiege")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gobin, "build", "-o", bin, "../tools/jiege").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./tools/jiege: %v\n%s", err, out)
	}
	return bin, nil
})

// jiegeResult is one finished jiege run.
type jiegeResult struct {
	code           int
	stdout, stderr string
}

// jiege runs the binary with a deadline; on the deadline it is interrupted
// like Ctrl-C (so it stops its QEMU), then killed.
func jiege(t *testing.T, timeout time.Duration, env []string, args ...string) jiegeResult {
	t.Helper()
	bin, err := jiegeBin()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(timeout):
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		t.Fatalf("jiege %s: no result within %v\nstderr:\n%s", strings.Join(args, " "), timeout, stderr.String())
	}
	r := jiegeResult{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := werr.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if werr != nil {
		t.Fatal(werr)
	}
	return r
}

// verifyDoc is the part of the verify JSON the tests read.
type verifyDoc struct {
	Schema      int      `json:"schema"`
	Kind        string   `json:"kind"`
	Pass        bool     `json:"pass"`
	FailedStage string   `json:"failed_stage"`
	QEMUCommand []string `json:"qemu_command"`
	ConsoleLog  string   `json:"console_log"`
	Boot200     float64  `json:"boot_to_first_200_s"`
	Nginx       string   `json:"nginx_version"`
	Stages      []struct {
		Name, Status, Class, Detail string
	} `json:"stages"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// noQEMUFor fails the test if a QEMU process still forwards the host port
// of qemuCommand (each run picks its own free port, so this finds only the
// run's own QEMU).
func noQEMUFor(t *testing.T, qemuCommand []string) {
	t.Helper()
	re := regexp.MustCompile(`hostfwd=tcp:127\.0\.0\.1:(\d+)-`)
	var port string
	for _, a := range qemuCommand {
		if m := re.FindStringSubmatch(a); m != nil {
			port = m[1]
		}
	}
	if port == "" {
		t.Fatalf("no hostfwd port in %q", qemuCommand)
	}
	noQEMUWith(t, "hostfwd=tcp:127.0.0.1:"+port+"-")
}

// noQEMUWith fails if a live qemu-system-riscv64 has marker in its command line.
func noQEMUWith(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := qemuWith(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("QEMU %v (%s) still running after jiege exited", pids, marker)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func qemuWith(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte("qemu-system-riscv64")) || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

func TestJiegeVerifyLinux(t *testing.T) {
	out := filepath.Join(t.TempDir(), "linux.json")
	md := filepath.Join(t.TempDir(), "linux.md")
	r := jiege(t, 4*time.Minute, nil, "verify", "linux", "--json", out, "--md", md)
	var v verifyDoc
	readJSON(t, out, &v)
	if r.code != 0 || !v.Pass {
		t.Fatalf("verify linux: exit %d, pass %v\n%s\n%s", r.code, v.Pass, r.stdout, r.stderr)
	}
	want := []string{"build", "boot", "port-open", "first-200", "nginx-fingerprint", "content", "stability", "survival"}
	if len(v.Stages) != len(want) {
		t.Fatalf("stages %+v", v.Stages)
	}
	for i, s := range v.Stages {
		if s.Name != want[i] || s.Status != "pass" {
			t.Errorf("stage %d: %+v, want %s pass", i, s, want[i])
		}
	}
	if v.Schema != 1 || v.Kind != "verify" || v.Nginx == "" || v.Boot200 <= 0 {
		t.Errorf("schema %d kind %q nginx %q boot-to-200 %v", v.Schema, v.Kind, v.Nginx, v.Boot200)
	}
	if b, err := os.ReadFile(v.ConsoleLog); err != nil || !bytes.Contains(b, []byte("OpenSBI")) {
		t.Errorf("console log %s: %v", v.ConsoleLog, err)
	}
	if b, err := os.ReadFile(md); err != nil || !bytes.Contains(b, []byte("nginx-fingerprint")) {
		t.Errorf("markdown %s: %v", md, err)
	}
	if !strings.Contains(r.stderr, "console log ") {
		t.Errorf("the console log path is not printed:\n%s", r.stderr)
	}
	noQEMUFor(t, v.QEMUCommand)
}

// selfcheckDoc is the part of the selfcheck JSON the tests read.
type selfcheckDoc struct {
	Kind   string `json:"kind"`
	Pass   bool   `json:"pass"`
	Checks []struct {
		Target      string    `json:"target"`
		ExpectPass  bool      `json:"expect_pass"`
		ExpectStage string    `json:"expect_stage"`
		Counted     bool      `json:"counted"`
		OK          bool      `json:"ok"`
		Note        string    `json:"note"`
		Verify      verifyDoc `json:"verify"`
	} `json:"checks"`
}

// The whole selfcheck: linux and ours pass, and every negative control is a
// real guest that fails at its own stage.
func TestJiegeSelfcheck(t *testing.T) {
	out := filepath.Join(t.TempDir(), "selfcheck.json")
	r := jiege(t, 12*time.Minute, nil, "selfcheck", "--json", out, "--port-timeout", "60s")
	var d selfcheckDoc
	readJSON(t, out, &d)
	if r.code != 0 || !d.Pass || d.Kind != "selfcheck" {
		t.Errorf("selfcheck: exit %d pass %v\n%s\n%s", r.code, d.Pass, r.stdout, r.stderr)
	}
	want := []struct {
		target, stage string
		counted       bool
	}{
		{"linux", "", true},
		{"ours", "", true},
		{"never-boots", "boot", true},
		{"busybox-httpd", "nginx-fingerprint", true},
		{"nginx-dies", "stability", true},
		{"forgery", "nginx-fingerprint", true},
		{"no-network", "port-open", true},
	}
	if len(d.Checks) != len(want) {
		t.Fatalf("checks: %+v", d.Checks)
	}
	for i, w := range want {
		c := d.Checks[i]
		if c.Target != w.target || c.Counted != w.counted || c.ExpectStage != w.stage {
			t.Errorf("check %d: %s counted %v stage %q; want %s %v %q", i, c.Target, c.Counted, c.ExpectStage, w.target, w.counted, w.stage)
		}
		if w.stage != "" && (c.Verify.Pass || c.Verify.FailedStage != w.stage || !c.OK) {
			t.Errorf("control %s: pass %v failed at %q, want a failure at %s (%s)", c.Target, c.Verify.Pass, c.Verify.FailedStage, w.stage, c.Note)
		}
		if (w.target == "linux" || w.target == "ours") && (!c.Verify.Pass || !c.OK) {
			t.Errorf("%s must pass: %s", w.target, c.Note)
		}
		if len(c.Verify.QEMUCommand) > 0 {
			noQEMUFor(t, c.Verify.QEMUCommand)
		}
	}
	if !strings.Contains(r.stdout, "selfcheck: PASS") {
		t.Errorf("summary:\n%s", r.stdout)
	}
}

// garbageELF is a kernel that prints '#' on the UART forever.
func garbageELF(t *testing.T) string {
	const addr = 0x80200000
	code := []uint32{
		0x100002b7, // lui t0, 0x10000      (UART at 0x10000000)
		0x02300313, // addi t1, zero, '#'
		0x00628023, // sb t1, 0(t0)
		0xffdff06f, // j -4
	}
	var text bytes.Buffer
	binary.Write(&text, binary.LittleEndian, code)
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_RISCV), Version: 1, Entry: addr,
		Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1, Shentsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	p := elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Off: 64 + 56, Vaddr: addr, Paddr: addr,
		Filesz: uint64(text.Len()), Memsz: uint64(text.Len()), Align: 4}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, h)
	binary.Write(&b, binary.LittleEndian, p)
	b.Write(text.Bytes())
	path := filepath.Join(t.TempDir(), "garbage.elf")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Bad input: each gives a clear message and the right exit status, and no
// QEMU is left behind.
func TestJiegeBadInput(t *testing.T) {
	t.Run("missing attempt directory", func(t *testing.T) {
		r := jiege(t, time.Minute, nil, "verify", "--attempt", filepath.Join(t.TempDir(), "nope"))
		if r.code != 2 || !strings.Contains(r.stderr, "attempt directory not found") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("unknown target", func(t *testing.T) {
		r := jiege(t, time.Minute, nil, "verify", "no-such-kernel")
		if r.code != 2 || !strings.Contains(r.stderr, "not ours, linux, or an existing kernel file") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("not a kernel", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "junk")
		os.WriteFile(p, bytes.Repeat([]byte("junk"), 100), 0o644)
		r := jiege(t, time.Minute, nil, "verify", p)
		if r.code != 2 || !strings.Contains(r.stderr, "not a RISC-V ELF or Linux Image") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("bad flag", func(t *testing.T) {
		r := jiege(t, time.Minute, nil, "verify", "--no-such-flag", "linux")
		if r.code != 2 {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("failing build", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "v.json")
		r := jiege(t, time.Minute, nil, "verify", "--attempt", t.TempDir(), "--build", "echo compiling; exit 3", "--json", out)
		var v verifyDoc
		readJSON(t, out, &v)
		if r.code != 1 || v.FailedStage != "build" || v.Stages[0].Class != "build-failed" || !strings.Contains(v.Stages[0].Detail, "exit status 3") {
			t.Errorf("exit %d, %+v\n%s", r.code, v.Stages, r.stderr)
		}
	})
	t.Run("qemu not installed", func(t *testing.T) {
		// Only make and sh on PATH: the build works, QEMU is missing.
		dir := t.TempDir()
		for _, tool := range []string{"sh", "make"} {
			p, err := exec.LookPath(tool)
			if err != nil {
				t.Fatal(err)
			}
			os.Symlink(p, filepath.Join(dir, tool))
		}
		r := jiege(t, 2*time.Minute, []string{"PATH=" + dir}, "verify", garbageELF(t))
		if r.code != 2 || !strings.Contains(r.stderr, "QEMU is not installed") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("port already taken", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		r := jiege(t, 2*time.Minute, nil, "verify", garbageELF(t), "--port", port)
		if r.code != 2 || !strings.Contains(r.stderr, "host port already in use") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("kernel that prints garbage", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "v.json")
		r := jiege(t, 2*time.Minute, nil, "verify", garbageELF(t), "--port-timeout", "8s", "--json", out)
		var v verifyDoc
		readJSON(t, out, &v)
		if r.code != 1 || v.FailedStage != "port-open" {
			t.Errorf("exit %d, failed at %q\n%s", r.code, v.FailedStage, r.stderr)
		}
		if b, err := os.ReadFile(v.ConsoleLog); err != nil || !bytes.Contains(b, []byte("####")) {
			t.Errorf("console log %s lacks the garbage: %v", v.ConsoleLog, err)
		}
		noQEMUFor(t, v.QEMUCommand)
	})
}

// An attempt directory whose `make run` starts Debian's Linux with its own
// hostfwd port: jiege run rewrites the port, serves, and on Ctrl-C stops the
// QEMU the shim started and exits with status 2.
func TestJiegeRunAttemptAndInterrupt(t *testing.T) {
	// Build (or reuse) the linux rootfs and learn its kernel and archive.
	r := jiege(t, 10*time.Minute, nil, "rootfs", "--flavor", "linux", "--quiet")
	if r.code != 0 {
		t.Fatalf("rootfs: %d\n%s", r.code, r.stderr)
	}
	files := map[string]string{}
	for _, l := range strings.Split(r.stdout, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			files[strings.Fields(k)[0]] = strings.TrimSpace(v)
		}
	}
	kernel, initrd := files["kernel"], files["rootfs"]
	if kernel == "" || initrd == "" {
		t.Fatalf("rootfs output:\n%s", r.stdout)
	}
	dir := t.TempDir()
	marker := "jiege-e2e-" + strconv.Itoa(os.Getpid())
	mk := fmt.Sprintf("build:\n\t@echo nothing to build\nrun:\n\tqemu-system-riscv64 -machine virt -nographic -m 512M -smp 2 "+
		"-bios default -kernel %s -initrd %s -append 'console=ttyS0 quiet %s' "+
		"-netdev user,id=net0,hostfwd=tcp::8080-:80 -device virtio-net-device,netdev=net0\n", kernel, initrd, marker)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)

	bin, err := jiegeBin()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "run", "--attempt", dir)
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	defer func() {
		cmd.Process.Kill()
		for _, p := range qemuWith(marker) {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "http://") {
				urls <- sc.Text()
			}
		}
		io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("jiege run exited early: %v\n%s", err, stderr.String())
	case <-ctx.Done():
		cmd.Process.Signal(syscall.SIGINT)
		t.Fatalf("no URL printed\n%s", stderr.String())
	}
	if strings.Contains(url, ":8080/") {
		t.Errorf("hostfwd port not rewritten: %s", url)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Server"), "nginx/") {
		t.Errorf("GET %s: %d %q", url, resp.StatusCode, resp.Header.Get("Server"))
	}
	if len(qemuWith(marker)) != 1 {
		t.Errorf("want one QEMU with %s, got %v", marker, qemuWith(marker))
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Errorf("after SIGINT: %v, want exit status 2", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("jiege run did not exit after SIGINT")
	}
	noQEMUWith(t, marker)
}

// compare without QEMU: a manifest whose attempt fails to build gives a
// leaderboard and exit status 1; a manifest with mistakes gives 2.
func TestJiegeCompareBuildFailure(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "m.json")
	os.WriteFile(manifest, []byte(`{"schema": 1, "attempts": [
		{"name": "broken", "dir": ".", "build": "echo no compiler; exit 4", "metadata": {"model": "m", "cost": 1.5}}]}`), 0o644)
	out := filepath.Join(dir, "out")
	r := jiege(t, time.Minute, nil, "compare", manifest, "--out", out)
	if r.code != 1 {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	var c struct {
		Kind string `json:"kind"`
		Rows []struct {
			Name        string `json:"name"`
			Rank        int    `json:"rank"`
			FailedStage string `json:"failed_stage"`
			FailClass   string `json:"fail_class"`
		} `json:"rows"`
	}
	b, err := os.ReadFile(filepath.Join(out, "leaderboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Kind != "compare" || len(c.Rows) != 1 || c.Rows[0].Name != "broken" || c.Rows[0].Rank != 1 ||
		c.Rows[0].FailedStage != "build" || c.Rows[0].FailClass != "build-failed" {
		t.Errorf("leaderboard %s", b)
	}
	for _, f := range []string{"leaderboard.md", "leaderboard.html"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	os.WriteFile(manifest, []byte(`{"attempts": [{"name": "x", "dir": "missing-dir"}]}`), 0o644)
	if r := jiege(t, time.Minute, nil, "compare", manifest); r.code != 2 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("bad manifest: exit %d %s", r.code, r.stderr)
	}
}
