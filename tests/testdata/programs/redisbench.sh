#!/usr/bin/bash
# redis-benchmark -q -n 20000 of the commands the program test uses (all
# twenty of its tests take too long on a shared machine) against
# redis-server on the same machine, over a Unix socket (Linux booted with
# this as /init has no loopback interface up) and, when BENCH_TCP is set,
# over 127.0.0.1.
cd /tmp 2>/dev/null || cd /
redis-server --port 6390 --bind 127.0.0.1 --save '' --appendonly no \
	--unixsocket /redis.sock --logfile /redis.log &
for i in $(seq 1 300); do
	[ "$(redis-cli -s /redis.sock ping 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
echo "bench: unix socket"
redis-benchmark -q -n 20000 -t set,get,incr,lpush -s /redis.sock | tr '\r' '\n' | awk '/requests per second/'
if [ -n "$BENCH_TCP" ]; then
	echo "bench: tcp 127.0.0.1"
	redis-benchmark -q -n 20000 -t set,get,incr,lpush -h 127.0.0.1 -p 6390 | tr '\r' '\n' | awk '/requests per second/'
fi
redis-cli -s /redis.sock SHUTDOWN NOSAVE
wait
echo "bench: done"
