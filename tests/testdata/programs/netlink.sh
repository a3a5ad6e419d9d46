# What busybox's network applets and glibc's getifaddrs read about the
# interfaces (netlink route sockets, /proc/net, interface ioctls), run on
# the kernel and on Debian's Linux with the same QEMU user network.
for cmd in "ip addr" "ip -4 addr show dev eth0" "ip link" "ip link show lo" "ip route" \
	"ip -6 route" "ifconfig" "ifconfig lo" "ifconfig eth0" "route -n" \
	"ip link set lo up" "ip link set dev eth0 up" "ifconfig lo up"; do
	echo "== $cmd"
	busybox $cmd 2>&1
	echo "== status $?"
done
echo "== ifaddrs"
/ifaddrs
echo "== status $?"
