package rootfs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// debianSuites are the suite names (before any "-updates"/"-backports"
// suffix) that mark an apt source as a Debian archive rather than a
// third-party repository that happens to have a "main" component.
var debianSuites = map[string]bool{
	"stable": true, "testing": true, "unstable": true, "oldstable": true, "oldoldstable": true,
	"experimental": true, "sid": true, "buster": true, "bullseye": true, "bookworm": true,
	"trixie": true, "forky": true, "duke": true,
}

// aptSource is one deb line (or one URI of a deb822 stanza).
type aptSource struct {
	URI        string
	Suites     []string
	Components []string
}

// isDebianMain reports whether s is a Debian archive (not its security
// archive) that carries the main component.
func (s aptSource) isDebianMain() bool {
	if strings.HasSuffix(strings.TrimRight(s.URI, "/"), "-security") {
		return false
	}
	hasMain := false
	for _, c := range s.Components {
		if c == "main" {
			hasMain = true
		}
	}
	if !hasMain {
		return false
	}
	for _, suite := range s.Suites {
		base, suffix, _ := strings.Cut(suite, "-")
		if suffix == "security" || strings.Contains(suite, "/updates") {
			return false
		}
		if debianSuites[base] {
			return true
		}
	}
	return false
}

// parseOneLine parses the classic one-line sources.list format.
func parseOneLine(text string) []aptSource {
	var out []aptSource
	for _, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "deb" {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") {
			// Options run up to the field ending in ']'.
			for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
				f = f[1:]
			}
			if len(f) == 0 {
				continue
			}
			f = f[1:]
		}
		if len(f) < 2 {
			continue
		}
		out = append(out, aptSource{URI: f[0], Suites: []string{f[1]}, Components: f[2:]})
	}
	return out
}

// parseDeb822 parses the deb822 .sources format: stanzas separated by blank
// lines, "Field: value" lines, continuation lines starting with a space.
func parseDeb822(text string) []aptSource {
	var out []aptSource
	flush := func(st map[string]string) {
		if len(st) == 0 {
			return
		}
		if strings.EqualFold(st["enabled"], "no") {
			return
		}
		isDeb := false
		for _, t := range strings.Fields(st["types"]) {
			if t == "deb" {
				isDeb = true
			}
		}
		if !isDeb {
			return
		}
		for _, u := range strings.Fields(st["uris"]) {
			out = append(out, aptSource{URI: u, Suites: strings.Fields(st["suites"]), Components: strings.Fields(st["components"])})
		}
	}
	st := map[string]string{}
	last := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush(st)
			st, last = map[string]string{}, ""
			continue
		}
		if (line[0] == ' ' || line[0] == '\t') && last != "" {
			st[last] += " " + strings.TrimSpace(line)
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		last = strings.ToLower(strings.TrimSpace(k))
		st[last] = strings.TrimSpace(v)
	}
	flush(st)
	return out
}

// HostMirror returns the first Debian main archive URI found in the apt
// sources under etcApt (normally /etc/apt), in the order apt reads them:
// sources.list, then sources.list.d/*.list and *.sources by name.
func HostMirror(etcApt string) (string, error) {
	var files []string
	if _, err := os.Stat(filepath.Join(etcApt, "sources.list")); err == nil {
		files = append(files, filepath.Join(etcApt, "sources.list"))
	}
	parts, _ := os.ReadDir(filepath.Join(etcApt, "sources.list.d"))
	var names []string
	for _, p := range parts {
		if strings.HasSuffix(p.Name(), ".list") || strings.HasSuffix(p.Name(), ".sources") {
			names = append(names, p.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, filepath.Join(etcApt, "sources.list.d", n))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		var srcs []aptSource
		if strings.HasSuffix(f, ".sources") {
			srcs = parseDeb822(string(b))
		} else {
			srcs = parseOneLine(string(b))
		}
		for _, s := range srcs {
			if s.isDebianMain() {
				return strings.TrimRight(s.URI, "/"), nil
			}
		}
	}
	return "", fmt.Errorf("no Debian main archive in the apt sources under %s; pass --mirror URL", etcApt)
}

// scanLines is a small helper for parsing command output line by line.
func scanLines(b []byte, fn func(string) error) error {
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if err := fn(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}
