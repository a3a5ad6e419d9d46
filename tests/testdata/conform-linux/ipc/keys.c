/* Keys and keyrings (add_key, request_key, keyctl) as Linux answers them:
 * the special keyrings a process starts without, descriptions and
 * permissions, reading, updating, linking, searching, revoking, timing
 * out and invalidating keys, request_key with no /sbin/request-key to
 * call, and the per-user quotas of /proc/sys/kernel/keys. Serials are
 * random, so only their sameness is printed. Runs as root (init), and as
 * other users in children. */
#include "../../conform/conform.h"
#include <linux/keyctl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* Permission bits (keyutils.h; the kernel's uapi header lacks them). */
#define KEY_POS_VIEW 0x01000000
#define KEY_POS_SEARCH 0x08000000
#define KEY_POS_SETATTR 0x20000000
#define KEY_POS_ALL 0x3f000000
#define KEY_USR_VIEW 0x00010000
#define KEY_USR_ALL 0x003f0000
#define KEY_OTH_VIEW 0x00000001

static long add_key(const char *type, const char *desc, const void *payload, size_t n, long ring) {
	return syscall(SYS_add_key, type, desc, payload, n, ring);
}

static long request_key(const char *type, const char *desc, const char *info, long dest) {
	return syscall(SYS_request_key, type, desc, info, dest);
}

static long keyctl(long cmd, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5) {
	return syscall(SYS_keyctl, cmd, a2, a3, a4, a5);
}

/* describe prints a key's description, or the error. */
static void describe(const char *name, long id) {
	char buf[512] = {0};
	errno = 0;
	long n = keyctl(KEYCTL_DESCRIBE, id, (unsigned long)buf, sizeof buf, 0);
	if (n < 0)
		SHOW(name, "-1 %s", strerrorname_np(errno));
	else
		SHOW(name, "%ld %s", n, buf);
}

/* readkey prints a user key's payload, or the error. */
static void readkey(const char *name, long id) {
	char buf[64] = {0};
	errno = 0;
	long n = keyctl(KEYCTL_READ, id, (unsigned long)buf, sizeof buf - 1, 0);
	if (n < 0)
		SHOW(name, "-1 %s", strerrorname_np(errno));
	else
		SHOW(name, "%ld %s", n, buf);
}

static const char *same(long a, long b) { return a > 0 && a == b ? "same" : "differs"; }

static long parent_session;

static void forked(void) {
	SHOW("child session", "%s", same(keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0), parent_session));
	RET("child thread keyring", keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0, 0, 0));
	RET("child process keyring", keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0, 0, 0));
}

/* quota_keys adds keys as uid 1000 until its quota (maxkeys 5) ends it. */
static void quota_keys(void) {
	setuid(1000);
	char desc[16];
	int i;
	for (i = 0; i < 20; i++) {
		snprintf(desc, sizeof desc, "q%d", i);
		if (add_key("user", desc, "x", 1, KEY_SPEC_PROCESS_KEYRING) < 0)
			break;
	}
	SHOW("keys within maxkeys", "%d %s", i, strerrorname_np(errno));
	describe("user keyring of 1000", KEY_SPEC_USER_KEYRING);
}

/* quota_bytes adds a key bigger than uid 1001's maxbytes (100). */
static void quota_bytes(void) {
	setuid(1001);
	static char big[200];
	RET("key past maxbytes", add_key("user", "big", big, sizeof big, KEY_SPEC_PROCESS_KEYRING));
	RET("key within maxbytes", add_key("user", "small", big, 10, KEY_SPEC_PROCESS_KEYRING) > 0);
	long k = add_key("user", "small", big, 10, KEY_SPEC_PROCESS_KEYRING);
	RET("update past maxbytes", keyctl(KEYCTL_UPDATE, k, (unsigned long)big, 150, 0));
}

int main(void) {
	/* A process starts with none of its own keyrings. */
	RET("thread keyring", keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0, 0, 0));
	RET("process keyring", keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0, 0, 0));
	long tid = keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 1, 0, 0);
	SHOW("thread keyring made", "%s", tid > 0 ? "yes" : "no");
	SHOW("thread keyring again", "%s", same(keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0, 0, 0), tid));
	describe("describe thread", KEY_SPEC_THREAD_KEYRING);
	keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1, 0, 0);
	describe("describe process", KEY_SPEC_PROCESS_KEYRING);
	long ses = keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0);
	long uses = keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_SESSION_KEYRING, 0, 0, 0);
	long ukr = keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0, 0, 0);
	SHOW("session is user session", "%s", same(ses, uses));
	describe("describe user session", KEY_SPEC_USER_SESSION_KEYRING);
	describe("describe user", KEY_SPEC_USER_KEYRING);
	int ids[4] = {0};
	long n = keyctl(KEYCTL_READ, uses, (unsigned long)ids, sizeof ids, 0);
	SHOW("user session links user", "%ld %s", n, same(ids[0], ukr));
	RET("group keyring", keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_GROUP_KEYRING, 0, 0, 0));
	RET("reqkey auth key", keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_REQKEY_AUTH_KEY, 0, 0, 0));
	RET("id 0", keyctl(KEYCTL_GET_KEYRING_ID, 0, 0, 0, 0));
	RET("id -9", keyctl(KEYCTL_GET_KEYRING_ID, -9, 0, 0, 0));

	/* add_key's checks. */
	RET("empty payload", add_key("user", "k", "", 0, KEY_SPEC_THREAD_KEYRING));
	RET("no description", add_key("user", NULL, "x", 1, KEY_SPEC_THREAD_KEYRING));
	RET("empty description", add_key("user", "", "x", 1, KEY_SPEC_THREAD_KEYRING));
	RET("unknown type", add_key("nosuch", "k", "x", 1, KEY_SPEC_THREAD_KEYRING));
	RET("type with a dot", add_key(".user", "k", "x", 1, KEY_SPEC_THREAD_KEYRING));
	RET("empty type", add_key("", "k", "x", 1, KEY_SPEC_THREAD_KEYRING));
	RET("bad type", add_key(BAD, "k", "x", 1, KEY_SPEC_THREAD_KEYRING));
	RET("bad description", add_key("user", BAD, "x", 1, KEY_SPEC_THREAD_KEYRING));
	RET("bad payload", add_key("user", "k", NULL, 10, KEY_SPEC_THREAD_KEYRING));
	RET("unknown type bad payload", add_key("nosuch", "k", NULL, 10, KEY_SPEC_THREAD_KEYRING));
	RET("keyring with a dot", add_key("keyring", ".k", NULL, 0, KEY_SPEC_THREAD_KEYRING));
	RET("keyring with payload", add_key("keyring", "k", "x", 1, KEY_SPEC_THREAD_KEYRING));
	static char big[40000];
	RET("payload 32768", add_key("user", "k", big, 32768, KEY_SPEC_THREAD_KEYRING));
	RET("payload past 1M", add_key("user", "k", big, 1 << 20, KEY_SPEC_THREAD_KEYRING));
	RET("logon without colon", add_key("logon", "nocolon", "x", 1, KEY_SPEC_THREAD_KEYRING));
	RET("logon with leading colon", add_key("logon", ":x", "x", 1, KEY_SPEC_THREAD_KEYRING));
	long logon = add_key("logon", "svc:x", "secret", 6, KEY_SPEC_THREAD_KEYRING);
	describe("describe logon", logon);
	readkey("read logon", logon);
	RET("no such keyring", add_key("user", "k", "x", 1, 0x7ffffff0));

	/* A user key: describe, read, update. */
	long k1 = add_key("user", "k1", "hello", 5, KEY_SPEC_THREAD_KEYRING);
	describe("describe k1", k1);
	readkey("read k1", k1);
	char small[2] = {'-', '-'};
	RET("read into small buffer", keyctl(KEYCTL_READ, k1, (unsigned long)small, sizeof small, 0));
	SHOW("small buffer", "%c%c", small[0], small[1]);
	RET("read length", keyctl(KEYCTL_READ, k1, 0, 0, 0));
	RET("read bad buffer", keyctl(KEYCTL_READ, k1, (unsigned long)BAD, 64, 0));
	RET("add_key into a key", add_key("user", "k", "x", 1, k1));
	SHOW("add again updates", "%s", same(add_key("user", "k1", "world!", 6, KEY_SPEC_THREAD_KEYRING), k1));
	readkey("read updated", k1);
	RET("update", keyctl(KEYCTL_UPDATE, k1, (unsigned long)"again", 5, 0));
	readkey("read again", k1);
	RET("update empty", keyctl(KEYCTL_UPDATE, k1, 0, 0, 0));
	RET("update past a page", keyctl(KEYCTL_UPDATE, k1, (unsigned long)big, 4097, 0));
	RET("update bad payload", keyctl(KEYCTL_UPDATE, k1, (unsigned long)BAD, 4, 0));
	RET("update keyring", keyctl(KEYCTL_UPDATE, KEY_SPEC_THREAD_KEYRING, (unsigned long)"x", 1, 0));

	/* Keyrings: link, read, search, unlink, cycles. */
	long ring = add_key("keyring", "ring", NULL, 0, KEY_SPEC_THREAD_KEYRING);
	describe("describe ring", ring);
	RET("link k1 into ring", keyctl(KEYCTL_LINK, k1, ring, 0, 0));
	RET("link k1 again", keyctl(KEYCTL_LINK, k1, ring, 0, 0));
	n = keyctl(KEYCTL_READ, ring, (unsigned long)ids, sizeof ids, 0);
	SHOW("read ring", "%ld %s", n, same(ids[0], k1));
	RET("link ring into itself", keyctl(KEYCTL_LINK, ring, ring, 0, 0));
	RET("link thread keyring into ring", keyctl(KEYCTL_LINK, KEY_SPEC_THREAD_KEYRING, ring, 0, 0));
	RET("link into a key", keyctl(KEYCTL_LINK, ring, k1, 0, 0));
	SHOW("search ring", "%s", same(keyctl(KEYCTL_SEARCH, ring, (unsigned long)"user", (unsigned long)"k1", 0), k1));
	SHOW("search thread finds ring", "%s",
	     same(keyctl(KEYCTL_SEARCH, KEY_SPEC_THREAD_KEYRING, (unsigned long)"keyring", (unsigned long)"ring", 0), ring));
	RET("search missing", keyctl(KEYCTL_SEARCH, ring, (unsigned long)"user", (unsigned long)"none", 0));
	RET("search unknown type", keyctl(KEYCTL_SEARCH, ring, (unsigned long)"nosuch", (unsigned long)"k1", 0));
	RET("search a key", keyctl(KEYCTL_SEARCH, k1, (unsigned long)"user", (unsigned long)"k1", 0));
	long nested = add_key("user", "nested", "n", 1, ring);
	RET("unlink nested from thread", keyctl(KEYCTL_UNLINK, nested, KEY_SPEC_THREAD_KEYRING, 0, 0));
	SHOW("search nested from thread", "%s",
	     same(keyctl(KEYCTL_SEARCH, KEY_SPEC_THREAD_KEYRING, (unsigned long)"user", (unsigned long)"nested", 0), nested));
	SHOW("request nested", "%s", same(request_key("user", "nested", NULL, 0), nested));
	RET("unlink k1 from ring", keyctl(KEYCTL_UNLINK, k1, ring, 0, 0));
	RET("unlink k1 again", keyctl(KEYCTL_UNLINK, k1, ring, 0, 0));
	RET("unlink from a key", keyctl(KEYCTL_UNLINK, k1, k1, 0, 0));
	RET("clear ring", keyctl(KEYCTL_CLEAR, ring, 0, 0, 0));
	RET("read cleared ring", keyctl(KEYCTL_READ, ring, (unsigned long)ids, sizeof ids, 0));
	RET("clear a key", keyctl(KEYCTL_CLEAR, k1, 0, 0, 0));
	add_key("user", "a", "1", 1, ring);
	add_key("user", "b", "2", 1, ring);
	ids[1] = 0;
	RET("read ring into one id", keyctl(KEYCTL_READ, ring, (unsigned long)ids, sizeof ids[0], 0));
	SHOW("past the buffer", "%d", ids[1]);

	/* Permissions. */
	RET("setperm bad bits", keyctl(KEYCTL_SETPERM, k1, 0x40, 0, 0));
	RET("setperm", keyctl(KEYCTL_SETPERM, k1, KEY_POS_ALL | KEY_USR_VIEW | KEY_OTH_VIEW, 0, 0));
	describe("describe after setperm", k1);
	long k2 = add_key("user", "k2", "two", 3, KEY_SPEC_THREAD_KEYRING);
	RET("setperm none", keyctl(KEYCTL_SETPERM, k2, 0, 0, 0));
	readkey("read without permission", k2);
	describe("describe without permission", k2);
	RET("setperm without permission", keyctl(KEYCTL_SETPERM, k2, KEY_POS_ALL, 0, 0));
	long k3 = add_key("user", "k3", "three", 5, KEY_SPEC_THREAD_KEYRING);
	RET("setperm no read", keyctl(KEYCTL_SETPERM, k3, KEY_POS_VIEW | KEY_POS_SEARCH | KEY_POS_SETATTR, 0, 0));
	readkey("possessor reads without read", k3);
	RET("chown to 1000", keyctl(KEYCTL_CHOWN, k3, 1000, -1, 0));
	describe("describe chowned", k3);
	RET("chown group", keyctl(KEYCTL_CHOWN, k3, -1, 50, 0));
	describe("describe chowned group", k3);
	RET("chown nothing", keyctl(KEYCTL_CHOWN, 0x7ffffff0, -1, -1, 0));

	/* Revoke, expire, invalidate. */
	long k4 = add_key("user", "k4", "four", 4, KEY_SPEC_THREAD_KEYRING);
	RET("revoke", keyctl(KEYCTL_REVOKE, k4, 0, 0, 0));
	readkey("read revoked", k4);
	describe("describe revoked", k4);
	RET("revoke again", keyctl(KEYCTL_REVOKE, k4, 0, 0, 0));
	RET("update revoked", keyctl(KEYCTL_UPDATE, k4, (unsigned long)"x", 1, 0));
	RET("link revoked", keyctl(KEYCTL_LINK, k4, ring, 0, 0));
	RET("search revoked", keyctl(KEYCTL_SEARCH, KEY_SPEC_THREAD_KEYRING, (unsigned long)"user", (unsigned long)"k4", 0));
	RET("request revoked", request_key("user", "k4", NULL, 0));
	SHOW("add over revoked", "%s", same(add_key("user", "k4", "new", 3, KEY_SPEC_THREAD_KEYRING), k4));
	RET("revoke missing", keyctl(KEYCTL_REVOKE, 0x7ffffff0, 0, 0, 0));
	long rring = add_key("keyring", "rring", NULL, 0, KEY_SPEC_THREAD_KEYRING);
	add_key("user", "inside", "x", 1, rring);
	RET("revoke keyring", keyctl(KEYCTL_REVOKE, rring, 0, 0, 0));
	RET("add to revoked keyring", add_key("user", "k", "x", 1, rring));
	RET("unlink revoked keyring", keyctl(KEYCTL_UNLINK, rring, KEY_SPEC_THREAD_KEYRING, 0, 0));

	long k5 = add_key("user", "k5", "five", 4, KEY_SPEC_THREAD_KEYRING);
	RET("set timeout", keyctl(KEYCTL_SET_TIMEOUT, k5, 1, 0, 0));
	readkey("read before timeout", k5);
	sleep(2);
	readkey("read expired", k5);
	describe("describe expired", k5);
	RET("search expired", keyctl(KEYCTL_SEARCH, KEY_SPEC_THREAD_KEYRING, (unsigned long)"user", (unsigned long)"k5", 0));
	RET("request expired", request_key("user", "k5", NULL, 0));
	RET("timeout expired", keyctl(KEYCTL_SET_TIMEOUT, k5, 100, 0, 0));
	long k6 = add_key("user", "k6", "six", 3, KEY_SPEC_THREAD_KEYRING);
	RET("timeout then none", keyctl(KEYCTL_SET_TIMEOUT, k6, 1, 0, 0) | keyctl(KEYCTL_SET_TIMEOUT, k6, 0, 0, 0));

	long k7 = add_key("user", "k7", "seven", 5, KEY_SPEC_THREAD_KEYRING);
	RET("invalidate", keyctl(KEYCTL_INVALIDATE, k7, 0, 0, 0));
	/* Linux's garbage collector destroys it soon after: ENOKEY, or
	 * EACCES while it is still there, no longer possessed. */
	SHOW("read invalidated", "%s", keyctl(KEYCTL_READ, k7, 0, 0, 0) < 0 ? "fails" : "reads");
	SHOW("search invalidated", "%s",
	     keyctl(KEYCTL_SEARCH, KEY_SPEC_THREAD_KEYRING, (unsigned long)"user", (unsigned long)"k7", 0) < 0 ? "fails" : "finds");

	/* request_key. */
	SHOW("request k1", "%s", same(request_key("user", "k1", NULL, 0), k1));
	SHOW("request ring", "%s", same(request_key("keyring", "ring", NULL, 0), ring));
	RET("request missing", request_key("user", "none", NULL, 0));
	RET("request with callout", request_key("user", "made", "info", 0));
	RET("request negative", request_key("user", "made", NULL, 0));
	RET("request negative with callout", request_key("user", "made", "info", 0));
	RET("search negative", keyctl(KEYCTL_SEARCH, KEY_SPEC_THREAD_KEYRING, (unsigned long)"user", (unsigned long)"made", 0));
	RET("request keyring with callout", request_key("keyring", "none", "info", 0));
	RET("request unknown type", request_key("nosuch", "k1", NULL, 0));
	RET("request dot type", request_key(".user", "k1", NULL, 0));
	RET("request bad description", request_key("user", BAD, NULL, 0));
	RET("request bad callout", request_key("user", "k1", BAD, 0));
	SHOW("request into ring", "%s", same(request_key("user", "k1", NULL, ring), k1));
	RET("request into a key", request_key("user", "k1", NULL, k1));

	/* The default destination of request_key. */
	RET("reqkey thread", keyctl(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_THREAD_KEYRING, 0, 0, 0));
	RET("reqkey no change", keyctl(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_NO_CHANGE, 0, 0, 0));
	RET("reqkey group", keyctl(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_GROUP_KEYRING, 0, 0, 0));
	RET("reqkey 99", keyctl(KEYCTL_SET_REQKEY_KEYRING, 99, 0, 0, 0));
	RET("reqkey default", keyctl(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_DEFAULT, 0, 0, 0));

	/* Sessions and fork. */
	parent_session = keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0);
	run_child(forked);
	long joined = keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0);
	SHOW("join anonymous", "%s", same(keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0), joined));
	describe("describe anonymous session", KEY_SPEC_SESSION_KEYRING);
	RET("join dot name", keyctl(KEYCTL_JOIN_SESSION_KEYRING, (unsigned long)".builtin_trusted_keys", 0, 0, 0));
	RET("join bad name", keyctl(KEYCTL_JOIN_SESSION_KEYRING, (unsigned long)BAD, 0, 0, 0));
	long named = keyctl(KEYCTL_JOIN_SESSION_KEYRING, (unsigned long)"named", 0, 0, 0);
	describe("describe named session", KEY_SPEC_SESSION_KEYRING);
	SHOW("join named again", "%s", same(keyctl(KEYCTL_JOIN_SESSION_KEYRING, (unsigned long)"named", 0, 0, 0), named));
	RET("setperm session", keyctl(KEYCTL_SETPERM, KEY_SPEC_SESSION_KEYRING, KEY_POS_ALL | KEY_USR_ALL, 0, 0));
	long named3 = keyctl(KEYCTL_JOIN_SESSION_KEYRING, (unsigned long)"named", 0, 0, 0);
	SHOW("join searchable named", "%ld", named3);
	run_child(forked);
	RET("add to session", add_key("user", "s", "x", 1, KEY_SPEC_SESSION_KEYRING) > 0);

	/* Quotas. */
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	show_file("maxkeys", "/proc/sys/kernel/keys/maxkeys");
	show_file("maxbytes", "/proc/sys/kernel/keys/maxbytes");
	show_file("root_maxkeys", "/proc/sys/kernel/keys/root_maxkeys");
	show_file("root_maxbytes", "/proc/sys/kernel/keys/root_maxbytes");
	show_file("gc_delay", "/proc/sys/kernel/keys/gc_delay");
	put_file("maxkeys 0", "/proc/sys/kernel/keys/maxkeys", "0");
	put_file("maxkeys -1", "/proc/sys/kernel/keys/maxkeys", "-1");
	put_file("maxkeys 5", "/proc/sys/kernel/keys/maxkeys", "5");
	show_file("maxkeys now", "/proc/sys/kernel/keys/maxkeys");
	run_child(quota_keys);
	put_file("maxbytes 100", "/proc/sys/kernel/keys/maxbytes", "100");
	run_child(quota_bytes);
	put_file("maxkeys back", "/proc/sys/kernel/keys/maxkeys", "200");
	put_file("maxbytes back", "/proc/sys/kernel/keys/maxbytes", "20000");

	RET("unknown operation", keyctl(999, 0, 0, 0, 0));
	RET("instantiate", keyctl(KEYCTL_INSTANTIATE, k1, (unsigned long)"x", 1, 0));
	RET("negate", keyctl(KEYCTL_NEGATE, k1, 10, 0, 0));
	RET("assume no authority", keyctl(KEYCTL_ASSUME_AUTHORITY, 0, 0, 0, 0));
	char label[8] = {'x'};
	RET("security label", keyctl(KEYCTL_GET_SECURITY, k1, (unsigned long)label, sizeof label, 0));
	SHOW("label", "%d", label[0]);
	return 0;
}
