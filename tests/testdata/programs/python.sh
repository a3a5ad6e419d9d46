# Debian's python3: json, re, hashlib, subprocess.run, threading with 8
# threads. The test runs it with bash on the kernel and under qemu-riscv64
# and compares every line and the exit status.
set -e
export LC_ALL=C PYTHONUTF8=1 PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1
trap 'echo "exit trap: status $?"' EXIT
mkdir work && cd work

python3 - <<'PY'
import hashlib, json, os, queue, re, subprocess, sys, threading, zlib

print("python", sys.version_info[:2])

doc = {"name": "jiege", "list": [1, 2.5, None, True, "x\u00e9"], "nested": {"b": [], "a": {}}}
text = json.dumps(doc, sort_keys=True, indent=1)
print(text)
back = json.loads(text)
print("json round trip", back == doc, json.dumps(back["list"], ensure_ascii=False))
with open("doc.json", "w") as f:
    json.dump([{"id": i, "sq": i * i} for i in range(1000)], f)
with open("doc.json") as f:
    rows = json.load(f)
print("json file", len(rows), sum(r["sq"] for r in rows), os.path.getsize("doc.json"))

log = "GET /a 200 12\nPOST /b 404 7\nGET /c/d 200 1024\nbad line\n"
pat = re.compile(r"^(?P<m>GET|POST) (?P<p>\S+) (?P<s>\d{3}) (?P<n>\d+)$", re.M)
for m in pat.finditer(log):
    print("re", m.group("m"), m.group("p"), int(m.group("s")), int(m.group("n")))
print("re sub", re.sub(r"(\w)(\w*)", lambda m: m.group(1).upper() + m.group(2), "hello big world"))
print("re split", re.split(r"[;,\s]+", "a, b;c  d"))

for name in ("md5", "sha1", "sha256", "sha512", "blake2b", "sha3_256"):
    print("hash", name, hashlib.new(name, b"jiege" * 1000).hexdigest()[:32])
h = hashlib.sha256()
for i in range(2000):
    h.update(str(i).encode())
print("sha256 stream", h.hexdigest())
print("pbkdf2", hashlib.pbkdf2_hmac("sha256", b"pw", b"salt", 1000).hex()[:32])
print("zlib", zlib.crc32(b"jiege"), len(zlib.compress(b"a" * 100000)))

r = subprocess.run(["sh", "-c", "echo out; echo err >&2; exit 3"], capture_output=True, text=True)
print("subprocess", r.returncode, repr(r.stdout), repr(r.stderr))
r = subprocess.run(["sort", "-r"], input="b\na\nc\n", capture_output=True, text=True, check=True)
print("subprocess input", repr(r.stdout))
print("check_output", subprocess.check_output("echo $((6 * 7))", shell=True).decode().strip())
try:
    subprocess.run(["false"], check=True)
except subprocess.CalledProcessError as e:
    print("CalledProcessError", e.returncode)
try:
    subprocess.run(["no-such-program"])
except FileNotFoundError as e:
    print("FileNotFoundError", e.errno)
try:
    subprocess.run(["sleep", "10"], timeout=0.5)
except subprocess.TimeoutExpired:
    print("TimeoutExpired")
p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out, _ = p.communicate(b"x" * 200000)
print("communicate", len(out), p.returncode)

results = {}
lock = threading.Lock()
barrier = threading.Barrier(8)
work = queue.Queue()
for i in range(64):
    work.put(i)

def worker(n):
    barrier.wait()
    while True:
        try:
            i = work.get_nowait()
        except queue.Empty:
            return
        d = hashlib.sha256(str(i).encode() * 1000).hexdigest()
        with lock:
            results[i] = d

threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads", len(results), hashlib.sha256("".join(results[i] for i in range(64)).encode()).hexdigest())
print("thread count after join", threading.active_count())

cond = threading.Condition()
box = []
def producer():
    for i in range(5):
        with cond:
            box.append(i)
            cond.notify()
c = threading.Thread(target=producer)
got = []
with cond:
    c.start()
    while len(got) < 5:
        cond.wait_for(lambda: box)
        got.extend(box)
        box.clear()
c.join()
print("condition", got)

import concurrent.futures as cf
with cf.ThreadPoolExecutor(max_workers=8) as ex:
    print("pool", sum(ex.map(lambda x: x * x, range(1000))))
PY

echo "end"
exit 7
