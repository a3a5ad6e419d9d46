package rootfs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// fetcher keeps the downloaded package files under <root>/debs, shared by
// every flavour and variant, and talks to apt only when one is missing.
type fetcher struct {
	root   string
	mirror string
	log    io.Writer
	a      *apt
}

// apt returns the isolated apt, updating its package lists on first use.
func (f *fetcher) apt(ctx context.Context) (*apt, error) {
	if f.a != nil {
		return f.a, nil
	}
	mirror := f.mirror
	if mirror == "" {
		m, err := HostMirror("/etc/apt")
		if err != nil {
			return nil, err
		}
		mirror = m
	}
	a, err := newApt(filepath.Join(f.root, "apt"), strings.TrimRight(mirror, "/"), f.log)
	if err != nil {
		return nil, err
	}
	if err := a.update(ctx); err != nil {
		return nil, err
	}
	f.a = a
	return a, nil
}

// updateLock re-resolves the whole lock, with the package sets given.
func (f *fetcher) updateLock(ctx context.Context, sets []string) (*Lock, error) {
	a, err := f.apt(ctx)
	if err != nil {
		return nil, err
	}
	return a.resolveAll(ctx, sets)
}

// pinSet resolves one package set and returns its entries.
func (f *fetcher) pinSet(ctx context.Context, set string) ([]LockEntry, error) {
	a, err := f.apt(ctx)
	if err != nil {
		return nil, err
	}
	return a.resolveSet(ctx, set)
}

// ensure makes sure every entry's package file is in the cache and matches
// the lock, downloading the missing ones, and returns their paths by package.
func (f *fetcher) ensure(ctx context.Context, entries []LockEntry) (map[string]string, error) {
	dir := filepath.Join(f.root, "debs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths := map[string]string{}
	var missing []LockEntry
	for _, e := range entries {
		p := filepath.Join(dir, e.Filename())
		paths[e.Package] = p
		if _, err := os.Stat(p); err == nil {
			// Hashing every cached file (about 130 MB at most) takes well
			// under a second and catches a corrupted cache.
			if err := e.VerifyFile(p); err != nil {
				return nil, err
			}
			continue
		}
		missing = append(missing, e)
	}
	if len(missing) == 0 {
		return paths, nil
	}
	a, err := f.apt(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkOffered(ctx, a, missing); err != nil {
		return nil, err
	}
	if err := a.download(ctx, dir, missing); err != nil {
		return nil, err
	}
	for _, e := range missing {
		if err := e.VerifyFile(paths[e.Package]); err != nil {
			os.Remove(paths[e.Package])
			return nil, err
		}
	}
	return paths, nil
}

// checkOffered fails with a clear message when a locked version is gone from
// the mirror (Debian stable's point releases replace versions).
func checkOffered(ctx context.Context, a *apt, es []LockEntry) error {
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Package
	}
	offered, err := a.offered(ctx, names)
	if err != nil {
		return err
	}
	return lockedUnavailable(es, offered)
}

// lockedUnavailable names each entry whose locked version is not among the
// versions the mirror offers.
func lockedUnavailable(es []LockEntry, offered map[string][]string) error {
	var msgs []string
	for _, e := range es {
		found := false
		for _, v := range offered[e.Package] {
			if v == e.Version {
				found = true
			}
		}
		if !found {
			now := strings.Join(offered[e.Package], ", ")
			if now == "" {
				now = "no version at all"
			}
			msgs = append(msgs, fmt.Sprintf("package %s: rootfs.lock has %s, the mirror offers %s", e.Package, e.Version, now))
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s\nthe locked versions can no longer be downloaded; run `jiege rootfs --update-lock` and commit rootfs.lock", strings.Join(msgs, "\n"))
	}
	return nil
}
