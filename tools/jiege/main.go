// Command jiege builds the nginx root filesystem, boots kernels under QEMU,
// verifies that they really serve nginx, benchmarks them against Debian's
// Linux, compares attempts, and checks itself against negative controls.
//
// Exit status: 0 pass, 1 fail, 2 usage or environment error (including an
// interrupt). No QEMU started by jiege outlives it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/jiege-go/jiege/tools/jiege/internal/attempt"
)

// Exit statuses.
const (
	exitPass  = 0
	exitFail  = 1
	exitUsage = 2
)

// exitError carries an exit status to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, args...)}
}

func envErr(err error) error { return &exitError{exitUsage, err} }

// errFailed reports a verdict of fail; its details were already printed.
var errFailed = &exitError{exitFail, errors.New("FAIL")}

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string) error
}

var commands = []command{
	{"rootfs", "build the nginx root filesystem (cpio)", cmdRootfs},
	{"run", "boot a kernel with the rootfs and print its URL; stays until Ctrl-C", cmdRun},
	{"verify", "run the verification stages against a kernel or an attempt", cmdVerify},
	{"bench", "benchmark targets: req/s, latency, transfer, boot time", cmdBench},
	{"profile", "profile our kernel under the bench's load; writes a pprof file", cmdProfile},
	{"compare", "verify and bench the attempts of a manifest; leaderboard", cmdCompare},
	{"merge", "join the partial leaderboards of compare --shard into one", cmdMerge},
	{"selfcheck", "prove the verifier: linux passes, negative controls fail at their stage", cmdSelfcheck},
	{"repeatability", "selfcheck N times and the fingerprint's random requests on Linux against the oracle; report", cmdRepeatability},
	{"ltp", "run LTP's syscall tests on our kernel and on Debian's Linux; result files", cmdLTP},
	{"replay", "verify an attempt's git history: the first commit that boots, serves, passes", cmdReplay},
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: jiege COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "\n'jiege COMMAND --help' lists a command's flags.\nexit status: 0 pass, 1 fail, 2 usage or environment error\n")
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == attempt.ShimArg {
		err := attempt.Shim(os.Args[2:])
		fmt.Fprintln(os.Stderr, "jiege:", err)
		os.Exit(exitUsage)
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		usage()
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		return exitPass
	}
	var cmd *command
	for i := range commands {
		if commands[i].name == args[0] {
			cmd = &commands[i]
		}
	}
	if cmd == nil {
		fmt.Fprintf(os.Stderr, "jiege: unknown command %q\n", args[0])
		usage()
		return exitUsage
	}

	// The first SIGINT/SIGTERM cancels ctx: every QEMU is stopped by its
	// context watcher and the command unwinds. A second one stops them
	// right here and exits.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "\njiege: %v: stopping QEMU\n", s)
		cancel()
		<-sigs
		stopEverything()
		os.Exit(exitUsage)
	}()

	err := cmd.run(ctx, args[1:])
	stopEverything()
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "jiege: interrupted")
		return exitUsage
	}
	if err == nil {
		return exitPass
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee != errFailed {
			fmt.Fprintln(os.Stderr, "jiege:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "jiege:", err)
	return exitUsage
}
