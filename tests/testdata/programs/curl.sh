# Debian's curl fetching from the test's HTTP server on the host's
# loopback, by IPv4 address (the file "hostip": 10.0.2.2 from the guest,
# 127.0.0.1 under qemu-riscv64) and by a name that the test's own DNS
# server answers (/etc/resolv.conf). The test compares every line and the
# exit status.
set -e
export LC_ALL=C
trap 'echo "exit trap: status $?"' EXIT
hostip=$(cat hostip)
port=$(cat port)
mkdir work && cd work

echo "== by address"
curl -sS -o a.bin -w '%{http_code} %{size_download} %{content_type}\n' "http://$hostip:$port/file.bin"
sha256sum a.bin

echo "== by name"
curl -sS -o b.bin -w '%{http_code} %{size_download} %{remote_ip}\n' "http://files.jiege.test:$port/file.bin" > b.txt
read -r code size ip < b.txt
echo "$code $size"
[ "$ip" = "$hostip" ] && echo "files.jiege.test resolved to the host"
sha256sum b.bin

echo "== headers"
curl -sS -I "http://files.jiege.test:$port/file.bin" | tr -d '\r' | while read -r line; do
	case $line in Date:*|"") ;; *) echo "$line" ;; esac
done

echo "== more"
curl -sS -L -w '%{http_code} %{num_redirects}\n' -o c.bin "http://files.jiege.test:$port/redirect"
cmp_sum() { [ "$(sha256sum < "$1")" = "$(sha256sum < "$2")" ] && echo "$1 = $2"; }
cmp_sum c.bin a.bin
curl -sS --data-binary @a.bin "http://$hostip:$port/sha256"
echo
curl -sS -w '%{http_code}\n' -o /dev/null "http://$hostip:$port/missing"
curl -sSf -o /dev/null "http://$hostip:$port/missing" 2>&1 || echo "curl -f: status $?"
curl -sS -r 100-199 "http://$hostip:$port/file.bin" | sha256sum
curl -sS "http://$hostip:$port/file.bin" "http://$hostip:$port/hello" -o d.bin -o hello.txt
cat hello.txt
cmp_sum d.bin a.bin
curl -sS "http://no-such-name.jiege.test:$port/" 2>&1 || echo "unknown name: status $?"

echo "end"
exit 7
