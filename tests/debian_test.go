package tests

import (
	"math/rand/v2"
	"os"
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
