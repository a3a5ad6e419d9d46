package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/jiege/internal/ownnginx"
	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// fingerprint runs the fingerprint stage with a seed that the report
// records (--fingerprint-seed, else a fresh one). An attempt, whose root
// filesystem jiege does not know, gets an oracle too: its own nginx with
// its own configuration when the files its QEMU loads hold them, else
// the nginx of our root filesystem serving, as its only file, the
// attempt's own "/" with the same bytes and mtime. The detail says which.
func (v *verifier) fingerprint(ctx context.Context, t *target, g *guest, pt probe.Target, res *report.Verify) report.Stage {
	pt.Seed = v.seed
	if pt.Seed == 0 {
		pt.Seed = probe.NewSeed()
	}
	res.FingerprintSeed = pt.Seed
	var which string
	ownConfig := false // the oracle is the attempt's nginx with its own configuration
	if t.image == nil && !v.noOracle {
		stop, addr, version, how, err := v.ownOracle(ctx, t, g, pt.Addr)
		if err != nil {
			which = "oracle: jiege's nginx serving the attempt's \"/\" (the attempt's own nginx cannot be the oracle: " + err.Error() + "); "
			if stop, addr, err = v.attemptOracle(ctx, pt.Addr); err != nil {
				return report.Failf(report.StageFingerprint, report.ClassEnvironment, 0, "oracle for the attempt: %v", err)
			}
		} else {
			which, pt.NginxVersion, ownConfig = "oracle: "+how+"; ", version, true
		}
		defer stop()
		pt.Oracle, pt.OwnRoot = addr, true
	}
	s := probe.Fingerprint(ctx, pt)
	s.Detail = which + s.Detail
	if s.Passed() && ownConfig {
		return v.deviations(ctx, s, pt.Addr, res)
	}
	return s
}

// deviations records how the configuration of an attempt's nginx, which
// passed the fingerprint against its own binary and configuration,
// deviates from jiege's: the verdict is then a pass with deviations, or
// with --strict-config a failure.
func (v *verifier) deviations(ctx context.Context, s report.Stage, addr string, res *report.Verify) report.Stage {
	devs, err := probe.Deviations(ctx, addr)
	if err != nil {
		s.Detail += fmt.Sprintf("; its configuration's deviations from jiege's not read: %v", err)
		return s
	}
	if len(devs) == 0 {
		return s
	}
	res.Deviations = devs
	if v.strictConfig {
		return report.Failf(s.Name, report.ClassConfigDeviation, s.Duration.D(),
			"%s; with --strict-config, a configuration that deviates from jiege's fails: %s", s.Detail, strings.Join(devs, ", "))
	}
	s.Detail += "; its configuration deviates from jiege's: " + strings.Join(devs, ", ")
	return s
}

// ownOracle starts the attempt's own nginx, found in the files its QEMUs
// load, under qemu-riscv64 with the attempt's configuration; how says
// which binary it is and whose build: Debian's, Alpine's or unknown. An
// nginx carved out of a kernel image serves the attempt's "/" as the
// guest at guestAddr does.
func (v *verifier) ownOracle(ctx context.Context, t *target, g *guest, guestAddr string) (stop func() error, addr, version, how string, err error) {
	var srcs []ownnginx.Source
	for _, f := range g.bootFiles() {
		if f.Option != "-pflash" { // firmware
			srcs = append(srcs, ownnginx.Source{Path: f.Path, Option: f.Option})
		}
	}
	tree, err := ownnginx.Find(srcs)
	if err != nil {
		return nil, "", "", "", err
	}
	defer func() {
		if err != nil {
			tree.Remove()
		}
	}()
	b, err := tree.Inspect(ctx)
	if err != nil {
		return nil, "", "", "", err
	}
	var deb ownnginx.Debian
	if img, ierr := rootfs.Build(ctx, v.rootfsOptions(rootfs.Ours, nil)); ierr == nil {
		deb = ownnginx.Debian{Version: img.NginxVersion, Binary: filepath.Join(img.Dir, "usr/sbin/nginx")}
	}
	official := tree.Official(b, deb)
	if t.att != nil && !strings.HasPrefix(official, "the official Debian build") {
		if alpine, ok := tree.Alpine(t.att.Dir); ok {
			official = alpine
		}
	}
	port, err := qemu.FreePort()
	if err != nil {
		return nil, "", "", "", err
	}
	guestPort := 80
	if t.att != nil && t.att.GuestPort != 0 {
		guestPort = t.att.GuestPort
	}
	from := fmt.Sprintf("/%s from %s %s", tree.Nginx, tree.Source.Option, tree.Source.Path)
	if tree.Carved {
		from = fmt.Sprintf("carved with its loader and libraries out of %s %s", tree.Source.Option, tree.Source.Path)
		body, mtime, err := probe.Index(ctx, guestAddr)
		if err != nil {
			return nil, "", "", "", fmt.Errorf("GET / from the attempt: %v", err)
		}
		if err := tree.PlaceIndex(b, guestPort, body, mtime); err != nil {
			return nil, "", "", "", err
		}
	}
	stopNginx, err := tree.Start(ctx, b, guestPort, port)
	if err != nil {
		return nil, "", "", "", err
	}
	stop = func() error {
		err := stopNginx()
		tree.Remove()
		return err
	}
	how = fmt.Sprintf("the attempt's own nginx %s (%s; %s) with its own configuration %s", b.Version, from, official, b.ConfPath)
	return stop, fmt.Sprintf("127.0.0.1:%d", port), b.Version, how, nil
}

// attemptOracle learns "/" from the attempt at addr and starts an oracle
// that serves the same bytes with the same mtime.
func (v *verifier) attemptOracle(ctx context.Context, addr string) (func() error, string, error) {
	body, mtime, err := probe.Index(ctx, addr)
	if err != nil {
		return nil, "", fmt.Errorf("GET / from the attempt: %v", err)
	}
	img, err := rootfs.Build(ctx, v.rootfsOptions(rootfs.Ours, nil))
	if err != nil {
		return nil, "", err
	}
	port, err := qemu.FreePort()
	if err != nil {
		return nil, "", err
	}
	stop, err := rootfs.StartOracleWith(ctx, img, port, rootfs.OracleOptions{Index: body, IndexModTime: mtime})
	if err != nil {
		return nil, "", err
	}
	return stop, fmt.Sprintf("127.0.0.1:%d", port), nil
}
