// Package attempt owns running somebody else's kernel project: its own build
// command, its own QEMU command line started through a PATH shim that
// rewrites or supplies the hostfwd host port, and the cleanup of every QEMU
// the shim launched.
package attempt

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Rewrite returns QEMU arguments in which the user-networking rule that
// forwards to guestPort (or the only TCP rule, whatever its guest port) is
// bound to 127.0.0.1:port. Other TCP rules move to loopback ports from free,
// so several attempts can run side by side. Without any user netdev that has
// a hostfwd rule, one is added: to the first user netdev if there is one,
// else as a new user netdev with a virtio-net-device. Informational calls
// (--version, -help, "-machine help") pass through unchanged.
func Rewrite(args []string, port, guestPort int, free func() (int, error)) ([]string, error) {
	if informational(args) {
		return slices.Clone(args), nil
	}
	out := slices.Clone(args)
	type ref struct{ arg, rule int } // out[arg] holds a tcp rule, index rule in its list
	var user []int                   // indexes of user-netdev option values
	var rules []ref
	var ruleGuest []int
	for i := 0; i+1 < len(out); i++ {
		if !netOption(out[i]) {
			continue
		}
		v := out[i+1]
		i++
		o, err := parseNet(v)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", out[i-1], v, err)
		}
		if o == nil || o.typ() != "user" {
			continue
		}
		user = append(user, i)
		for k, h := range o.hostfwds() {
			fw, err := parseHostFwd(h)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", out[i-1], v, err)
			}
			if fw.udp {
				continue
			}
			rules = append(rules, ref{i, k})
			ruleGuest = append(ruleGuest, fw.guestPort)
		}
	}
	main := slices.Index(ruleGuest, guestPort)
	if main < 0 && len(rules) == 1 {
		main = 0
	}
	if main < 0 {
		rule := fmt.Sprintf("tcp:127.0.0.1:%d-:%d", port, guestPort)
		if len(user) == 0 {
			return append(out, "-netdev", "user,id=jiege0,hostfwd="+rule,
				"-device", "virtio-net-device,netdev=jiege0"), nil
		}
		o, _ := parseNet(out[user[0]])
		o.addHostFwd(rule)
		out[user[0]] = o.String()
	}
	// Rewrite rule by rule; each option value is re-parsed so several
	// rules in one value accumulate.
	for n, r := range rules {
		o, _ := parseNet(out[r.arg])
		h := o.hostfwds()[r.rule]
		fw, _ := parseHostFwd(h)
		fw.hostAddr = "127.0.0.1"
		if n == main {
			fw.hostPort = port
		} else {
			p, err := free()
			if err != nil {
				return nil, err
			}
			fw.hostPort = p
		}
		o.setHostFwd(r.rule, fw.String())
		out[r.arg] = o.String()
	}
	return out, nil
}

func informational(args []string) bool {
	for i, a := range args {
		switch strings.TrimPrefix(a, "-") {
		case "version", "-version", "help", "-help", "h":
			return true
		}
		if i > 0 && strings.HasPrefix(args[i-1], "-") && (a == "help" || a == "?" || strings.HasSuffix(a, ",help")) {
			return true
		}
	}
	return false
}

// netOption reports whether a QEMU option takes a network backend value.
func netOption(a string) bool {
	switch strings.TrimPrefix(a, "-") {
	case "netdev", "-netdev", "nic", "-nic", "net", "-net":
		return true
	}
	return false
}

// netOpts is one option value, either QEMU's key=value list or JSON.
type netOpts struct {
	kv   []string       // key=value list elements, ",," escapes kept
	json map[string]any // JSON form
}

func parseNet(v string) (*netOpts, error) {
	if strings.HasPrefix(strings.TrimSpace(v), "{") {
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			return nil, fmt.Errorf("bad JSON netdev: %w", err)
		}
		return &netOpts{json: m}, nil
	}
	return &netOpts{kv: splitOpts(v)}, nil
}

// splitOpts splits a QEMU option list on commas; ",," is an escaped comma
// and stays inside its element.
func splitOpts(s string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			if i+1 < len(s) && s[i+1] == ',' {
				cur.WriteString(",,")
				i++
				continue
			}
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(s[i])
	}
	return append(parts, cur.String())
}

func (o *netOpts) typ() string {
	if o.json != nil {
		t, _ := o.json["type"].(string)
		return t
	}
	for i, e := range o.kv {
		if k, v, ok := strings.Cut(e, "="); ok {
			if k == "type" {
				return v
			}
		} else if i == 0 {
			return e // the implied key of the first element is "type"
		}
	}
	return ""
}

func (o *netOpts) hostfwds() []string {
	var r []string
	if o.json != nil {
		list, _ := o.json["hostfwd"].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			s, _ := m["str"].(string)
			r = append(r, s)
		}
		return r
	}
	for _, e := range o.kv {
		if v, ok := strings.CutPrefix(e, "hostfwd="); ok {
			r = append(r, v)
		}
	}
	return r
}

func (o *netOpts) setHostFwd(n int, rule string) {
	if o.json != nil {
		o.json["hostfwd"].([]any)[n] = map[string]any{"str": rule}
		return
	}
	for i, e := range o.kv {
		if strings.HasPrefix(e, "hostfwd=") {
			if n == 0 {
				o.kv[i] = "hostfwd=" + rule
				return
			}
			n--
		}
	}
}

func (o *netOpts) addHostFwd(rule string) {
	if o.json != nil {
		list, _ := o.json["hostfwd"].([]any)
		o.json["hostfwd"] = append(list, map[string]any{"str": rule})
		return
	}
	o.kv = append(o.kv, "hostfwd="+rule)
}

func (o *netOpts) String() string {
	if o.json != nil {
		b, _ := json.Marshal(o.json)
		return string(b)
	}
	return strings.Join(o.kv, ",")
}

// hostFwd is one rule: [tcp|udp]:[hostaddr]:hostport-[guestaddr]:guestport.
type hostFwd struct {
	udp       bool
	hostAddr  string
	hostPort  int
	guestAddr string
	guestPort int
}

func parseHostFwd(s string) (hostFwd, error) {
	var fw hostFwd
	bad := fmt.Errorf("bad hostfwd rule %q", s)
	proto, rest, ok := strings.Cut(s, ":")
	if !ok {
		return fw, bad
	}
	switch proto {
	case "", "tcp":
	case "udp":
		fw.udp = true
	default:
		return fw, bad
	}
	host, guest, ok := strings.Cut(rest, "-")
	if !ok {
		return fw, bad
	}
	var err error
	if fw.hostAddr, fw.hostPort, err = addrPort(host); err != nil {
		return fw, bad
	}
	if fw.guestAddr, fw.guestPort, err = addrPort(guest); err != nil {
		return fw, bad
	}
	return fw, nil
}

func addrPort(s string) (string, int, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("no port")
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil || p < 0 || p > 65535 {
		return "", 0, fmt.Errorf("bad port")
	}
	return s[:i], p, nil
}

func (fw hostFwd) String() string {
	proto := "tcp"
	if fw.udp {
		proto = "udp"
	}
	return fmt.Sprintf("%s:%s:%d-%s:%d", proto, fw.hostAddr, fw.hostPort, fw.guestAddr, fw.guestPort)
}

// mainRule finds the TCP hostfwd rule of a user netdev that forwards to
// guestPort, or the only TCP rule whatever its guest port, as Rewrite
// picks it. optIndex is the index of the option's value in args.
func mainRule(args []string, guestPort int) (fw hostFwd, optIndex int, ok bool) {
	type found struct {
		fw hostFwd
		at int
	}
	var all []found
	for i := 0; i+1 < len(args); i++ {
		if !netOption(args[i]) {
			continue
		}
		i++
		o, err := parseNet(args[i])
		if err != nil || o.typ() != "user" {
			continue
		}
		for _, h := range o.hostfwds() {
			if f, err := parseHostFwd(h); err == nil && !f.udp {
				all = append(all, found{f, i})
			}
		}
	}
	for _, f := range all {
		if f.fw.guestPort == guestPort {
			return f.fw, f.at, true
		}
	}
	if len(all) == 1 {
		return all[0].fw, all[0].at, true
	}
	return hostFwd{}, 0, false
}

// ForwardedPort is the host address and port that a QEMU command line
// forwards to guestPort (what an attempt's QEMU that jiege could not
// rewrite listens on), ok false when it forwards none.
func ForwardedPort(args []string, guestPort int) (addr string, port int, ok bool) {
	fw, _, ok := mainRule(args, guestPort)
	if !ok {
		return "", 0, false
	}
	addr = fw.hostAddr
	if addr == "" || addr == "0.0.0.0" {
		addr = "127.0.0.1"
	}
	return addr, fw.hostPort, true
}

// captureLen is how many bytes of each frame the capture keeps: the
// Ethernet, IPv4 and TCP headers with options, not the payload, so that
// a long run's capture stays small.
const captureLen = 96

// WithCapture adds a packet capture (QEMU's filter-dump, pcap) of the
// user netdev that carries the rule to guestPort, written to file. It
// needs a -netdev with an id: -nic and -net name theirs internally, and
// then the arguments come back unchanged with ok false.
func WithCapture(args []string, guestPort int, file string) ([]string, bool) {
	_, at, ok := mainRule(args, guestPort)
	if !ok || strings.TrimPrefix(args[at-1], "-") != "netdev" && strings.TrimPrefix(args[at-1], "-") != "-netdev" {
		return args, false
	}
	o, _ := parseNet(args[at])
	var id string
	if o.json != nil {
		id, _ = o.json["id"].(string)
	} else {
		for _, e := range o.kv {
			if v, found := strings.CutPrefix(e, "id="); found {
				id = v
			}
		}
	}
	if id == "" {
		return args, false
	}
	dump := "filter-dump,id=jiegedump,netdev=" + id + ",maxlen=" + strconv.Itoa(captureLen) + ",file=" + strings.ReplaceAll(file, ",", ",,")
	return append(slices.Clone(args), "-object", dump), true
}

// WithExtra applies the extra QEMU arguments an operator gives an
// attempt (a manifest's qemu_args, --qemu-arg): an option QEMU takes
// once (-m, -smp, -cpu, -machine, ...) that the command line already has
// gets the new value, any other is appended. Options are taken as "-opt
// value" pairs unless the next item starts with '-'.
func WithExtra(args, extra []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(extra); i++ {
		opt := extra[i]
		var val []string
		if i+1 < len(extra) && !strings.HasPrefix(extra[i+1], "-") {
			val = []string{extra[i+1]}
			i++
		}
		norm := "-" + strings.TrimLeft(opt, "-")
		at := slices.IndexFunc(out, func(a string) bool { return strings.HasPrefix(a, "-") && "-"+strings.TrimLeft(a, "-") == norm })
		if singleOption[norm] && at >= 0 && len(val) == 1 && at+1 < len(out) && !strings.HasPrefix(out[at+1], "-") {
			out[at+1] = val[0]
			continue
		}
		out = append(out, opt)
		out = append(out, val...)
	}
	return out
}

// singleOption lists the QEMU options whose last value wins, which
// WithExtra replaces rather than repeats.
var singleOption = map[string]bool{"-m": true, "-smp": true, "-cpu": true, "-machine": true, "-M": true,
	"-accel": true, "-bios": true, "-kernel": true, "-initrd": true, "-append": true}
