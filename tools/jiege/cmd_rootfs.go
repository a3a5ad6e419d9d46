package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

func newFlags(name, args string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: jiege %s %s\n\nflags:\n%s", name, args, fs.FlagUsages())
	}
	return fs
}

// parse parses flags; --help is a pass, anything else wrong a usage error.
func parse(fs *pflag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return true, nil
		}
		return false, usageErr("%v", err)
	}
	return false, nil
}

func cmdRootfs(ctx context.Context, args []string) error {
	fs := newFlags("rootfs", "[--flavor ours|linux | --packages PKG,...] [--out FILE] [--nonce]")
	var o rootfs.Options
	var flavor, initFile string
	fs.StringVar(&flavor, "flavor", "ours", "ours (our kernel) or linux (adds busybox, virtio modules and /init for Debian's Linux)")
	fs.StringSliceVar(&o.Packages, "packages", nil, "a root filesystem of these Debian packages and their dependencies (pinned in rootfs.lock on first use)")
	fs.StringVar(&o.Out, "out", "", "write the cpio archive here (default: the cache under the build directory)")
	fs.BoolVar(&o.Nonce, "nonce", false, "append a fresh random nonce file to a per-run copy of the archive")
	fs.StringVar(&o.BuildDir, "build-dir", "", "cache directory (default: build/ of the source tree)")
	fs.StringVar(&o.Mirror, "mirror", "", "Debian mirror URL (default: read from the host's apt sources)")
	fs.BoolVar(&o.UpdateLock, "update-lock", false, "re-resolve every package from the mirror and rewrite rootfs.lock")
	fs.StringVar(&initFile, "init", "", "linux flavor: replace /init with this file")
	quiet := fs.BoolP("quiet", "q", false, "no progress output")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("rootfs: unexpected argument %q", fs.Arg(0))
	}
	o.Flavor = rootfs.Flavor(flavor)
	if len(o.Packages) > 0 {
		if fs.Changed("flavor") && o.Flavor != rootfs.Packages {
			return usageErr("--packages builds the packages flavor, not %q", flavor)
		}
		if _, err := rootfs.PackageSet(o.Packages); err != nil {
			return usageErr("--packages: %v", err)
		}
		o.Flavor = rootfs.Packages
	} else if o.Flavor == rootfs.Packages {
		return usageErr("--flavor packages needs --packages")
	}
	if o.Flavor != rootfs.Ours && o.Flavor != rootfs.Linux && o.Flavor != rootfs.Packages {
		return usageErr("--flavor %q: want ours or linux (or --packages)", flavor)
	}
	if initFile != "" {
		b, err := os.ReadFile(initFile)
		if err != nil {
			return usageErr("--init: %v", err)
		}
		o.Init = b
	}
	if !*quiet {
		o.Log = os.Stderr
	}
	img, err := rootfs.Build(ctx, o)
	if err != nil {
		return envErr(err)
	}
	fmt.Printf("rootfs (%s): %s\n", o.Flavor, img.CPIO)
	fmt.Printf("tree:    %s\n", img.Dir)
	if img.Kernel != "" {
		fmt.Printf("kernel:  %s\n", img.Kernel)
	}
	if o.Flavor == rootfs.Packages {
		for _, e := range img.Packages {
			fmt.Printf("package: %s %s\n", e.Package, e.Version)
		}
		return nil
	}
	fmt.Printf("nginx:   %s\n", img.NginxVersion)
	fmt.Printf("content: %d files", len(img.Files))
	if img.Nonce != nil {
		fmt.Printf(", nonce %s", img.Nonce.URLPath)
	}
	fmt.Println()
	return nil
}
