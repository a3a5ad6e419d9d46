package rootfs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// apt runs apt-get and apt-cache against an apt configuration of its own
// under dir, so that nothing touches the host's apt state: its own source
// list (one riscv64 line for the mirror), package lists, cache, an empty
// dpkg status (so the whole closure is resolved, not just what the host
// lacks) and no host configuration fragments.
type apt struct {
	dir    string
	mirror string
	log    io.Writer
}

func newApt(dir, mirror string, log io.Writer) (*apt, error) {
	a := &apt{dir: dir, mirror: mirror, log: log}
	for _, d := range []string{"lists/partial", "cache/archives/partial", "state", "sources.list.d", "apt.conf.d", "preferences.d"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		"sources.list": "deb [arch=riscv64] " + mirror + " stable main\n",
		"state/status": "",
		"preferences":  "",
		// Read through APT_CONFIG before the host's apt.conf.d, so the host's
		// fragments (hooks, compressed-index settings) are never loaded.
		"apt.conf": fmt.Sprintf("Dir::Etc::Parts %q;\nDir::Etc::Main %q;\n",
			filepath.Join(dir, "apt.conf.d"), filepath.Join(dir, "apt.conf.d", "none")),
	}
	for name, text := range files {
		if err := writeIfChanged(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (a *apt) options() []string {
	o := []string{
		"Dir::Etc::SourceList=" + filepath.Join(a.dir, "sources.list"),
		// DESIGN.md writes SourceParts=-; apt then warns that it cannot read
		// "/etc/apt/-/", so an empty directory of our own is used instead.
		"Dir::Etc::SourceParts=" + filepath.Join(a.dir, "sources.list.d"),
		"Dir::State::Lists=" + filepath.Join(a.dir, "lists"),
		"Dir::State=" + filepath.Join(a.dir, "state"),
		"Dir::State::status=" + filepath.Join(a.dir, "state", "status"),
		"Dir::Cache=" + filepath.Join(a.dir, "cache"),
		"Dir::Etc::Preferences=" + filepath.Join(a.dir, "preferences"),
		"Dir::Etc::PreferencesParts=" + filepath.Join(a.dir, "preferences.d"),
		"APT::Architecture=riscv64",
		"APT::Architectures=riscv64",
		"Acquire::Languages=none",
		"APT::Sandbox::User=root",
	}
	var args []string
	for _, s := range o {
		args = append(args, "-o", s)
	}
	return args
}

// run executes an apt tool in workDir and returns its standard output.
func (a *apt) run(ctx context.Context, workDir, tool string, args ...string) ([]byte, error) {
	full := append(a.options(), args...)
	cmd := exec.CommandContext(ctx, tool, full...)
	cmd.Dir = workDir
	cmd.Env = append(os.Environ(), "APT_CONFIG="+filepath.Join(a.dir, "apt.conf"), "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %v: %s", tool, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

func (a *apt) update(ctx context.Context) error {
	fmt.Fprintf(a.log, "rootfs: apt-get update (riscv64, mirror %s)\n", a.mirror)
	_, err := a.run(ctx, a.dir, "apt-get", "-q", "update")
	return err
}

// resolve lets apt compute the dependency closure of pkgs and returns one
// entry per package file, with the size and sha256 of the signed index.
func (a *apt) resolve(ctx context.Context, set string, pkgs ...string) ([]LockEntry, error) {
	args := append([]string{"-qq", "--print-uris", "install", "--no-install-recommends"}, pkgs...)
	out, err := a.run(ctx, a.dir, "apt-get", args...)
	if err != nil {
		return nil, err
	}
	var es []LockEntry
	err = scanLines(out, func(line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		e, err := parsePrintURI(line, set)
		if err != nil {
			return err
		}
		es = append(es, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, fmt.Errorf("apt resolved no packages for %s", strings.Join(pkgs, " "))
	}
	show := []string{"show"}
	for _, e := range es {
		show = append(show, e.Package+"="+e.Version)
	}
	out, err = a.run(ctx, a.dir, "apt-cache", show...)
	if err != nil {
		return nil, err
	}
	sums, err := parseShow(out)
	if err != nil {
		return nil, err
	}
	for i, e := range es {
		if es[i].SHA256 = sums[e.Package+"="+e.Version]; len(es[i].SHA256) != 64 {
			return nil, fmt.Errorf("apt-cache show gave no SHA256 for %s %s", e.Package, e.Version)
		}
	}
	return es, nil
}

// offered returns the versions of each package that the mirror's index has.
func (a *apt) offered(ctx context.Context, pkgs []string) (map[string][]string, error) {
	out, err := a.run(ctx, a.dir, "apt-cache", append([]string{"madison"}, pkgs...)...)
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	err = scanLines(out, func(line string) error {
		f := strings.Split(line, "|")
		if len(f) >= 2 {
			name, ver := strings.TrimSpace(f[0]), strings.TrimSpace(f[1])
			m[name] = append(m[name], ver)
		}
		return nil
	})
	return m, err
}

// download fetches pkg=version for each entry into dir.
func (a *apt) download(ctx context.Context, dir string, es []LockEntry) error {
	args := []string{"-q", "download"}
	for _, e := range es {
		args = append(args, e.Package+"="+e.Version)
	}
	fmt.Fprintf(a.log, "rootfs: apt-get download %d packages\n", len(es))
	_, err := a.run(ctx, dir, "apt-get", args...)
	return err
}

// linuxImageRe matches the versioned kernel package that the
// linux-image-riscv64 metapackage depends on.
var linuxImageRe = regexp.MustCompile(`^linux-image-[0-9].*-riscv64$`)

// resolveSet resolves a package set (PackageSet) to its closure.
func (a *apt) resolveSet(ctx context.Context, set string) ([]LockEntry, error) {
	pkgs := setPackages(set)
	if pkgs == nil {
		return nil, fmt.Errorf("%q is not a package set", set)
	}
	es, err := a.resolve(ctx, set, pkgs...)
	if err != nil {
		return nil, err
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Package < es[j].Package })
	return es, nil
}

// resolveAll computes the full lock from the mirror: nginx's closure, for
// the Linux flavour busybox-static and the kernel package itself (its own
// dependencies, such as initramfs-tools, are not needed to boot it), and the
// closure of each package set in sets.
func (a *apt) resolveAll(ctx context.Context, sets []string) (*Lock, error) {
	ours, err := a.resolve(ctx, setOurs, "nginx")
	if err != nil {
		return nil, err
	}
	hasZstd := false
	for _, e := range ours {
		if e.Package == "libzstd1" {
			hasZstd = true
		}
	}
	if !hasZstd {
		return nil, fmt.Errorf("apt's closure of nginx lacks libzstd1; the resolution is incomplete")
	}
	lin, err := a.resolve(ctx, setLinux, "busybox-static", "linux-image-riscv64")
	if err != nil {
		return nil, err
	}
	l := &Lock{Entries: ours}
	var kernels int
	for _, e := range lin {
		switch {
		case e.Package == "busybox-static":
			l.Entries = append(l.Entries, e)
		case linuxImageRe.MatchString(e.Package):
			l.Entries = append(l.Entries, e)
			kernels++
		}
	}
	if kernels != 1 {
		return nil, fmt.Errorf("expected one versioned linux-image package, found %d", kernels)
	}
	for _, set := range sets {
		es, err := a.resolveSet(ctx, set)
		if err != nil {
			return nil, err
		}
		l.Entries = append(l.Entries, es...)
	}
	sort.Slice(l.Entries, func(i, j int) bool { return l.Entries[i].Package < l.Entries[j].Package })
	return l, nil
}
