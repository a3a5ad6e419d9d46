package rootfs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Package sets recorded in the lock file. "ours" is nginx's closure; "linux"
// adds what the Linux flavour needs on top of it; "packages:a,b,c" is the
// closure of the packages a, b and c that someone asked for (PackageSet).
const (
	setOurs        = "ours"
	setLinux       = "linux"
	packagesPrefix = "packages:"
)

// debianName is the form Debian policy gives package names.
var debianName = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)

// PackageSet returns the lock set name of a list of requested packages:
// sorted and without duplicates, so that the same list in any order is
// pinned once.
func PackageSet(pkgs []string) (string, error) {
	seen := map[string]bool{}
	var names []string
	for _, p := range pkgs {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !debianName.MatchString(p) {
			return "", fmt.Errorf("%q is not a Debian package name", p)
		}
		if !seen[p] {
			seen[p] = true
			names = append(names, p)
		}
	}
	if len(names) == 0 {
		return "", errors.New("no packages given")
	}
	sort.Strings(names)
	return packagesPrefix + strings.Join(names, ","), nil
}

// setPackages returns the packages a set was resolved from (nil for ours
// and linux).
func setPackages(set string) []string {
	list, ok := strings.CutPrefix(set, packagesPrefix)
	if !ok {
		return nil
	}
	return strings.Split(list, ",")
}

// validSet reports whether a lock line's set is one this code writes.
func validSet(set string) bool {
	if set == setOurs || set == setLinux {
		return true
	}
	pkgs := setPackages(set)
	if pkgs == nil {
		return false
	}
	canon, err := PackageSet(pkgs)
	return err == nil && canon == set
}

// setRank orders sets in the file: ours, linux, then package sets by name.
func setRank(set string) int {
	switch set {
	case setOurs:
		return 0
	case setLinux:
		return 1
	}
	return 2
}

// LockEntry pins one Debian package file.
type LockEntry struct {
	Set     string // setOurs, setLinux or a PackageSet
	Package string
	Version string
	Arch    string
	Size    int64
	SHA256  string
}

// Filename is the name apt-get download gives the package file (an epoch's
// colon is written %3a).
func (e LockEntry) Filename() string {
	return e.Package + "_" + strings.ReplaceAll(e.Version, ":", "%3a") + "_" + e.Arch + ".deb"
}

// Lock is the parsed rootfs.lock.
type Lock struct {
	Entries []LockEntry
}

const lockHeader = `# jiege rootfs lock: the Debian stable riscv64 packages of the root filesystems.
# Every build checks its downloads against these sha256 sums. A set
# "packages:a,b" is what jiege rootfs --packages a,b resolved and pinned.
# Regenerate with: jiege rootfs --update-lock
# set package version arch size sha256
`

// ParseLock reads the lock file format written by Format.
func ParseLock(r io.Reader) (*Lock, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	l := &Lock{}
	n := 0
	err = scanLines(b, func(line string) error {
		n++
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			return nil
		}
		f := strings.Fields(line)
		if len(f) != 6 {
			return fmt.Errorf("rootfs.lock line %d: want 6 fields, got %d", n, len(f))
		}
		size, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			return fmt.Errorf("rootfs.lock line %d: size: %v", n, err)
		}
		if !validSet(f[0]) {
			return fmt.Errorf("rootfs.lock line %d: unknown set %q", n, f[0])
		}
		if len(f[5]) != 64 {
			return fmt.Errorf("rootfs.lock line %d: bad sha256 %q", n, f[5])
		}
		l.Entries = append(l.Entries, LockEntry{Set: f[0], Package: f[1], Version: f[2], Arch: f[3], Size: size, SHA256: f[5]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Format renders the lock deterministically (sorted by set, then package).
func (l *Lock) Format() []byte {
	es := append([]LockEntry(nil), l.Entries...)
	sort.Slice(es, func(i, j int) bool {
		if ri, rj := setRank(es[i].Set), setRank(es[j].Set); ri != rj {
			return ri < rj
		}
		if es[i].Set != es[j].Set {
			return es[i].Set < es[j].Set
		}
		return es[i].Package < es[j].Package
	})
	var sb strings.Builder
	sb.WriteString(lockHeader)
	for _, e := range es {
		fmt.Fprintf(&sb, "%s %s %s %s %d %s\n", e.Set, e.Package, e.Version, e.Arch, e.Size, e.SHA256)
	}
	return []byte(sb.String())
}

// For returns the entries needed by a flavour.
func (l *Lock) For(f Flavor) []LockEntry {
	var out []LockEntry
	for _, e := range l.Entries {
		if e.Set == setOurs || (f == Linux && e.Set == setLinux) {
			out = append(out, e)
		}
	}
	return out
}

// Set returns the entries of one set.
func (l *Lock) Set(set string) []LockEntry {
	var out []LockEntry
	for _, e := range l.Entries {
		if e.Set == set {
			out = append(out, e)
		}
	}
	return out
}

// Replace makes es the entries of set, dropping the ones it had.
func (l *Lock) Replace(set string, es []LockEntry) {
	kept := l.Entries[:0:0]
	for _, e := range l.Entries {
		if e.Set != set {
			kept = append(kept, e)
		}
	}
	for _, e := range es {
		e.Set = set
		kept = append(kept, e)
	}
	l.Entries = kept
}

// packageSets lists the package sets in the lock, each once.
func (l *Lock) packageSets() []string {
	seen := map[string]bool{}
	var sets []string
	for _, e := range l.Entries {
		if setPackages(e.Set) != nil && !seen[e.Set] {
			seen[e.Set] = true
			sets = append(sets, e.Set)
		}
	}
	sort.Strings(sets)
	return sets
}

// Find returns the entry for a package name in a set.
func (l *Lock) Find(set, pkg string) (LockEntry, bool) {
	for _, e := range l.Entries {
		if e.Set == set && e.Package == pkg {
			return e, true
		}
	}
	return LockEntry{}, false
}

// VerifyFile checks a downloaded package file against its entry.
func (e LockEntry) VerifyFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if sum != e.SHA256 || n != e.Size {
		return fmt.Errorf("%s %s: sha256 %s (%d bytes) does not match rootfs.lock's %s (%d bytes); the same version must never change, refusing it",
			e.Package, e.Version, sum, n, e.SHA256, e.Size)
	}
	return nil
}

// parsePrintURI parses one line of `apt-get --print-uris` output:
// 'URL' name_version_arch.deb size HASHTYPE:hex. apt prints whichever hash it
// likes there (often MD5Sum), so the sha256 comes from apt-cache show.
func parsePrintURI(line, set string) (LockEntry, error) {
	f := strings.Fields(line)
	if len(f) != 4 || !strings.HasPrefix(f[0], "'") {
		return LockEntry{}, fmt.Errorf("unexpected apt --print-uris line %q", line)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return LockEntry{}, fmt.Errorf("apt --print-uris line %q: %v", line, err)
	}
	base, ok := strings.CutSuffix(f[1], ".deb")
	parts := strings.Split(base, "_")
	if !ok || len(parts) != 3 {
		return LockEntry{}, fmt.Errorf("apt --print-uris line %q: file name is not name_version_arch.deb", line)
	}
	ver, err := url.PathUnescape(parts[1])
	if err != nil {
		return LockEntry{}, err
	}
	return LockEntry{Set: set, Package: parts[0], Version: ver, Arch: parts[2], Size: size}, nil
}

// parseShow reads Package, Version and SHA256 from `apt-cache show` stanzas
// and returns the sha256 by "package=version".
func parseShow(out []byte) (map[string]string, error) {
	sums := map[string]string{}
	var pkg, ver, sum string
	flush := func() {
		if pkg != "" && ver != "" && sum != "" {
			sums[pkg+"="+ver] = sum
		}
		pkg, ver, sum = "", "", ""
	}
	err := scanLines(out, func(line string) error {
		if strings.TrimSpace(line) == "" {
			flush()
			return nil
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") {
			return nil
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Package":
			pkg = v
		case "Version":
			ver = v
		case "SHA256":
			sum = v
		}
		return nil
	})
	flush()
	return sums, err
}
