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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"
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
func jiege(t testing.TB, timeout time.Duration, env []string, args ...string) jiegeResult {
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
	Deviations  []string `json:"deviations"`
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
	want := []string{"build", "boot", "provenance", "port-open", "first-200", "nginx-fingerprint", "content", "stability", "survival"}
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

// TestJiegeVerifyOursIn128M: nginx on our kernel passes every stage with
// 128 MiB of RAM (issue 9), serving the 64 MiB transfer file among the
// others: the kernel reads its root from a virtio disk, so the file never
// has to fit in RAM (for Linux, whose initramfs does, jiege leaves it out
// below 256 MiB). The stability stage's 100 concurrent 1 MiB downloads
// need the kernel's TCP buffers sized as Linux's (netstack's 1 MiB each
// ran the kernel out of memory) and a transmit queue that waits instead of
// dropping (drops stalled connections for longer than the stage's
// timeout, at any memory size).
func TestJiegeVerifyOursIn128M(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ours.json")
	r := jiege(t, 6*time.Minute, nil, "verify", "ours", "--mem", "128M", "--json", out)
	var v verifyDoc
	readJSON(t, out, &v)
	if r.code != 0 || !v.Pass {
		t.Fatalf("verify ours --mem 128M: exit %d, pass %v\n%s\n%s", r.code, v.Pass, r.stdout, r.stderr)
	}
	if !slices.ContainsFunc(v.QEMUCommand, func(a string) bool { return a == "128M" }) {
		t.Errorf("QEMU ran without -m 128M: %q", v.QEMUCommand)
	}
	if slices.Contains(v.QEMUCommand, "-initrd") || !slices.Contains(v.QEMUCommand, "virtio-blk-device,drive=disk0") {
		t.Errorf("QEMU ran without the root disk: %q", v.QEMUCommand)
	}
	checked := false
	for _, s := range v.Stages {
		if s.Name != "content" {
			continue
		}
		checked = true
		m := regexp.MustCompile(`(\d+) bytes`).FindStringSubmatch(s.Detail)
		if m == nil {
			t.Errorf("the content stage gives no byte count: %s", s.Detail)
		} else if n, _ := strconv.Atoi(m[1]); n < 64<<20 {
			t.Errorf("content did not check the 64 MiB file: %s", s.Detail)
		}
	}
	if !checked {
		t.Error("no content stage")
	}
	noQEMUFor(t, v.QEMUCommand)
}

// TestJiegeVerifyOursOpenSBI: jiege verify ours --firmware opensbi boots
// build/Image under QEMU's OpenSBI, as Debian's Linux boots, and nginx
// passes every stage there.
func TestJiegeVerifyOursOpenSBI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ours.json")
	r := jiege(t, 6*time.Minute, nil, "verify", "ours", "--firmware", "opensbi", "--json", out)
	var v verifyDoc
	readJSON(t, out, &v)
	if r.code != 0 || !v.Pass {
		t.Fatalf("verify ours --firmware opensbi: exit %d, pass %v\n%s\n%s", r.code, v.Pass, r.stdout, r.stderr)
	}
	want := []string{"build", "boot", "provenance", "port-open", "first-200", "nginx-fingerprint", "content", "stability", "survival"}
	if len(v.Stages) != len(want) {
		t.Fatalf("stages %+v", v.Stages)
	}
	for i, s := range v.Stages {
		if s.Name != want[i] || s.Status != "pass" {
			t.Errorf("stage %d: %+v, want %s pass", i, s, want[i])
		}
	}
	bios := slices.Index(v.QEMUCommand, "-bios")
	kernel := slices.Index(v.QEMUCommand, "-kernel")
	if bios < 0 || kernel < 0 || v.QEMUCommand[bios+1] != "default" || filepath.Base(v.QEMUCommand[kernel+1]) != "Image" {
		t.Errorf("QEMU did not boot build/Image under OpenSBI: %q", v.QEMUCommand)
	}
	if b, err := os.ReadFile(v.ConsoleLog); err != nil || !bytes.Contains(b, []byte("OpenSBI v1.")) || !bytes.Contains(b, []byte("under SBI firmware")) {
		t.Errorf("console log %s lacks OpenSBI's banner or the kernel's SBI boot line: %v", v.ConsoleLog, err)
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

// The whole selfcheck: linux, ours and ours packaged as an attempt pass,
// and every negative control is a real guest that fails at its own stage.
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
		{"ours-as-attempt", "", true},
		{"never-boots", "boot", true},
		{"busybox-httpd", "nginx-fingerprint", true},
		{"nginx-dies", "stability", true},
		{"forgery", "nginx-fingerprint", true},
		{"no-network", "port-open", true},
		{"linux-as-attempt", "provenance", true},
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
		if w.stage == "" && (!c.Verify.Pass || !c.OK) {
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
	t.Run("two loads for the profiler", func(t *testing.T) {
		r := jiege(t, time.Minute, nil, "profile", "ours", "--fresh", "--transfer", "--out", filepath.Join(t.TempDir(), "p.pb.gz"))
		if r.code != 2 || !strings.Contains(r.stderr, "choose the load: give one") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("failing build", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "v.json")
		r := jiege(t, time.Minute, nil, "verify", "--attempt", t.TempDir(), "--build", "echo compiling; exit 3", "--run", "exit 1", "--json", out)
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
		{"name": "broken", "dir": ".", "build": "echo no compiler; exit 4", "run": "exit 1", "metadata": {"model": "m", "cost": 1.5}}]}`), 0o644)
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

// Debian's Linux and nginx packaged as an attempt (a Makefile whose run
// target starts QEMU through the shim) boots and would serve, but fails at
// provenance: its kernel file is a Linux Image.
func TestJiegeLinuxAsAttempt(t *testing.T) {
	out := filepath.Join(t.TempDir(), "v.json")
	r := jiege(t, 5*time.Minute, nil, "verify", "control:linux-as-attempt", "--json", out)
	var v verifyDoc
	readJSON(t, out, &v)
	if r.code != 1 || v.Pass || v.FailedStage != "provenance" {
		t.Fatalf("exit %d, pass %v, failed at %q\n%s\n%s", r.code, v.Pass, v.FailedStage, r.stdout, r.stderr)
	}
	for _, s := range v.Stages {
		switch s.Name {
		case "build", "boot":
			if s.Status != "pass" {
				t.Errorf("%s: %+v", s.Name, s)
			}
		case "provenance":
			if s.Class != "not-from-scratch" || !strings.Contains(s.Detail, "the booted kernel is Linux") ||
				!strings.Contains(s.Detail, "EFI-stub Linux Image") || !strings.Contains(s.Detail, "Linux version 6.") {
				t.Errorf("provenance: %+v", s)
			}
		default:
			if s.Status != "skip" {
				t.Errorf("%s: %+v, want skip", s.Name, s)
			}
		}
	}
	// The command line reported is the one the attempt's Makefile ran.
	if !strings.Contains(strings.Join(v.QEMUCommand, " "), "-kernel kernel.bin") {
		t.Errorf("qemu command %q", v.QEMUCommand)
	}
	noQEMUFor(t, v.QEMUCommand)
}

// rv assembles the few RV64I instructions the test kernels below need.
type rv []uint32

const (
	rZero, rRA, rT0, rT1, rT2, rA0, rT3, rT4, rT5, rT6 = 0, 1, 5, 6, 7, 10, 28, 29, 30, 31
)

func (p *rv) pc() int32 { return int32(4 * len(*p)) }
func (p *rv) i(op, f3, rd, rs1 uint32, imm int32) {
	*p = append(*p, uint32(imm)<<20|rs1<<15|f3<<12|rd<<7|op)
}
func (p *rv) u(op, rd uint32, imm20 uint32) { *p = append(*p, imm20<<12|rd<<7|op) }
func (p *rv) s(f3, rs2, rs1 uint32, imm int32) {
	u := uint32(imm)
	*p = append(*p, (u>>5&0x7f)<<25|rs2<<20|rs1<<15|f3<<12|(u&0x1f)<<7|0x23)
}
func (p *rv) b(f3, rs1, rs2 uint32, to int32) {
	u := uint32(to - p.pc())
	*p = append(*p, (u>>12&1)<<31|(u>>5&0x3f)<<25|rs2<<20|rs1<<15|f3<<12|(u>>1&0xf)<<8|(u>>11&1)<<7|0x63)
}
func (p *rv) jal(rd uint32, to int32) {
	u := uint32(to - p.pc())
	*p = append(*p, (u>>20&1)<<31|(u>>1&0x3ff)<<21|(u>>11&1)<<20|(u>>12&0xff)<<12|rd<<7|0x6f)
}

// delayKernel is a kernel image at 0x80200000 (booted through jiege's
// trampoline in M-mode) that prints first on the UART, waits about two
// seconds on the CLINT's mtime, then prints then; with powerOff set it
// then stops the machine through the test device, else it spins.
func delayKernel(t *testing.T, first, then string, powerOff bool) string {
	var p rv
	const printAt, msgsAt = 26 * 4, 40 * 4     // the layout below, checked at the end
	p.u(0x17, rA0, 0)                          // auipc a0, 0
	p.i(0x13, 0, rA0, rA0, msgsAt)             // addi a0, a0, first
	p.u(0x37, rT0, 0x10000)                    // lui t0, UART
	p.jal(rRA, printAt)                        // print
	p.u(0x37, rT2, 0x200c)                     // lui t2, 0x200c: mtime at -8
	p.i(0x03, 3, rT3, rT2, -8)                 // ld t3, mtime
	p.u(0x37, rT4, 0x1313)                     // lui t4, 0x1313: 2 s at 10 MHz
	p = append(p, rT3<<20|rT4<<15|rT4<<7|0x33) // add t4, t4, t3
	wait := p.pc()
	p.i(0x03, 3, rT3, rT2, -8) // ld t3, mtime
	p.b(6, rT3, rT4, wait)     // bltu t3, t4, wait
	p.u(0x17, rA0, 0)          // auipc a0, 0
	p.i(0x13, 0, rA0, rA0, msgsAt+int32(len(first))+1-p.pc()+4)
	p.jal(rRA, printAt)
	if powerOff {
		p.u(0x37, rT5, 0x100)         // lui t5, test device
		p.u(0x37, rT6, 0x5)           // lui t6, 0x5000
		p.i(0x13, 0, rT6, rT6, 0x555) // addi t6, t6, 0x555: pass
		p.s(2, rT6, rT5, 0)           // sw t6, 0(t5)
	}
	for p.pc() < printAt-4 {
		p.i(0x13, 0, rZero, rZero, 0) // nop
	}
	p.jal(rZero, p.pc()) // spin
	// print: a0 = NUL-terminated string, t0 = UART.
	p.i(0x03, 4, rT1, rA0, 0) // lbu t1, 0(a0)
	p.b(0, rT1, rZero, p.pc()+16)
	p.s(0, rT1, rT0, 0)       // sb t1, 0(t0)
	p.i(0x13, 0, rA0, rA0, 1) // addi a0, a0, 1
	p.jal(rZero, printAt)
	p.i(0x67, 0, rZero, rRA, 0) // ret
	for p.pc() < msgsAt {
		p.i(0x13, 0, rZero, rZero, 0)
	}
	if printAt != 26*4 || len(p) != msgsAt/4 {
		t.Fatalf("test kernel layout: %d instructions", len(p))
	}
	var code bytes.Buffer
	binary.Write(&code, binary.LittleEndian, []uint32(p))
	code.WriteString(first + "\x00" + then + "\x00")
	return writeELF(t, 0x80200000, code.Bytes())
}

// writeELF writes a RISC-V ELF with one segment holding code at addr.
func writeELF(t *testing.T, addr uint64, code []byte) string {
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_RISCV), Version: 1, Entry: addr,
		Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1, Shentsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	ph := elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Off: 64 + 56, Vaddr: addr, Paddr: addr,
		Filesz: uint64(len(code)), Memsz: uint64(len(code)), Align: 4}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, h)
	binary.Write(&b, binary.LittleEndian, ph)
	b.Write(code)
	path := filepath.Join(t.TempDir(), "kernel.elf")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Verdicts that point at the cause: a panic printed while jiege waits for
// the port, a QEMU that exits meanwhile, and a trap register dump before
// QEMU exits, fail the stage with what the console showed (the class says so; a wait that ran out would be a
// timeout or no-http-response), not after the port timeout.
func TestJiegePanicAndExitEndTheStage(t *testing.T) {
	for _, c := range []struct {
		name, then, class, detail string
		powerOff                  bool
	}{
		{"panic", "[PANIC] panicked at src/net/epoll.rs:118:25: called `Option::unwrap()` on a `None` value\n  sepc 0x80201234\n",
			"kernel-panic", "the console shows a kernel panic: [PANIC] panicked at src/net/epoll.rs:118:25", false},
		{"power off", "powering off\n", "qemu-exited", "QEMU exited", true},
		// Trap registers with no words of a panic, and then QEMU stops.
		{"dump, power off", "trap: scause=0x000000000000000d sepc=0x0000000080201234\n", "kernel-panic",
			"trap register dump, then the kernel went silent (QEMU exited): trap: scause=0x000000000000000d", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := delayKernel(t, "jiege test kernel: up, waiting 2 s\n", c.then, c.powerOff)
			out := filepath.Join(t.TempDir(), "v.json")
			r := jiege(t, 4*time.Minute, nil, "verify", k, "--port-timeout", "120s", "--json", out)
			var v verifyDoc
			readJSON(t, out, &v)
			if r.code != 1 || v.Pass {
				t.Fatalf("exit %d pass %v\n%s", r.code, v.Pass, r.stderr)
			}
			var failed struct{ Name, Status, Class, Detail string }
			for _, s := range v.Stages {
				if s.Name == v.FailedStage {
					failed = s
				}
			}
			// Boot passed on the kernel's first line; the next stage fails.
			if v.Stages[1].Name != "boot" || v.Stages[1].Status != "pass" || !strings.Contains(v.Stages[1].Detail, "jiege test kernel: up") {
				t.Errorf("boot: %+v", v.Stages[1])
			}
			t.Logf("failed at %s [%s]: %s", v.FailedStage, failed.Class, failed.Detail)
			if failed.Class != c.class || !strings.Contains(failed.Detail, c.detail) {
				t.Errorf("failed at %s: class %q detail %q; want %s with %q", v.FailedStage, failed.Class, failed.Detail, c.class, c.detail)
			}
			if c.class == "qemu-exited" && !strings.Contains(failed.Detail, "powering off") {
				t.Errorf("the console tail is not in the detail: %q", failed.Detail)
			}
			noQEMUFor(t, v.QEMUCommand)
		})
	}
}

// An attempt whose kernel jumps to address 0 before printing a byte: QEMU's
// OpenSBI prints its banner, which is not the kernel booting.
func TestJiegeBootIsNotTheFirmware(t *testing.T) {
	dir := t.TempDir()
	k := writeELF(t, 0x80200000, []byte{0x67, 0, 0, 0}) // jalr x0, 0(x0)
	marker := "jiege-e2e-jump0-" + strconv.Itoa(os.Getpid())
	mk := fmt.Sprintf("build:\n\t@true\nrun:\n\tqemu-system-riscv64 -machine virt -nographic -m 256M -bios default -kernel %s "+
		"-append %s -netdev user,id=net0,hostfwd=tcp::5555-:80 -device virtio-net-device,netdev=net0\n", k, marker)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
	out := filepath.Join(t.TempDir(), "v.json")
	r := jiege(t, 3*time.Minute, nil, "verify", "--attempt", dir, "--boot-timeout", "15s", "--json", out)
	var v verifyDoc
	readJSON(t, out, &v)
	if r.code != 1 || v.FailedStage != "boot" {
		t.Fatalf("exit %d, failed at %q\n%s", r.code, v.FailedStage, r.stderr)
	}
	boot := v.Stages[1]
	t.Logf("boot [%s]: %s", boot.Class, boot.Detail)
	if boot.Class != "timeout" || !strings.Contains(boot.Detail, "no console line from the kernel within 15s (QEMU still running); only the firmware's banner (OpenSBI v") {
		t.Errorf("boot: %+v", boot)
	}
	if b, err := os.ReadFile(v.ConsoleLog); err != nil || !bytes.Contains(b, []byte("OpenSBI v")) {
		t.Errorf("console log %s has no OpenSBI banner: %v", v.ConsoleLog, err)
	}
	noQEMUWith(t, marker)
}

// keepAliveOffConf is jiege's nginx.conf for the ours flavor with
// keep-alive turned off, as an attempt's own configuration might have it.
const keepAliveOffConf = `user www-data;
worker_processes auto;
master_process on;
daemon off;
pid /run/nginx.pid;
error_log stderr;
events {
    worker_connections 1024;
}
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    keepalive_timeout 0;
    access_log /var/log/nginx/access.log;
    server {
        listen 80 default_server;
        server_name _;
        root /var/www/html;
        index index.html;
    }
}
`

// Our kernel and nginx packaged as an attempt whose nginx has keep-alive
// off, whose run command starts a first QEMU that exits before the one
// that serves: provenance passes (our kernel is no Linux) and reports the
// git history's one big commit; the fingerprint's oracle is the
// attempt's own nginx, found in its -initrd, named Debian's official
// build and run with its own configuration, so keep-alive off is no
// difference; stability measures the server with fresh connections
// through the second QEMU's widened backlog; the reported command is the
// second QEMU's. Every stage passes, and the verdict is a pass with the
// deviation "keep-alive off"; with --strict-config it fails at the
// fingerprint.
func TestJiegeAttemptWithKeepAliveOff(t *testing.T) {
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	r := jiege(t, 10*time.Minute, nil, "rootfs", "--flavor", "ours", "--quiet")
	var base string
	for _, l := range strings.Split(r.stdout, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.HasPrefix(k, "rootfs") {
			base = strings.TrimSpace(v)
		}
	}
	archive, err := os.ReadFile(base)
	if r.code != 0 || err != nil {
		t.Fatalf("rootfs: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	// A second archive after the first overrides nginx.conf.
	var conf bytes.Buffer
	w := cpio.Newc.Writer(&conf)
	if err := cpio.WriteRecordsAndDirs(w, []cpio.Record{cpio.StaticFile("etc/nginx/nginx.conf", keepAliveOffConf, 0o644)}); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "initrd.cpio"), append(archive, conf.Bytes()...), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := "jiege-e2e-keepalive-" + strconv.Itoa(os.Getpid())
	mk := fmt.Sprintf("build:\n\t@true\nrun:\n"+
		"\t-qemu-system-riscv64 -machine virt -nographic -m 512M -bios none -kernel %s/no-such-kernel -append %s-first\n"+
		"\tqemu-system-riscv64 -machine virt -nographic -m 512M -bios %s -kernel %s "+
		"-initrd initrd.cpio -append %s -global virtio-mmio.force-legacy=false "+
		"-netdev user,id=net0,hostfwd=tcp::8080-:80 -device virtio-net-device,netdev=net0\n",
		dir, marker, filepath.Join(repoRoot, "build/tramp.bin"), filepath.Join(repoRoot, "build/kernel.elf"), marker)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
	// A git history whose only commit holds all of 2,000 lines of code: a
	// sign provenance reports without failing.
	os.WriteFile(filepath.Join(dir, "kernel.c"), bytes.Repeat([]byte("int x;\n"), 2000), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "Makefile", "kernel.c"}, {"commit", "-q", "-m", "import"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "GIT_CONFIG_GLOBAL=/dev/null")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	out := filepath.Join(t.TempDir(), "v.json")
	r = jiege(t, 10*time.Minute, nil, "verify", "--attempt", dir, "--json", out)
	var v verifyDoc
	readJSON(t, out, &v)
	if r.code != 0 || !v.Pass {
		t.Fatalf("exit %d, failed at %q\n%s", r.code, v.FailedStage, r.stderr)
	}
	if strings.Join(v.Deviations, ", ") != "keep-alive off" || !strings.Contains(r.stdout, "PASS with deviations (keep-alive off)") {
		t.Errorf("deviations %q; verdict:\n%s", v.Deviations, r.stdout)
	}
	for _, s := range v.Stages {
		t.Logf("%s: %s", s.Name, s.Detail)
		switch s.Name {
		case "boot":
			// Not the first QEMU's loader error.
			if !strings.Contains(s.Detail, `the kernel printed "Jiege-Go `) {
				t.Errorf("boot passed on another line: %q", s.Detail)
			}
		case "provenance":
			if !strings.Contains(s.Detail, "no sign of Linux in") ||
				!strings.Contains(s.Detail, "other signs: the first commit already holds most of the code: git: 1 commit;") {
				t.Errorf("provenance: %+v", s)
			}
		case "nginx-fingerprint":
			if !strings.HasPrefix(s.Detail, "oracle: the attempt's own nginx 1.26.3 (/usr/sbin/nginx from -initrd "+filepath.Join(dir, "initrd.cpio")+"; the official Debian build (sha256 ") ||
				!strings.Contains(s.Detail, "with its own configuration /etc/nginx/nginx.conf") {
				t.Errorf("fingerprint's oracle is not the attempt's own nginx: %q", s.Detail)
			}
		case "stability":
			if !strings.Contains(s.Detail, "keep-alive off in the server's configuration (it answers `Connection: close`): measured with fresh connections") {
				t.Errorf("stability: %q", s.Detail)
			}
		}
	}
	cmdline := strings.Join(v.QEMUCommand, " ")
	if !strings.Contains(cmdline, "-initrd initrd.cpio") || strings.Contains(cmdline, "no-such-kernel") {
		t.Errorf("reported command is not the serving QEMU's: %q", cmdline)
	}
	if strings.Contains(r.stderr, "backlog left at 1") {
		t.Errorf("the serving QEMU's backlog was not widened:\n%s", r.stderr)
	}
	noQEMUWith(t, marker)

	r = jiege(t, 10*time.Minute, nil, "verify", "--attempt", dir, "--strict-config", "--json", out)
	v = verifyDoc{}
	readJSON(t, out, &v)
	if fp, _ := stageOf(v, "nginx-fingerprint"); r.code != 1 || v.Pass || fp.Class != "config-deviation" || !strings.Contains(fp.Detail, "keep-alive off") {
		t.Errorf("--strict-config: exit %d, pass %v, fingerprint %+v", r.code, v.Pass, fp)
	}
	noQEMUWith(t, marker)
}

// stageOf returns the named stage of a verify document.
func stageOf(v verifyDoc, name string) (struct{ Name, Status, Class, Detail string }, bool) {
	for _, s := range v.Stages {
		if s.Name == name {
			return s, true
		}
	}
	return struct{ Name, Status, Class, Detail string }{}, false
}

// An attempt with only a run.sh that calls QEMU by absolute path, so the
// shim never sees it, or that detaches it with a cleared environment:
// jiege finds that QEMU (in the run command's process tree or its
// cgroup), says it could not rewrite it, and serves through the host port
// the attempt forwards itself; Ctrl-C still stops it.
func TestJiegeAttemptBesideTheShim(t *testing.T) {
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	archive, _ := oursRootfs(t)
	real, err := exec.LookPath("qemu-system-riscv64")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, how string }{
		{"exec", "exec"},
		// Detached, with a cleared environment: found in the run
		// command's cgroup.
		{"detached", "env -i setsid -f"},
	} {
		name, how := c.name, c.how
		t.Run(name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			dir := t.TempDir()
			marker := "jiege-e2e-beside-" + strconv.Itoa(os.Getpid()) + "-" + name
			sh := fmt.Sprintf("#!/bin/sh\n"+how+" %s -machine virt -nographic -m 512M -bios %s -kernel %s -initrd %s -append %s "+
				"-global virtio-mmio.force-legacy=false -netdev user,id=net0,hostfwd=tcp::%d-:80 -device virtio-net-device,netdev=net0\n",
				real, filepath.Join(repoRoot, "build/tramp.bin"), filepath.Join(repoRoot, "build/kernel.elf"), archive, marker, port)
			os.WriteFile(filepath.Join(dir, "run.sh"), []byte(sh), 0o755)

			bin, err := jiegeBin()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "run", "--attempt", dir)
			stdout, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				cmd.Process.Kill()
				for _, p := range qemuWith(marker) {
					syscall.Kill(p, syscall.SIGKILL)
				}
			}()
			done := make(chan error, 1)
			urls := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "http://") {
						urls <- sc.Text()
					}
				}
				done <- cmd.Wait()
			}()
			var url string
			select {
			case url = <-urls:
			case err := <-done:
				t.Fatalf("jiege run exited early: %v\n%s", err, stderr.String())
			case <-time.After(4 * time.Minute):
				cmd.Process.Signal(syscall.SIGINT)
				t.Fatalf("no URL printed\n%s", stderr.String())
			}
			if want := fmt.Sprintf("http://127.0.0.1:%d/", port); url != want {
				t.Errorf("URL %s, want the attempt's own port: %s", url, want)
			}
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(url)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Server") != "nginx/1.26.3" {
				t.Errorf("GET %s: %d %q", url, resp.StatusCode, resp.Header.Get("Server"))
			}
			if pids := qemuWith(marker); len(pids) != 1 || !strings.Contains(stderr.String(), fmt.Sprintf("the attempt's QEMU (pid %d, %s) did not come through jiege's shim", pids[0], real)) ||
				!strings.Contains(stderr.String(), fmt.Sprintf("jiege probes the host port it forwards itself, 127.0.0.1:%d", port)) {
				t.Errorf("QEMUs %v; no warning about the unshimmed QEMU:\n%s", pids, stderr.String())
			}
			cmd.Process.Signal(syscall.SIGINT)
			select {
			case err := <-done:
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
					t.Errorf("after SIGINT: %v, want exit status 2", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("jiege run did not exit after SIGINT")
			}
			noQEMUWith(t, marker)
		})
	}
}

// An attempt whose kernel boots but serves nothing on port 80 (ours
// without an init), forwarding host port 5555, with -m set by the
// operator: the port-open failure says what jiege saw, the console tail
// and the packet capture: SYNs reached the guest, which answered with
// resets.
func TestJiegeSilentAttemptEvidence(t *testing.T) {
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := "jiege-e2e-silent-" + strconv.Itoa(os.Getpid())
	mk := fmt.Sprintf("run:\n\tqemu-system-riscv64 -machine virt -nographic -m 512M -bios %s -kernel %s -append %s "+
		"-global virtio-mmio.force-legacy=false -netdev user,id=net0,hostfwd=tcp::5555-:80 -device virtio-net-device,netdev=net0\n",
		filepath.Join(repoRoot, "build/tramp.bin"), filepath.Join(repoRoot, "build/kernel.elf"), marker)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
	out := filepath.Join(t.TempDir(), "v.json")
	r := jiege(t, 3*time.Minute, nil, "verify", "--attempt", dir, "--port-timeout", "15s", "--qemu-arg=-m", "--qemu-arg=256M", "--json", out)
	var v verifyDoc
	readJSON(t, out, &v)
	if r.code != 1 || v.FailedStage != "port-open" {
		t.Fatalf("exit %d, failed at %q\n%s", r.code, v.FailedStage, r.stderr)
	}
	for _, s := range v.Stages {
		switch s.Name {
		case "build":
			if s.Detail != dir+": no build step" {
				t.Errorf("build: %+v", s)
			}
		case "port-open":
			t.Logf("port-open: %s", s.Detail)
			if !strings.Contains(s.Detail, "what jiege saw: console tail: ") || !strings.Contains(s.Detail, "kernel: no init to run") ||
				!regexp.MustCompile(`network: [1-9]\d* connection attempts reached the guest, which answered none with a SYN-ACK \([1-9]\d* resets`).MatchString(s.Detail) {
				t.Errorf("port-open detail does not say what jiege saw: %q", s.Detail)
			}
		}
	}
	cmdline := strings.Join(v.QEMUCommand, " ")
	if !strings.Contains(cmdline, "-m 256M") || strings.Contains(cmdline, "512M") || strings.Contains(cmdline, ":5555-") ||
		!strings.Contains(cmdline, "filter-dump,id=jiegedump,netdev=net0") {
		t.Errorf("qemu command %q", cmdline)
	}
	noQEMUFor(t, v.QEMUCommand)
}
