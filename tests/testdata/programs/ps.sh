# busybox ps, free and top as a user tries them, run on the kernel and on
# Debian's Linux: the processes of this script with their states (Linux's
# kernel threads, [named], left out), and the shape of free's and top's
# summaries (their numbers differ between machines).
bb=busybox
$bb mkdir -p /proc /tmp
$bb mount -t proc proc /proc
$bb mount -t devtmpfs devtmpfs /dev 2>/dev/null # Linux: /dev/null; here /dev is there at boot
$bb sleep 30 &
$bb sleep 1
$bb ps -o stat,comm,args > /tmp/ps.out
echo "== ps"
$bb grep -v '\[' /tmp/ps.out
kill $!
echo "== free"
$bb free | $bb sed -e 's/[0-9][0-9]*/N/g' -e 's/  */ /g'
echo "== top"
$bb top -b -n 1 > /tmp/top.out
$bb head -4 /tmp/top.out | $bb sed -e 's/[0-9][0-9.]*/N/g' -e 's/  */ /g'
echo "== top lists itself"
$bb grep -c 'busybox top -b -n 1' /tmp/top.out
