#!/usr/bin/bash
# redis-benchmark -q -n 20000 (every one of its default tests) against
# redis-server on the same machine over TCP to 127.0.0.1, the same run on
# our kernel and on Debian's Linux (whose /init finds lo down: busybox
# brings it up).
cd /tmp 2>/dev/null || cd /
/usr/bin/busybox ip link set lo up || echo "bench: no loopback"
redis-server --port 6390 --bind 127.0.0.1 --save '' --appendonly no --logfile /redis.log &
for i in $(seq 1 300); do
	[ "$(redis-cli -p 6390 ping 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
echo "bench: tcp 127.0.0.1"
redis-benchmark -q -n 20000 -h 127.0.0.1 -p 6390 | tr '\r' '\n' | awk '/requests per second/'
echo "bench: status ${PIPESTATUS[0]}"
redis-cli -p 6390 SHUTDOWN NOSAVE
wait
echo "bench: done"
