package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"
)

// shellPackages is the root filesystem of the shell test: Debian's three
// shells and, for users and groups, base-passwd (pinned in rootfs.lock).
const shellPackages = "busybox-static,dash,bash,base-passwd"

// packagesRootfs is a root filesystem of Debian packages built by jiege.
type packagesRootfs struct {
	archive string // newc archive
	tree    string // the unpacked tree (the oracle's root)
}

var (
	packagesRootfsMu   sync.Mutex
	packagesRootfsSets = map[string]packagesRootfs{}
)

// debianRootfs builds (or takes from jiege's cache) the root filesystem of
// pkgs with `jiege rootfs --packages`.
func debianRootfs(t *testing.T, pkgs string) packagesRootfs {
	t.Helper()
	packagesRootfsMu.Lock()
	defer packagesRootfsMu.Unlock()
	if r, ok := packagesRootfsSets[pkgs]; ok {
		return r
	}
	res := jiege(t, 10*time.Minute, nil, "rootfs", "--packages", pkgs, "--quiet")
	if res.code != 0 {
		t.Fatalf("jiege rootfs --packages %s: exit %d\n%s", pkgs, res.code, res.stderr)
	}
	var r packagesRootfs
	for _, l := range strings.Split(res.stdout, "\n") {
		k, v, ok := strings.Cut(l, ":")
		switch k = strings.TrimSpace(k); {
		case !ok:
		case k == "rootfs (packages)":
			r.archive = strings.TrimSpace(v)
		case k == "tree":
			r.tree = strings.TrimSpace(v)
		}
	}
	if r.archive == "" || r.tree == "" {
		t.Fatalf("jiege rootfs names no archive or tree:\n%s", res.stdout)
	}
	packagesRootfsSets[pkgs] = r
	return r
}

// withFiles returns a copy of archive with a second newc archive appended
// that adds files at the root (the kernel unpacks concatenated archives in
// order, as Linux does).
func withFiles(t *testing.T, archive string, files map[string][]byte) string {
	t.Helper()
	base, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	buf := bytes.NewBuffer(base)
	w := cpio.Newc.Writer(buf)
	for name, data := range files {
		rec := cpio.StaticFile(name, string(data), 0o755)
		rec.Ino = 1 << 30 // far from the base archive's inode numbers
		if err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rootfs.cpio")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// treeOracle runs a program of the tree under qemu-riscv64 on the host in
// a fresh directory holding files, and returns what it wrote to stdout and
// stderr together, and its exit status. The programs it execs are found
// through PATH in the tree and run through qemu-user's binfmt_misc entry,
// with QEMU_LD_PREFIX pointing their loader and libraries at the tree.
func treeOracle(t *testing.T, tree string, files map[string][]byte, prog string, args ...string) (string, int) {
	t.Helper()
	requireBinfmt(t)
	qemu, err := exec.LookPath("qemu-riscv64")
	if err != nil {
		t.Fatal("qemu-riscv64 not installed (apt-get install qemu-user)")
	}
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, append([]string{"-L", tree, filepath.Join(tree, prog)}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + filepath.Join(tree, "usr/bin"), "QEMU_LD_PREFIX=" + tree, "HOME=/", "TERM=linux"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = dieWithTest
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("qemu-riscv64 %s: still running after 2 minutes; output:\n%s", prog, out.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("qemu-riscv64 %s: %v", prog, err)
	}
	return out.String(), code
}

// TestShells runs one script (testdata/programs/shell.sh: pipes,
// redirections, command substitution, subshells, here-documents, read,
// background jobs and wait, traps on EXIT and on signals sent to $$) as init
// under Debian's busybox sh, dash and bash, and compares every line and the
// exit status with the same shell binaries under qemu-riscv64 on Linux.
func TestShells(t *testing.T) {
	script, err := os.ReadFile("testdata/programs/shell.sh")
	if err != nil {
		t.Fatal(err)
	}
	root := debianRootfs(t, shellPackages)
	initrd := withFiles(t, root.archive, map[string][]byte{"shell.sh": script})
	for _, sh := range []struct {
		name string
		prog string   // inside the tree
		args []string // before the script
	}{
		{"busybox", "usr/bin/busybox", []string{"sh"}},
		{"dash", "usr/bin/dash", nil},
		{"bash", "usr/bin/bash", nil},
	} {
		t.Run(sh.name, func(t *testing.T) {
			recordProgram(t)
			want, wantCode := treeOracle(t, root.tree, map[string][]byte{"shell.sh": script},
				sh.prog, append(sh.args, "shell.sh")...)
			// The script's last lines and status: a script that fails early
			// fails the test even where Linux would fail alike.
			if wantCode != 7 || !strings.HasSuffix(want, "end\nexit trap: status 7\n") {
				t.Fatalf("under qemu-riscv64 the script exited %d:\n%s", wantCode, want)
			}
			cmdline := "init=/" + sh.prog + " -- " + strings.Join(append(sh.args, "/shell.sh"), " ")
			r := bootKernel(t, "256M", cmdline, 2*time.Minute, "-initrd", initrd)
			if r.timedOut {
				t.Fatalf("timed out:\n%s", r.console)
			}
			compareWithOracle(t, r, want, wantCode)
		})
	}
}
