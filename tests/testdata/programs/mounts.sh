# busybox mount, df and umount on tmpfs and proc mounts under /mnt, run on
# the kernel and on Debian's Linux; only /mnt's lines are compared (the
# two kernels mount different things at boot).
bb=busybox
$bb mkdir -p /proc /mnt/a /mnt/p /mnt/small
$bb mount -t proc proc /proc
$bb mount -t devtmpfs devtmpfs /dev 2>/dev/null # Linux: /dev/zero; here /dev is there at boot
echo "== mount tmpfs"
$bb mount -t tmpfs -o size=2m,mode=755 scratch /mnt/a; echo "status $?"
echo "== mount proc"
$bb mount -t proc proc /mnt/p; echo "status $?"
echo "== mount"
$bb mount | $bb grep /mnt
echo "== df"
$bb df -k /mnt/a
echo hi > /mnt/a/f
$bb dd if=/dev/zero of=/mnt/a/big bs=64k count=1 2>/dev/null
echo "== df with files"
$bb df -k /mnt/a | $bb tail -1
echo "== stat -f"
$bb stat -f -c '%T %b %S' /mnt/a /mnt/p
echo "== full"
$bb mount -t tmpfs -o size=64k small /mnt/small
$bb dd if=/dev/zero of=/mnt/small/x bs=64k count=2 2>&1 | $bb head -1
echo "== umount busy"
(cd /mnt/a && $bb umount /mnt/a); echo "status $?"
echo "== umount"
$bb umount /mnt/a; echo "status $?"
$bb umount /mnt/p /mnt/small; echo "status $?"
echo "== after"
$bb mount | $bb grep /mnt
$bb ls /mnt/a
$bb umount /mnt/a; echo "status $?"
