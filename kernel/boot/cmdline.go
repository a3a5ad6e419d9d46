package boot

import (
	"fmt"
	"strconv"
	"strings"
)

// Cmdline is the parsed kernel command line (bootargs), Linux style:
// space-separated words (double quotes group words), key=value or bare
// flags.
type Cmdline struct {
	Console  string // console=ttyS0 (the only console there is)
	Trace    map[string]bool
	Selftest bool
	NetEcho  bool     // netecho: a TCP echo service on port 7, to test the network path
	Stats    int      // stats=SECONDS: print the kernel's resources that often (0: never)
	Profile  int      // profile=HZ: sample the running pc that often per hart (0: off)
	Init     string   // init=PATH: the first program, /init by default
	InitArgs []string // words after "--": its arguments
	Unknown  []string
}

// maxProfileHz bounds profile=: a sample costs a trap, and above a few
// thousand a second the profile measures mostly itself.
const maxProfileHz = 10000

// ParseCmdline parses bootargs. Unknown words are kept, not fatal, as Linux does.
func ParseCmdline(s string) (Cmdline, error) {
	c := Cmdline{Trace: map[string]bool{}, Init: "/init"}
	words := splitWords(s)
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
		case "stats":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return c, fmt.Errorf("stats=%s: want a number of seconds", val)
			}
			c.Stats = n
		case "profile":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 || n > maxProfileHz {
				return c, fmt.Errorf("profile=%s: want samples per second, 1 to %d", val, maxProfileHz)
			}
			c.Profile = n
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

// splitWords splits a command line as Linux's next_arg does: at spaces
// outside double quotes, which group words and are dropped (no escapes;
// an unterminated quote runs to the end).
func splitWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t' || r == '\n') && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}
