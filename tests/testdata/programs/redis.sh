# Debian's redis-server with redis-cli beside it on the loopback interface:
# SET/GET/INCR/LPUSH, 10,000 keys through --pipe, SAVE. The test runs it
# with bash on the kernel and under qemu-riscv64 and compares every line
# and the exit status.
set -e
export LC_ALL=C
trap 'echo "exit trap: status $?"' EXIT
mkdir work && cd work

redis-server --port 6390 --bind 127.0.0.1 --save '' --appendonly no --dir . \
	--unixsocket "$PWD/redis.sock" --logfile "$PWD/redis.log" &
server=$!
for i in $(seq 1 200); do
	[ "$(redis-cli -p 6390 ping 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
echo "ping: $(redis-cli -p 6390 ping)"
# The console is a terminal, a pipe is not: one output format for both.
rc() { redis-cli -p 6390 --no-raw "$@"; }

echo "== commands"
rc SET greeting "hello from redis"
rc GET greeting
rc INCR counter
rc INCRBY counter 41
rc LPUSH list a b c
rc RPUSH list z
rc LRANGE list 0 -1
rc HSET h f1 v1 f2 v2
rc HGETALL h
rc SADD s x y z x
rc SCARD s
rc ZADD z 3 three 1 one 2 two
rc ZRANGE z 0 -1 WITHSCORES
rc EXPIRE greeting 100
rc PERSIST greeting
rc TYPE list
rc GET missing
rc NOSUCHCOMMAND || true

echo "== 10,000 keys"
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "SET key:%d %d\r\n", i, i * i }' > keys.txt
redis-cli -p 6390 --pipe < keys.txt
rc DBSIZE
rc GET key:0
rc GET key:9999
rc MGET key:1 key:2 key:5000
redis-cli -p 6390 --scan --pattern 'key:99*' | sort | head -5
redis-cli -p 6390 --scan --pattern 'key:*' | wc -l
rc EVAL "local s = 0 for i = 0, 999 do s = s + tonumber(redis.call('GET', 'key:' .. i)) end return s" 0
redis-cli --no-raw -s "$PWD/redis.sock" INCR counter
rc SAVE
ls dump.rdb
rc INFO keyspace | tr -d '\r' | awk NF
rc SHUTDOWN NOSAVE || true
wait $server || echo "server: status $?"
echo "end"
exit 7
