# Debian's coreutils, findutils, gzip, xz and make on one job: the test runs
# it with bash on the kernel and under qemu-riscv64 and compares every line
# and the exit status. big.bin (10 MiB) is the test's, beside the script.
# Sizes that depend on the file system (directories, ls's "total") are
# masked; everything else is printed as the programs print it.
set -e
export TZ=UTC LC_ALL=C
trap 'echo "exit trap: status $?"' EXIT
mkdir work && cd work

# Directory sizes and block totals belong to the file system, not the kernel;
# ".." is the work directory, whose time is when this run made it (the two
# runs may fall in different minutes).
mask_dirs() {
	while read -r mode links user group size rest; do
		case $mode in
		d*) size=DIR ;;
		total) echo total; continue ;;
		esac
		case $rest in
		*" ..") rest="TIME .." ;;
		esac
		echo "$mode $links $user $group $size $rest"
	done
}

echo "== a tree"
mkdir -p src/a/b src/c
printf 'alpha\n' > src/a/one.txt
printf 'beta beta\n' > src/a/b/two.txt
seq 1 1000 > src/c/numbers.txt
ln -s ../a/one.txt src/c/link.txt
ln src/a/one.txt src/hard.txt
chmod 640 src/a/b/two.txt
chmod 750 src/c
mkfifo src/fifo
find src -exec touch -h -d '2024-01-02 03:04:05' {} +
ls -la --time-style=long-iso src src/a src/c | mask_dirs

echo "== find"
find src | sort
find src -type f -printf '%p %s %m %n\n' | sort
find src -type l -printf '%p -> %l\n'
find src -name '*.txt' -newer src/a/one.txt | sort
find src -type d -perm -o=x | sort
find src -type f -size +1k -print

echo "== cp -a"
cp -a src copy
ls -laR --time-style=long-iso copy | mask_dirs
stat -c '%n %a %h %s %Y %F' copy/a/one.txt copy/hard.txt copy/c/link.txt copy/fifo
[ "$(stat -c %i copy/a/one.txt)" = "$(stat -c %i copy/hard.txt)" ] && echo "cp -a kept the hard link"

echo "== du"
# -l: du counts a hard link once, where readdir order (the file system's) meets it first.
du -abl src | sort -k2 | while read -r size path; do
	[ -d "$path" ] && size=DIR
	echo "$size $path"
done
du -k ../big.bin
du -b ../big.bin

echo "== sort"
awk 'BEGIN { x = 7; for (i = 0; i < 5000; i++) { x = (x * 1103515245 + 12345) % 2147483648; printf "%d %s\n", x % 1000, substr("kilo lima mike nova oscar papa", (x % 6) * 5 + 1, 4) } }' > data.txt
sort data.txt | sha256sum
sort -n data.txt | head -3
sort -k2,2 -k1,1nr data.txt | head -3
sort -u -k2,2 data.txt | wc -l
sort -nr data.txt | uniq -c | sort -nr -k1,1 -k2,2n | head -3
sort -S 1M -T . data.txt | sha256sum

echo "== sha256sum"
sha256sum src/a/one.txt src/c/numbers.txt ../big.bin
sha256sum src/a/one.txt src/c/numbers.txt > sums
sha256sum -c sums

echo "== gzip"
gzip -9 -n -c ../big.bin > big.bin.gz
sha256sum big.bin.gz
gzip -t big.bin.gz && echo "gzip -t ok"
gzip -l big.bin.gz | awk 'NR == 2 { print $1, $2 }'
gzip -d -c big.bin.gz | sha256sum
gzip -d -c big.bin.gz > back.bin && [ "$(sha256sum < back.bin)" = "$(sha256sum < ../big.bin)" ] && echo "gzip round trip ok"

echo "== xz"
xz -T1 -3 -c ../big.bin > big.bin.xz
sha256sum big.bin.xz
xz -t big.bin.xz && echo "xz -t ok"
xz -d -c big.bin.xz > back.bin
[ "$(sha256sum < back.bin)" = "$(sha256sum < ../big.bin)" ] && echo "xz round trip ok"
xz -l --robot big.bin.xz | awk '$1 == "totals" { print $2, $3, $4, $5 }'

echo "== make"
mkdir proj && cd proj
printf 'one\n' > a.txt
printf 'two\n' > b.txt
cat > Makefile <<'MAKEFILE'
SRCS := $(sort $(wildcard *.txt))
UPS := $(SRCS:.txt=.up)
COUNT = $(words $(SRCS))

all: joined.out
	@echo "all: $(COUNT) sources, $$(wc -l < joined.out) lines"

joined.out: $(UPS)
	cat $^ > $@

%.up: %.txt
	tr a-z A-Z < $< > $@

clean:
	rm -f *.up joined.out

fail:
	-false
	@echo "after an ignored failure"
	@sh -c 'exit 3'
	@echo "not reached"

.PHONY: all clean fail
MAKEFILE
make
make
touch -d "@$(( $(date +%s) + 2 ))" a.txt; sleep 3
make
cat joined.out
make -n clean
make clean
make -j2 -O 2>&1 | sort
status=0
make fail 2>&1 || status=$?
echo "make fail: status $status"
make -s no-such-target 2>&1 || echo "missing target: status $?"
cd ..

echo "end"
exit 7
