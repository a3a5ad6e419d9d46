// Package ltp runs LTP's syscall tests (the Linux Test Project, built by
// `make ltp-build`) as the init of a guest on our kernel or on Debian's
// Linux, one line of result per test, booting again after a test that
// kills or hangs the kernel, and writes the result files and README's
// table from them.
package ltp

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Entry is one test of a runtest file: its name and command line (a
// program in testcases/bin and its arguments).
type Entry struct {
	Name    string
	Command string
	Family  string // directory of testcases/kernel/syscalls it is built in
}

// ParseRuntest reads a runtest file: "name command args..." a line, #
// comments. Entries whose command needs a shell (LTP's few shell lines)
// are left out: the guest's init execs the program directly.
func ParseRuntest(r io.Reader) ([]Entry, error) {
	var es []Entry
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || strings.ContainsAny(line, "|;&<>$`'\"") {
			continue
		}
		es = append(es, Entry{Name: f[0], Command: strings.Join(f[1:], " ")})
	}
	return es, sc.Err()
}

// Program is the program an entry runs.
func (e Entry) Program() string { return strings.Fields(e.Command)[0] }

// Families maps each program built under src/testcases/kernel/syscalls to
// the directory below syscalls it was built in (its family: "fcntl",
// "ipc", ...).
func Families(src string) (map[string]string, error) {
	root := filepath.Join(src, "testcases", "kernel", "syscalls")
	fam := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || info.Mode()&0o111 == 0 {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if dir, _, ok := strings.Cut(rel, string(filepath.Separator)); ok {
			if _, seen := fam[d.Name()]; !seen {
				fam[d.Name()] = dir
			}
		}
		return nil
	})
	return fam, err
}

// Select keeps the entries whose program was built and installed under
// opt (build/ltp/SUM/opt/ltp), with their families from fam.
func Select(es []Entry, opt string, fam map[string]string) []Entry {
	var out []Entry
	for _, e := range es {
		if _, err := os.Stat(filepath.Join(opt, "testcases", "bin", e.Program())); err != nil {
			continue
		}
		e.Family = fam[e.Program()]
		if e.Family == "" {
			e.Family = "other"
		}
		out = append(out, e)
	}
	return out
}

// List is the guest's list file: "name<TAB>command" a line, in run order.
func List(es []Entry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s\t%s\n", e.Name, e.Command)
	}
	return b.String()
}
