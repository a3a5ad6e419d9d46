// Command bootdisk writes a disk image from which U-Boot boots the kernel
// as from a board's SD card: an MBR with one bootable Linux partition
// holding an ext4 file system (made by e2fsprogs' mke2fs -d) with the
// Image, the optional initramfs and extlinux/extlinux.conf, which U-Boot's
// distro boot finds and follows (booti with the device tree U-Boot got
// from the firmware).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// The partition starts 1 MiB into the disk, as partitioning tools align it.
const (
	sector     = 512
	partOffset = 1 << 20
)

func main() {
	image := flag.String("image", "", "the kernel's Linux Image")
	initrd := flag.String("initrd", "", "initramfs (cpio), optional")
	appendArgs := flag.String("append", "", "kernel command line")
	out := flag.String("out", "", "disk image to write")
	flag.Parse()
	if *image == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: bootdisk -image Image [-initrd rootfs.cpio] [-append ARGS] -out disk.img")
		os.Exit(2)
	}
	if err := write(*image, *initrd, *appendArgs, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bootdisk:", err)
		os.Exit(1)
	}
}

func write(image, initrd, args, out string) error {
	dir, err := os.MkdirTemp("", "bootdisk")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	conf := "default jiege\nlabel jiege\n\tkernel /Image\n"
	size := int64(16 << 20) // room for ext4's own structures
	if err := copyFile(image, filepath.Join(dir, "Image"), &size); err != nil {
		return err
	}
	if initrd != "" {
		if err := copyFile(initrd, filepath.Join(dir, "initrd"), &size); err != nil {
			return err
		}
		conf += "\tinitrd /initrd\n"
	}
	if args != "" { // U-Boot's parser rejects an empty append line
		conf += "\tappend " + args + "\n"
	}
	if err := os.Mkdir(filepath.Join(dir, "extlinux"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "extlinux/extlinux.conf"), []byte(conf), 0o644); err != nil {
		return err
	}
	size = (size + size/8 + partOffset - 1) &^ (partOffset - 1)

	os.Remove(out)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(partOffset + size); err != nil {
		return err
	}
	mbr := make([]byte, sector)
	entry := mbr[446:462]
	entry[0] = 0x80 // bootable: the partition distro boot scans first
	entry[4] = 0x83 // Linux
	binary.LittleEndian.PutUint32(entry[8:], partOffset/sector)
	binary.LittleEndian.PutUint32(entry[12:], uint32(size/sector))
	mbr[510], mbr[511] = 0x55, 0xaa
	if _, err := f.WriteAt(mbr, 0); err != nil {
		return err
	}
	cmd := exec.Command("mke2fs", "-q", "-F", "-t", "ext4", "-L", "jiege", "-d", dir,
		"-E", "offset="+strconv.Itoa(partOffset), out, strconv.FormatInt(size>>10, 10)+"k")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mke2fs (Debian: apt-get install e2fsprogs): %v\n%s", err, b)
	}
	return nil
}

// copyFile copies src to dst and adds its size to total.
func copyFile(src, dst string, total *int64) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	*total += int64(len(b))
	return os.WriteFile(dst, b, 0o644)
}
