package tests

// tools/deps.sh decides what `make qemu` and `make test` install on a
// fresh machine: it is run here against a fake package database (a
// dpkg-query that knows some packages as not installed) in dry-run mode,
// since this machine has them all.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTools makes a directory with a dpkg-query that reports the given
// packages as not installed, an id that prints uid, and the few host
// tools the script also runs.
func fakeTools(t *testing.T, missing []string, uid string) string {
	dir := t.TempDir()
	query := "#!/bin/sh\nfor a; do p=$a; done\ncase \" " + strings.Join(missing, " ") + " \" in *\" $p \"*) echo 'unknown ok not-installed';; *) echo 'install ok installed';; esac\n"
	os.WriteFile(filepath.Join(dir, "dpkg-query"), []byte(query), 0o755)
	os.WriteFile(filepath.Join(dir, "id"), []byte("#!/bin/sh\necho "+uid+"\n"), 0o755)
	for _, tool := range []string{"grep", "mountpoint", "env"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		os.Symlink(p, filepath.Join(dir, tool))
	}
	return dir
}

func deps(t *testing.T, path string, args ...string) (string, int) {
	cmd := exec.Command("/bin/sh", append([]string{filepath.Join(repoRoot, "tools/deps.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+path)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestDepsScript(t *testing.T) {
	// This machine: nothing to install for either goal.
	for _, goal := range []string{"qemu", "test"} {
		if out, code := deps(t, os.Getenv("PATH"), goal, "--dry-run"); code != 0 || strings.Contains(out, "installing") {
			t.Errorf("deps %s here: exit %d\n%s", goal, code, out)
		}
	}
	// As root, two packages missing: apt-get installs just those.
	fake := fakeTools(t, []string{"qemu-user", "apache2-utils"}, "0")
	out, code := deps(t, fake, "test", "--dry-run")
	want := "deps: installing the Debian packages make test needs: qemu-user apache2-utils\n" +
		"env DEBIAN_FRONTEND=noninteractive apt-get update\n" +
		"env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends qemu-user apache2-utils\n"
	if code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("exit %d\n%s\nwant\n%s", code, out, want)
	}
	// make qemu needs neither.
	if out, code := deps(t, fake, "qemu", "--dry-run"); code != 0 || strings.Contains(out, "installing") {
		t.Errorf("qemu goal: exit %d\n%s", code, out)
	}
	// Not root and no sudo: it says what to install, and fails.
	fake = fakeTools(t, []string{"qemu-system-misc"}, "1000")
	out, code = deps(t, fake, "qemu")
	if code != 1 || !strings.Contains(out, "deps: make qemu needs the Debian packages qemu-system-misc; as root: apt-get install qemu-system-misc") {
		t.Errorf("no sudo: exit %d\n%s", code, out)
	}
	// Not root, with sudo: through sudo.
	os.WriteFile(filepath.Join(fake, "sudo"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	out, code = deps(t, fake, "qemu", "--dry-run")
	if code != 0 || !strings.Contains(out, "\nsudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends qemu-system-misc\n") {
		t.Errorf("with sudo: exit %d\n%s", code, out)
	}
	if _, code := deps(t, fake, "everything"); code != 2 {
		t.Errorf("bad goal: exit %d", code)
	}
}
