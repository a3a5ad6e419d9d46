package rootfs

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// Main implements `jiege rootfs [--out F] [--nonce] [--flavor ours|linux]
// [--mirror URL] [--update-lock] [--build-dir D]`. It prints the archive
// path (and the kernel and nonce when there are any) and returns the exit
// status: 0 built, 1 build failed, 2 usage error.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("jiege rootfs", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	var flavor string
	fs.StringVar(&o.Out, "out", "", "write the archive to `FILE` (default: the cached one)")
	fs.BoolVar(&o.Nonce, "nonce", false, "append a fresh random nonce file under the web root")
	fs.StringVar(&flavor, "flavor", string(Ours), "ours (nginx only) or linux (adds busybox, modules, /init)")
	fs.StringVar(&o.Mirror, "mirror", "", "Debian mirror `URL` (default: from the host's apt sources)")
	fs.BoolVar(&o.UpdateLock, "update-lock", false, "resolve the packages again from the mirror and rewrite rootfs.lock")
	fs.StringVar(&o.BuildDir, "build-dir", "", "cache directory (default: build/ at the module root)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "jiege rootfs: unexpected arguments %v\n", fs.Args())
		return 2
	}
	o.Flavor = Flavor(flavor)
	if o.Flavor != Ours && o.Flavor != Linux {
		fmt.Fprintf(stderr, "jiege rootfs: --flavor must be ours or linux, not %q\n", flavor)
		return 2
	}
	o.Log = stderr
	img, err := Build(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "jiege rootfs: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "initrd: %s\n", img.CPIO)
	if img.Kernel != "" {
		fmt.Fprintf(stdout, "kernel: %s\n", img.Kernel)
	}
	if img.Nonce != nil {
		fmt.Fprintf(stdout, "nonce:  %s (%d bytes, sha256 %s)\n", img.Nonce.URLPath, img.Nonce.Size, img.Nonce.SHA256)
	}
	fmt.Fprintf(stdout, "nginx:  %s\n", img.NginxVersion)
	return 0
}
