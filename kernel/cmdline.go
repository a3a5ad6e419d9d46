package kernel

import (
	"fmt"
	"strings"
)

// Cmdline is the parsed kernel command line (bootargs), Linux style:
// space-separated words, key=value or bare flags.
type Cmdline struct {
	Console  string // console=ttyS0 (the only console there is)
	Trace    map[string]bool
	Selftest bool
	NetEcho  bool     // netecho: a TCP echo service on port 7, to test the network path
	Init     string   // init=PATH: the first program, /init by default
	InitArgs []string // words after "--": its arguments
	Unknown  []string
}

// ParseCmdline parses bootargs. Unknown words are kept, not fatal, as Linux does.
func ParseCmdline(s string) (Cmdline, error) {
	c := Cmdline{Trace: map[string]bool{}, Init: "/init"}
	words := strings.Fields(s)
	for i, w := range words {
		if w == "--" {
			c.InitArgs = words[i+1:]
			break
		}
		key, val, hasVal := strings.Cut(w, "=")
		switch key {
		case "console":
			c.Console = val
		case "trace":
			if !hasVal || val == "" {
				return c, fmt.Errorf("trace= needs a list, e.g. trace=syscall")
			}
			for _, t := range strings.Split(val, ",") {
				if t != "syscall" {
					return c, fmt.Errorf("trace=%s: unknown trace %q (known: syscall)", val, t)
				}
				c.Trace[t] = true
			}
		case "selftest":
			c.Selftest = true
		case "netecho":
			c.NetEcho = true
		case "init":
			if !strings.HasPrefix(val, "/") {
				return c, fmt.Errorf("init=%s: not an absolute path", val)
			}
			c.Init = val
		default:
			c.Unknown = append(c.Unknown, w)
		}
	}
	return c, nil
}
