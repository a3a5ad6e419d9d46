package rootfs

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// configureVersion is part of the packages flavour's cache key: bump it when
// configure changes what it makes of the same packages.
const configureVersion = "configure-1"

// configure does to an unpacked package tree what dpkg and the maintainer
// scripts would do on a Debian system, as far as programs notice: the
// merged /usr, the directories the kernel and programs expect, users and
// groups (base-passwd's postinst copies its master files), alternatives as
// symlinks (update-alternatives in postinst), and /bin/sh (dash ships it;
// without dash, bash's postinst links it to bash).
func (b *builder) configure(ctx context.Context, tree string) error {
	if err := usrMerge(tree); err != nil {
		return err
	}
	dirs := []struct {
		path string
		mode os.FileMode
	}{
		{"dev", 0o755}, {"proc", 0o555}, {"sys", 0o555}, {"run", 0o755}, {"root", 0o700},
		{"etc", 0o755}, {"tmp", 0o777 | os.ModeSticky}, {"var/tmp", 0o777 | os.ModeSticky},
	}
	for _, d := range dirs {
		p := filepath.Join(tree, d.path)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(p, d.mode); err != nil {
			return err
		}
	}
	for _, name := range []string{"passwd", "group"} {
		master := filepath.Join(tree, "usr/share/base-passwd", name+".master")
		dst := filepath.Join(tree, "etc", name)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if data, err := os.ReadFile(master); err == nil {
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				return err
			}
		} else if !os.IsNotExist(err) {
			return err
		}
	}
	var alts []alternative
	for _, e := range b.entries {
		script, err := postinst(ctx, b.debs[e.Package])
		if err != nil {
			return fmt.Errorf("%s: %v", e.Package, err)
		}
		alts = append(alts, parseAlternatives(script)...)
	}
	if err := linkAlternatives(tree, alts); err != nil {
		return err
	}
	sh := filepath.Join(tree, "usr/bin/sh")
	if _, err := os.Lstat(sh); os.IsNotExist(err) {
		if _, err := os.Stat(filepath.Join(tree, "usr/bin/bash")); err == nil {
			return os.Symlink("bash", sh)
		}
	}
	return nil
}

// postinst returns a package file's postinst script, or "" when it has none.
func postinst(ctx context.Context, deb string) (string, error) {
	out, err := exec.CommandContext(ctx, "dpkg-deb", "--ctrl-tarfile", deb).Output()
	if err != nil {
		return "", fmt.Errorf("dpkg-deb --ctrl-tarfile %s: %v", deb, err)
	}
	tr := tar.NewReader(strings.NewReader(string(out)))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("control archive of %s: %v", deb, err)
		}
		if path.Clean(h.Name) == "postinst" {
			b, err := io.ReadAll(tr)
			return string(b), err
		}
	}
}

// alternative is one `update-alternatives --install` of a postinst: link
// (with its slaves) pointing to path, at priority.
type alternative struct {
	name, link, path string
	priority         int
	slaves           []slaveLink
}

type slaveLink struct{ link, path string }

// parseAlternatives finds the update-alternatives --install commands in a
// shell script. Commands that use shell variables or substitutions are
// skipped: their values are only known when the script runs.
func parseAlternatives(script string) []alternative {
	var alts []alternative
	sc := bufio.NewScanner(strings.NewReader(script))
	var cmd strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, "\\") {
			cmd.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cmd.WriteString(line)
		if a, ok := parseInstall(cmd.String()); ok {
			alts = append(alts, a)
		}
		cmd.Reset()
	}
	return alts
}

// parseInstall parses one logical line holding
// "update-alternatives --install LINK NAME PATH PRIORITY [--slave LINK NAME PATH]...".
func parseInstall(line string) (alternative, bool) {
	words := strings.Fields(line)
	start := -1
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "update-alternatives" && words[i+1] == "--install" {
			start = i + 2
			break
		}
	}
	if start < 0 {
		return alternative{}, false
	}
	var args []string
	for _, w := range words[start:] {
		if w == ";" || w == "||" || w == "&&" || w == "|" || strings.HasPrefix(w, "#") {
			break
		}
		w = strings.TrimSuffix(w, ";")
		if strings.ContainsAny(w, "$`") {
			return alternative{}, false
		}
		args = append(args, strings.Trim(w, `"'`))
	}
	if len(args) < 4 {
		return alternative{}, false
	}
	prio, err := strconv.Atoi(args[3])
	if err != nil || !path.IsAbs(args[0]) || !path.IsAbs(args[2]) {
		return alternative{}, false
	}
	a := alternative{link: args[0], name: args[1], path: args[2], priority: prio}
	for rest := args[4:]; len(rest) >= 4 && rest[0] == "--slave"; rest = rest[4:] {
		if path.IsAbs(rest[1]) && path.IsAbs(rest[3]) {
			a.slaves = append(a.slaves, slaveLink{link: rest[1], path: rest[3]})
		}
	}
	return a, true
}

// linkAlternatives makes, for each alternative name, the links of the
// highest-priority choice whose program is in the tree, as
// update-alternatives in automatic mode does (without /etc/alternatives in
// between). A link that a package ships itself is left alone.
func linkAlternatives(tree string, alts []alternative) error {
	best := map[string]alternative{}
	for _, a := range alts {
		if _, err := os.Lstat(filepath.Join(tree, merged(a.path))); err != nil {
			continue
		}
		if cur, ok := best[a.name]; !ok || a.priority > cur.priority {
			best[a.name] = a
		}
	}
	names := make([]string, 0, len(best))
	for n := range best {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := best[n]
		links := append([]slaveLink{{a.link, a.path}}, a.slaves...)
		for _, l := range links {
			if _, err := os.Lstat(filepath.Join(tree, merged(l.path))); err != nil {
				continue // a slave whose file the package does not ship
			}
			if err := relSymlink(tree, merged(l.link), merged(l.path)); err != nil {
				return err
			}
		}
	}
	return nil
}

// merged rewrites a path under /bin, /sbin or /lib to the /usr directory
// that holds it after the usr-merge.
func merged(p string) string {
	p = path.Clean(p)
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib64"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return "/usr" + p
		}
	}
	return p
}

// relSymlink creates link -> target (both absolute inside tree) as a
// relative symlink, so that it resolves on the host too (qemu-riscv64 -L),
// unless link exists.
func relSymlink(tree, link, target string) error {
	full := filepath.Join(tree, link)
	if _, err := os.Lstat(full); err == nil {
		return nil
	}
	rel, err := filepath.Rel(path.Dir(link), target)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	return os.Symlink(rel, full)
}
