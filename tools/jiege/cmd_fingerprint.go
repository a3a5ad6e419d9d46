package main

import (
	"context"
	"fmt"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// fingerprint runs the fingerprint stage with a seed that the report
// records (--fingerprint-seed, else a fresh one). An attempt, whose root
// filesystem jiege does not know, gets an oracle too: the nginx of our
// root filesystem serving, as its only file, the attempt's own "/" with
// the same bytes and mtime.
func (v *verifier) fingerprint(ctx context.Context, t *target, pt probe.Target, res *report.Verify) report.Stage {
	pt.Seed = v.seed
	if pt.Seed == 0 {
		pt.Seed = probe.NewSeed()
	}
	res.FingerprintSeed = pt.Seed
	if t.image == nil && !v.noOracle {
		stop, addr, err := v.attemptOracle(ctx, pt.Addr)
		if err != nil {
			return report.Failf(report.StageFingerprint, report.ClassEnvironment, 0, "oracle for the attempt: %v", err)
		}
		defer stop()
		pt.Oracle, pt.OwnRoot = addr, true
	}
	return probe.Fingerprint(ctx, pt)
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
