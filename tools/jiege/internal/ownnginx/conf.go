package ownnginx

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// directive is one nginx configuration directive: its name, its
// arguments as written (quotes kept), and its block, if it has one.
type directive struct {
	name  string
	args  []string
	block []*directive
	isBlk bool
}

// parseConf parses nginx configuration text.
func parseConf(text string) ([]*directive, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	ds, rest, err := parseBlock(toks, false)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, errors.New("unexpected \"}\"")
	}
	return ds, nil
}

func parseBlock(toks []string, inBlock bool) ([]*directive, []string, error) {
	var ds []*directive
	var cur []string
	for len(toks) > 0 {
		t := toks[0]
		toks = toks[1:]
		switch t {
		case ";":
			if len(cur) == 0 {
				continue
			}
			ds = append(ds, &directive{name: cur[0], args: cur[1:]})
			cur = nil
		case "{":
			if len(cur) == 0 {
				return nil, nil, errors.New("block without a directive")
			}
			body, rest, err := parseBlock(toks, true)
			if err != nil {
				return nil, nil, err
			}
			ds = append(ds, &directive{name: cur[0], args: cur[1:], block: body, isBlk: true})
			cur, toks = nil, rest
		case "}":
			if !inBlock || len(cur) > 0 {
				return nil, nil, errors.New("unexpected \"}\"")
			}
			return ds, toks, nil
		default:
			cur = append(cur, t)
		}
	}
	if inBlock || len(cur) > 0 {
		return nil, nil, errors.New("unexpected end of file")
	}
	return ds, nil, nil
}

// lex splits configuration text into words (quoted words keep their
// quotes), ";", "{" and "}", dropping comments.
func lex(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == ';' || c == '{' || c == '}':
			toks = append(toks, string(c))
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, errors.New("unterminated quote")
			}
			toks = append(toks, s[i:j+1])
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n;{}", rune(s[j])) {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			// "${name}" keeps its braces.
			for j < len(s) && s[j] == '{' && j > i && s[j-1] == '$' {
				k := strings.IndexByte(s[j:], '}')
				if k < 0 {
					return nil, errors.New("unterminated ${")
				}
				j += k + 1
				for j < len(s) && !strings.ContainsRune(" \t\r\n;{}", rune(s[j])) {
					j++
				}
			}
			toks = append(toks, s[i:min(j, len(s))])
			i = j
		}
	}
	return toks, nil
}

func unquote(a string) string {
	if len(a) >= 2 && (a[0] == '"' || a[0] == '\'') && a[len(a)-1] == a[0] {
		return a[1 : len(a)-1]
	}
	return a
}

// printConf writes directives back as text.
func printConf(ds []*directive, depth int, b *strings.Builder) {
	ind := strings.Repeat("    ", depth)
	for _, d := range ds {
		b.WriteString(ind + d.name)
		for _, a := range d.args {
			b.WriteString(" " + a)
		}
		if d.isBlk {
			b.WriteString(" {\n")
			printConf(d.block, depth+1, b)
			b.WriteString(ind + "}\n")
		} else {
			b.WriteString(";\n")
		}
	}
}

// confRewrite says how the attempt's configuration is changed to run on
// the host: where it listens, where it writes, as whom.
type confRewrite struct {
	tree      string // the extracted tree (host path)
	confDir   string // the configuration's directory, inside the tree (guest path)
	guestPort int
	port      int                 // the oracle's port, for listens on guestPort
	free      func() (int, error) // ports for the attempt's other listens
	tmp       string              // logs, pid, temporary files
	asRoot    bool
	without   map[string]bool // modules built without (from nginx -V)
}

// maxIncludeDepth bounds nested includes.
const maxIncludeDepth = 10

// rewriteConf turns the attempt's configuration into the oracle's: every
// include inlined from the tree; listens on the guest's HTTP port moved
// to 127.0.0.1:port, other listens to free loopback ports; logs, pid and
// temporary files in tmp; in the foreground; as root when jiege runs as
// root (whose workers would otherwise switch to a user the tree may not
// have).
func rewriteConf(text string, r confRewrite) (string, error) {
	ds, err := parseConf(text)
	if err != nil {
		return "", err
	}
	if ds, err = r.inline(ds, 0); err != nil {
		return "", err
	}
	var listens int
	if ds, err = r.walk(ds, 0, "", &listens); err != nil {
		return "", err
	}
	if listens == 0 {
		return "", fmt.Errorf("no listen directive for port %d", r.guestPort)
	}
	head := []*directive{
		{name: "daemon", args: []string{"off"}},
		{name: "pid", args: []string{filepath.Join(r.tmp, "nginx.pid")}},
		{name: "error_log", args: []string{filepath.Join(r.tmp, "error.log")}},
	}
	if r.asRoot {
		head = append(head, &directive{name: "user", args: []string{"root", "root"}})
	}
	var b strings.Builder
	b.WriteString("# the attempt's nginx.conf, rewritten by jiege to run as its oracle\n")
	printConf(append(head, ds...), 0, &b)
	return b.String(), nil
}

// inline replaces include directives with the directives of the files
// they name, read from the tree.
func (r confRewrite) inline(ds []*directive, depth int) ([]*directive, error) {
	var out []*directive
	for _, d := range ds {
		if d.isBlk {
			body, err := r.inline(d.block, depth)
			if err != nil {
				return nil, err
			}
			d.block = body
			out = append(out, d)
			continue
		}
		if d.name != "include" || len(d.args) != 1 {
			out = append(out, d)
			continue
		}
		if depth >= maxIncludeDepth {
			return nil, errors.New("includes nested too deep")
		}
		pat := unquote(d.args[0])
		if !path.IsAbs(pat) {
			pat = path.Join(r.confDir, pat)
		}
		matches, err := r.glob(pat)
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			b, err := os.ReadFile(m)
			if err != nil {
				return nil, fmt.Errorf("include %s: %w", pat, err)
			}
			sub, err := parseConf(string(b))
			if err != nil {
				return nil, fmt.Errorf("include %s: %w", pat, err)
			}
			if sub, err = r.inline(sub, depth+1); err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
	}
	return out, nil
}

// glob matches an include pattern (a guest path) inside the tree.
func (r confRewrite) glob(pat string) ([]string, error) {
	dir, base := path.Split(pat)
	hostDir, err := resolve(r.tree, strings.TrimPrefix(dir, "/"), true)
	if err != nil {
		return nil, err
	}
	if !strings.ContainsAny(base, "*?[") {
		p, err := resolve(r.tree, strings.TrimPrefix(pat, "/"), true)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("include %s: not in the attempt's files", pat)
		}
		return []string{p}, nil
	}
	m, err := filepath.Glob(filepath.Join(hostDir, base))
	sort.Strings(m)
	return m, err
}

// Directives dropped from the attempt's configuration: jiege sets its own.
var dropped = map[string]bool{"daemon": true, "pid": true, "user": true, "lock_file": true}

// Temporary-file directives and the module each belongs to.
var tempPaths = []struct{ directive, module string }{
	{"client_body_temp_path", ""}, {"proxy_temp_path", "http_proxy"}, {"fastcgi_temp_path", "http_fastcgi"},
	{"uwsgi_temp_path", "http_uwsgi"}, {"scgi_temp_path", "http_scgi"},
}

func (r confRewrite) walk(ds []*directive, depth int, parent string, listens *int) ([]*directive, error) {
	var out []*directive
	kept := map[string]*directive{} // this server's listens, by address
	for _, d := range ds {
		switch {
		case depth == 0 && dropped[d.name]:
			continue
		case depth == 0 && d.name == "error_log":
			continue // the head sets it
		case d.name == "error_log" || d.name == "access_log":
			if len(d.args) > 0 && d.args[0] != "off" && d.args[0] != "stderr" && !strings.HasPrefix(unquote(d.args[0]), "syslog:") {
				d.args[0] = filepath.Join(r.tmp, strings.TrimSuffix(d.name, "_log")+".log")
			}
		case d.name == "listen" && parent == "server" && len(d.args) > 0:
			if err := r.listen(d, listens); err != nil {
				return nil, err
			}
			// "listen 80" and "listen [::]:80" both became one address.
			if k := kept[d.args[0]]; k != nil {
				for _, a := range d.args[1:] {
					if !slices.Contains(k.args, a) {
						k.args = append(k.args, a)
					}
				}
				continue
			}
			kept[d.args[0]] = d
		}
		for _, t := range tempPaths {
			if d.name == t.directive {
				d.args = []string{filepath.Join(r.tmp, t.directive)}
			}
		}
		if d.isBlk {
			body, err := r.walk(d.block, depth+1, d.name, listens)
			if err != nil {
				return nil, err
			}
			d.block = body
			if d.name == "http" && depth == 0 {
				d.block = append(r.tempDirectives(d.block), d.block...)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// tempDirectives sets the temporary paths the http block leaves to the
// compiled-in defaults (directories of the attempt's system).
func (r confRewrite) tempDirectives(block []*directive) []*directive {
	set := map[string]bool{}
	for _, d := range block {
		set[d.name] = true
	}
	var out []*directive
	for _, t := range tempPaths {
		if !set[t.directive] && !r.without[t.module] {
			out = append(out, &directive{name: t.directive, args: []string{filepath.Join(r.tmp, t.directive)}})
		}
	}
	return out
}

// listen moves a listen directive to loopback: the guest's HTTP port to
// the oracle's port, any other to a free port. Unix sockets stay.
func (r confRewrite) listen(d *directive, listens *int) error {
	addr := unquote(d.args[0])
	if strings.HasPrefix(addr, "unix:") {
		return nil
	}
	port := 80 // an address alone means port 80
	_, p, err := net.SplitHostPort(addr)
	switch {
	case err == nil:
		if port, err = strconv.Atoi(p); err != nil {
			return fmt.Errorf("listen %s: bad port", addr)
		}
	case isDigits(addr):
		port, _ = strconv.Atoi(addr)
	}
	to := r.port
	if port == r.guestPort {
		*listens++
	} else {
		if to, err = r.free(); err != nil {
			return err
		}
	}
	args := []string{"127.0.0.1:" + strconv.Itoa(to)}
	for _, a := range d.args[1:] {
		// Options of IPv6 sockets only, or that need privileges.
		if !strings.HasPrefix(a, "ipv6only=") && a != "reuseport" {
			args = append(args, a)
		}
	}
	d.args = args
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
