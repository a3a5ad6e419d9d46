# Debian's perl, lua5.4 and sqlite3 (a database file) on one job: the test
# runs it with bash on the kernel and under qemu-riscv64 and compares every
# line and the exit status.
set -e
export TZ=UTC LC_ALL=C
trap 'echo "exit trap: status $?"' EXIT
mkdir work && cd work

echo "== perl"
cat > words.txt <<'TEXT'
the quick brown fox jumps over the lazy dog
the dog sleeps; the fox runs
TEXT
perl -e 'print "perl $^V\n"' | cut -d. -f1,2
perl -w <<'PERL'
use strict;
use Digest::MD5 qw(md5_hex);
use POSIX qw(floor);
use List::Util qw(sum max);
my %count;
open(my $in, "<", "words.txt") or die "open: $!";
while (my $line = <$in>) {
	$count{$_}++ for ($line =~ /(\w+)/g);
}
close $in;
for my $w (sort { $count{$b} <=> $count{$a} or $a cmp $b } keys %count) {
	printf "%-6s %d\n", $w, $count{$w};
}
print "sum ", sum(values %count), " max ", max(values %count), "\n";
print "md5 ", md5_hex("jiege"), "\n";
print "floor ", floor(-2.5), " sprintf ", sprintf("%.3e", 1234.5678), "\n";
my @packed = unpack("N n C", pack("N n C", 0xdeadbeef, 513, 7));
print "pack @packed\n";
(my $s = "a-b_c d") =~ s/[-_ ]/+/g;
print "subst $s\n";
open(my $out, ">", "perl.out") or die;
print $out "line $_\n" for 1 .. 1000;
close $out;
print "size ", -s "perl.out", "\n";
open(my $pipe, "-|", "sort", "-r", "words.txt") or die "pipe: $!";
print "piped: $_" while <$pipe>;
close $pipe;
my $pid = fork();
if ($pid == 0) { exit 3 }
waitpid($pid, 0);
print "child status ", $? >> 8, "\n";
my $qx = `echo from a shell`;
print "qx: $qx";
local $SIG{ALRM} = sub { die "alarm\n" };
eval { alarm 1; select(undef, undef, undef, 5); alarm 0; };
print "eval: $@";
my @sorted = sort { $a <=> $b } map { ($_ * 7919) % 1009 } 1 .. 2000;
print "sorted ", join(",", @sorted[0 .. 4]), " .. $sorted[-1]\n";
PERL

echo "== lua"
lua5.4 -v 2>&1 | cut -d' ' -f1,2
lua5.4 - <<'LUA'
local t = {}
for w in io.lines("words.txt") do
	for word in w:gmatch("%a+") do t[word] = (t[word] or 0) + 1 end
end
local keys = {}
for k in pairs(t) do keys[#keys + 1] = k end
table.sort(keys, function(a, b) if t[a] ~= t[b] then return t[a] > t[b] end return a < b end)
for _, k in ipairs(keys) do print(string.format("%-6s %d", k, t[k])) end
local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i * i) end end)
print("coroutine", co(), co(), co())
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print("fib", fib(24))
print("gsub", (("hello world"):gsub("o", "0")))
print("format", string.format("%5.2f|%x|%q", math.pi, 255, "a\nb"))
print("int", 7 // 2, 7 % 3, 2^10, math.maxinteger)
local f = assert(io.open("lua.out", "w"))
for i = 1, 500 do f:write(i, "\n") end
f:close()
local n = 0
for _ in io.lines("lua.out") do n = n + 1 end
print("lines", n)
print("date", os.date("!%Y-%m-%d %H:%M:%S", 86400 * 365))
local p = io.popen("echo from popen")
print("popen", p:read("l"))
p:close()
-- A failing command would show errno: qemu-user leaves ENOSYS there from clone3.
print("exec", os.execute("exit 0"))
print("pcall", pcall(error, "boom"))
local big = {}
for i = 1, 100000 do big[i] = i * 2 end
local sum = 0
for _, v in ipairs(big) do sum = sum + v end
print("sum", sum)
LUA

echo "== sqlite3"
sqlite3 --version | cut -d' ' -f1
perl -e 'print "BEGIN;\n"; printf "INSERT INTO t VALUES (%d, %s, %d, %.2f);\n", $_, "\x27name$_\x27", ($_ * 37) % 100, $_ / 7 for 1 .. 1000; print "COMMIT;\n"' > rows.sql
sqlite3 test.db 'CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, val REAL);'
sqlite3 test.db < rows.sql
sqlite3 test.db <<'SQL'
CREATE INDEX t_grp ON t (grp);
SELECT count(*), sum(grp), round(sum(val), 2) FROM t;
SELECT grp, count(*) FROM t GROUP BY grp ORDER BY count(*) DESC, grp LIMIT 3;
SELECT name FROM t WHERE grp = 42 ORDER BY id LIMIT 3;
UPDATE t SET val = val * 2 WHERE id % 10 = 0;
DELETE FROM t WHERE id > 990;
SELECT count(*), round(max(val), 2) FROM t;
PRAGMA journal_mode;
PRAGMA integrity_check;
SQL
sqlite3 test.db 'BEGIN; INSERT INTO t VALUES (5000, "x", 1, 1); ROLLBACK; SELECT count(*) FROM t;'
sqlite3 -header -csv test.db 'SELECT id, name, grp FROM t WHERE id IN (1, 500, 990);'
sqlite3 test.db 'VACUUM; PRAGMA integrity_check; PRAGMA page_count;'
ls -l test.db | cut -d' ' -f5
ls test.db*

echo "end"
exit 7
