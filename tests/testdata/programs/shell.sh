# One script for busybox sh, dash and bash (POSIX only): the test runs it on
# the kernel and under qemu-riscv64 and compares every line and the exit
# status. Nothing here may depend on pids, times or absolute paths.
trap 'echo "exit trap: status $?"' EXIT
busybox mkdir -p work && cd work || exit 90

echo "== pipes"
echo "gamma alpha beta" | busybox tr ' ' '\n' | busybox sort | busybox head -n 2
printf 'a\nb\nc\n' | while read -r l; do echo "line $l"; done
echo "pipeline status: $(false | true; echo $?)"

echo "== redirections"
echo one > f.txt
echo two >> f.txt
busybox cat < f.txt
busybox wc -l < f.txt | busybox tr -d ' '
{ echo to-stderr >&2; } 2> err.txt
echo "stderr file: $(busybox cat err.txt)"
exec 3> fd3.txt
echo via-fd3 >&3
exec 3>&-
busybox cat fd3.txt
busybox cat missing.txt 2>/dev/null || echo "cat missing: status $?"
: > empty.txt
[ -s empty.txt ] || echo "empty file is empty"

busybox mkfifo pipe.fifo
{ echo "through a fifo" > pipe.fifo; } &
busybox cat pipe.fifo
wait

echo "== command substitution"
n=$(echo "a b c" | busybox wc -w)
echo "words: $((n + 0))"
nested=$(echo "outer $(echo inner)")
echo "$nested"
echo "backticks: `echo old style`"
lines=$(printf 'x\ny\n\n\n')
echo "trailing newlines stripped: [$lines]"

echo "== subshells"
x=outer
(x=inner; echo "in subshell: $x"; exit 4)
echo "subshell status: $? x=$x"
(cd / && echo "subshell cd: $(busybox basename "$PWD")x")
echo "cwd kept: $(busybox basename "$PWD")"
( echo sub-a; echo sub-b ) | busybox sort -r

echo "== here-documents"
busybox cat <<END
here $x
  indented $((6 * 7))
END
busybox cat <<'END'
literal $x $(not run)
END
while read -r k v; do
	echo "key=$k value=$v"
done <<END
one 1
two 2
END

echo "== read"
read -r first rest <<END
alpha beta gamma
END
echo "first=$first rest=$rest"
echo "k1=v1" > kv.txt
IFS== read -r key val < kv.txt
echo "key=$key val=$val"
printf 'no newline' | { read -r partial; echo "read status $? partial=$partial"; }

echo "== background jobs and wait"
(busybox sleep 0.3; echo slow > bg1.txt) &
p1=$!
(echo fast > bg2.txt; exit 5) &
p2=$!
wait $p2
echo "wait fast: $?"
wait $p1
echo "wait slow: $?"
busybox cat bg1.txt bg2.txt
for i in 1 2 3; do (busybox sleep 0.1; exit $i) & done
wait
echo "wait all: $?"
busybox sh -c 'echo ready > ready.txt; exec busybox sleep 5' &
p3=$!
until [ -s ready.txt ]; do busybox sleep 0.05; done
kill $p3
wait $p3 2>/dev/null
echo "killed job: $?"

echo "== trap"
trap 'echo "got USR1"' USR1
kill -USR1 $$
echo "after USR1"
trap 'echo "got TERM"; term=1' TERM
kill -TERM $$
echo "term=$term"
trap - USR1
(trap 'echo "subshell HUP"; exit 9' HUP; kill -HUP $(busybox sh -c 'echo $PPID'); echo not-reached)
echo "subshell trap status: $?"

echo "== functions and loops"
count() { c=0; for w in "$@"; do c=$((c + 1)); done; echo "$c"; return 3; }
count a "b c" d
echo "function status: $?"
i=0
while [ $i -lt 3 ]; do i=$((i + 1)); done
echo "i=$i"
case "$i" in 3) echo "case 3";; *) echo "case other";; esac

echo "== files and users"
umask 027
: > mode.txt
echo "umask 027 makes $(busybox stat -c %a mode.txt)"
busybox ln -s mode.txt link.txt
[ -L link.txt ] && [ -f link.txt ] && echo "symlink to a file"
busybox mkdir -p d/e && busybox touch d/e/f && echo "found: $(busybox find d -type f)"
busybox touch suid && busybox chmod 4755 suid && busybox chmod g+s suid
echo "chmod 4755 g+s: $(busybox stat -c %a suid), /tmp: $(busybox stat -c %a /tmp)"
busybox mkdir real && busybox ln -s real alias
(cd alias && echo "pwd -P through a link: $(busybox basename "$(pwd -P)")")
echo "stdin is $(busybox readlink /proc/self/fd/0 < /dev/null)"
echo "uid 0 is $(busybox awk -F: '$3 == 0 { print $1 }' /etc/passwd)"
awk 'BEGIN { print "awk is an alternative" }'
sh -c 'echo "sh runs: $0"' name
(set -e; false; echo not-reached)
echo "set -e subshell: $?"

echo "== exec and exit"
busybox sh -c 'exit 6'
echo "child status: $?"
echo end
exit 7
