/* Landlock as Linux 6.12 answers it: the ABI version, the errors of its
 * three calls, file accesses granted and denied by path-beneath rules
 * (reads, writes, directories, creating and removing each kind, rename
 * and link across rules, truncate, execute), stacked layers, inheritance
 * over fork and execve, TCP port rules and the two scopes. Each
 * restriction is made in a child. */
#include "../../conform/conform.h"
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

/* Linux 6.12's <linux/landlock.h>: the cross compiler's headers are older. */
struct landlock_ruleset_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};
struct landlock_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));
struct landlock_net_port_attr {
	uint64_t allowed_access, port;
};
#define LANDLOCK_CREATE_RULESET_VERSION 1
#define LANDLOCK_RULE_PATH_BENEATH 1
#define LANDLOCK_RULE_NET_PORT 2
#define LANDLOCK_ACCESS_NET_BIND_TCP 1
#define LANDLOCK_ACCESS_NET_CONNECT_TCP 2
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET 1
#define LANDLOCK_SCOPE_SIGNAL 2
#define EX (1ULL << 0)
#define WF (1ULL << 1)
#define RF (1ULL << 2)
#define RD (1ULL << 3)
#define RMF (1ULL << 5)
#define MDIR (1ULL << 7)
#define MREG (1ULL << 8)
#define REFER (1ULL << 13)
#define TR (1ULL << 14)
#define IOCTL_DEV (1ULL << 15)
#define FS_ALL ((1ULL << 16) - 1)

static long create_ruleset(const void *attr, size_t size, uint32_t flags) {
	return syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

static long add_rule(int fd, int type, const void *attr, uint32_t flags) {
	return syscall(SYS_landlock_add_rule, fd, type, attr, flags);
}

static long restrict_self(int fd, uint32_t flags) { return syscall(SYS_landlock_restrict_self, fd, flags); }

static int ruleset(uint64_t fs, uint64_t net, uint64_t scoped) {
	struct landlock_ruleset_attr a = {.handled_access_fs = fs, .handled_access_net = net, .scoped = scoped};
	return create_ruleset(&a, sizeof a, 0);
}

static long path_rule(int rs, const char *path, uint64_t access) {
	struct landlock_path_beneath_attr pb = {.allowed_access = access, .parent_fd = open(path, O_PATH)};
	long r = add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	close(pb.parent_fd);
	return r;
}

static void enforce(const char *name, int rs) {
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	RET(name, restrict_self(rs, 0));
	close(rs);
}

static void in_child(void (*f)(void)) {
	pid_t c = fork();
	if (c == 0) {
		f();
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
}

static void put(const char *path) {
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (write(fd, "data", 4) != 4)
		printf("setup write %s failed\n", path);
	close(fd);
}

static long open_close(const char *path, int flags) {
	int fd = open(path, flags, 0644);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

static long opendir_close(const char *path) {
	DIR *d = opendir(path);
	if (!d)
		return -1;
	closedir(d);
	return 0;
}

static void errors(void) {
	struct landlock_ruleset_attr a = {.handled_access_fs = EX};
	RET("version", create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION));
	RET("version.size", create_ruleset(NULL, 8, LANDLOCK_CREATE_RULESET_VERSION));
	RET("version.attr", create_ruleset(&a, 0, LANDLOCK_CREATE_RULESET_VERSION));
	RET("create.flags", create_ruleset(&a, sizeof a, 4));
	RET("create.null", create_ruleset(NULL, sizeof a, 0));
	RET("create.short", create_ruleset(&a, 7, 0));
	RET("create.page", create_ruleset(&a, 4097, 0));
	char big[64] = {0};
	memcpy(big, &a, sizeof a);
	int fd = create_ruleset(big, sizeof big, 0);
	SHOW("create.zero_tail", "%d", fd >= 0);
	SHOW("create.cloexec", "%d", fcntl(fd, F_GETFD));
	char c;
	RET("ruleset.read", read(fd, &c, 1));
	RET("ruleset.write", write(fd, "x", 1));
	RET("ruleset.lseek", lseek(fd, 0, SEEK_SET));
	close(fd);
	big[40] = 1;
	RET("create.tail", create_ruleset(big, sizeof big, 0));
	RET("create.abi1", (fd = create_ruleset(&a, 8, 0)) >= 0);
	close(fd);
	a.handled_access_fs = 1ULL << 16;
	RET("create.fs_unknown", create_ruleset(&a, sizeof a, 0));
	a.handled_access_fs = 0;
	a.handled_access_net = 4;
	RET("create.net_unknown", create_ruleset(&a, sizeof a, 0));
	a.handled_access_net = 0;
	a.scoped = 4;
	RET("create.scope_unknown", create_ruleset(&a, sizeof a, 0));
	a.scoped = 0;
	RET("create.empty", create_ruleset(&a, sizeof a, 0));

	int rs = ruleset(EX | RF | RD, LANDLOCK_ACCESS_NET_BIND_TCP, 0);
	int file = open("/mnt/a/f", O_RDONLY);
	struct landlock_path_beneath_attr pb = {.allowed_access = EX, .parent_fd = open("/mnt/a", O_PATH)};
	RET("add.flags", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 1));
	RET("add.badfd", add_rule(-1, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	RET("add.notruleset", add_rule(file, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	RET("add.type", add_rule(rs, 3, &pb, 0));
	RET("add.null", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, NULL, 0));
	pb.allowed_access = 0;
	RET("add.empty", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	pb.allowed_access = WF;
	RET("add.unhandled", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	pb.allowed_access = EX | RD;
	RET("add.dir", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	RET("add.again", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	close(pb.parent_fd);
	pb.parent_fd = -1;
	RET("add.parent_badfd", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	pb.parent_fd = file;
	RET("add.file_dir_right", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	pb.allowed_access = EX | RF;
	RET("add.file", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	pb.parent_fd = rs;
	RET("add.parent_ruleset", add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	struct landlock_net_port_attr np = {.allowed_access = LANDLOCK_ACCESS_NET_BIND_TCP, .port = 65536};
	RET("add.port_big", add_rule(rs, LANDLOCK_RULE_NET_PORT, &np, 0));
	np.port = 80;
	RET("add.port", add_rule(rs, LANDLOCK_RULE_NET_PORT, &np, 0));
	np.allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP;
	RET("add.port_unhandled", add_rule(rs, LANDLOCK_RULE_NET_PORT, &np, 0));
	np.allowed_access = 0;
	RET("add.port_empty", add_rule(rs, LANDLOCK_RULE_NET_PORT, &np, 0));
	close(rs);

	RET("restrict.badfd", restrict_self(-1, 0));
	RET("restrict.notruleset", restrict_self(file, 0));
	close(file);
}

static void restrict_nobody(void) {
	int rs = ruleset(EX, 0, 0);
	RET("nobody.setuid", setuid(65534));
	RET("nobody.restrict", restrict_self(rs, 0));
	RET("nobody.nnp", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	RET("nobody.restrict.flags", restrict_self(rs, 1));
	RET("nobody.restrict.nnp", restrict_self(rs, 0));
}

static void restrict_many(void) {
	int rs = ruleset(EX, 0, 0);
	RET("root.restrict.flags", restrict_self(rs, 1));
	int i;
	for (i = 0; i < 16 && restrict_self(rs, 0) == 0; i++)
		;
	SHOW("restrict.layers", "%d", i);
	RET("restrict.17th", restrict_self(rs, 0));
}

/* Rules: /init (the file) may be run; /mnt/a is rich, /mnt/b may be read
 * and created in, /mnt/c written without truncation, /mnt/d created in
 * and removed from without REFER. */
static void fs_sandbox(void) {
	int rs = ruleset(FS_ALL, 0, 0);
	RET("fs.rule.init", path_rule(rs, "/init", EX | RF));
	RET("fs.rule.a", path_rule(rs, "/mnt/a", RF | RD | WF | MREG | RMF | TR | REFER | MDIR));
	RET("fs.rule.b", path_rule(rs, "/mnt/b", RF | RD | MREG | REFER));
	RET("fs.rule.c", path_rule(rs, "/mnt/c", RF | WF));
	RET("fs.rule.d", path_rule(rs, "/mnt/d", MREG | RMF));
	RET("fs.rule.null", path_rule(rs, "/mnt/a/null", RF | IOCTL_DEV));
	enforce("fs.restrict", rs);
}

static void fs_checks(const char *who) {
	char name[64];
#define CHK(what, call)                                                        \
	do {                                                                   \
		snprintf(name, sizeof name, "%s.%s", who, what);               \
		RET(name, call);                                               \
	} while (0)
	CHK("read.a", open_close("/mnt/a/f", O_RDONLY));
	CHK("write.a", open_close("/mnt/a/f", O_WRONLY));
	CHK("read.b", open_close("/mnt/b/g", O_RDONLY));
	CHK("write.b", open_close("/mnt/b/g", O_WRONLY));
	CHK("read.mnt", open_close("/mnt/top", O_RDONLY));
	CHK("opath.mnt", open_close("/mnt/top", O_PATH));
	CHK("readdir.a", opendir_close("/mnt/a"));
	CHK("readdir.c", opendir_close("/mnt/c"));
	CHK("readdir.mnt", opendir_close("/mnt"));
}

static void fork_checks(void) { fs_checks("fork"); }

static long ioctl_on(const char *path, unsigned long cmd) {
	int fd = open(path, O_RDONLY);
	struct termios *t = calloc(1, 256);
	long r = ioctl(fd, cmd, t);
	free(t);
	close(fd);
	return r;
}

static void fs_all(void) {
	int before = open("/mnt/c/h", O_WRONLY);
	fs_sandbox();
	RET("fs.ftruncate.before", ftruncate(before, 0));
	close(before);
	int after = open("/mnt/c/h", O_WRONLY);
	RET("fs.ftruncate.c", ftruncate(after, 0));
	close(after);
	after = open("/mnt/a/f", O_WRONLY);
	RET("fs.ftruncate.a", ftruncate(after, 0));
	close(after);
	RET("fs.ioctl.granted", ioctl_on("/mnt/a/null", TCGETS));
	RET("fs.ioctl.denied", ioctl_on("/mnt/b/null", TCGETS));
	RET("fs.ioctl.fioclex", ioctl_on("/mnt/b/null", FIOCLEX));
	RET("fs.ioctl.file", ioctl_on("/mnt/b/g", TCGETS));
	fs_checks("fs");
	RET("fs.trunc_open.a", open_close("/mnt/a/f", O_WRONLY | O_TRUNC));
	RET("fs.write.c", open_close("/mnt/c/h", O_WRONLY));
	RET("fs.trunc_open.c", open_close("/mnt/c/h", O_WRONLY | O_TRUNC));
	RET("fs.truncate.c", truncate("/mnt/c/h", 0));
	RET("fs.truncate.a", truncate("/mnt/a/f", 1));
	RET("fs.creat.a", open_close("/mnt/a/new", O_WRONLY | O_CREAT));
	RET("fs.creat.b", open_close("/mnt/b/new", O_RDONLY | O_CREAT));
	RET("fs.creat.c", open_close("/mnt/c/new", O_WRONLY | O_CREAT));
	RET("fs.creat.b.write", open_close("/mnt/b/new2", O_WRONLY | O_CREAT));
	RET("fs.creat.b.write.made", access("/mnt/b/new2", F_OK));
	RET("fs.creat.exist.c", open_close("/mnt/c/h", O_WRONLY | O_CREAT));
	RET("fs.mkdir.a", mkdir("/mnt/a/d2", 0755));
	RET("fs.mkdir.b", mkdir("/mnt/b/d2", 0755));
	RET("fs.symlink.a", symlink("f", "/mnt/a/l"));
	RET("fs.mkfifo.a", mkfifo("/mnt/a/p", 0644));
	RET("fs.unlink.a", unlink("/mnt/a/new"));
	RET("fs.unlink.b", unlink("/mnt/b/new"));
	RET("fs.rmdir.a", rmdir("/mnt/a/d2"));
	RET("fs.rename.same", rename("/mnt/a/x", "/mnt/a/x2"));
	RET("fs.rename.a_to_b", rename("/mnt/a/x2", "/mnt/b/x"));
	RET("fs.rename.b_to_a", rename("/mnt/b/x", "/mnt/a/x"));
	RET("fs.link.b_to_a", link("/mnt/b/g", "/mnt/a/g"));
	RET("fs.link.a_to_b", link("/mnt/a/y", "/mnt/b/y"));
	RET("fs.rename.a_to_d", rename("/mnt/a/z", "/mnt/d/z"));
	RET("fs.rename.a_to_c", rename("/mnt/a/z", "/mnt/c/z"));
	RET("fs.exchange.a_b", syscall(SYS_renameat2, AT_FDCWD, "/mnt/a/y", AT_FDCWD, "/mnt/b/y", RENAME_EXCHANGE));
	in_child(fork_checks);
	pid_t c = fork();
	if (c == 0) {
		execl("/init", "init", "execd", (char *)NULL);
		_exit(1);
	}
	int st;
	waitpid(c, &st, 0);
	SHOW("exec.status", "%d", WEXITSTATUS(st));
	RET("fs.exec.a", execl("/mnt/a/prog", "prog", "execd", (char *)NULL));
}

static void stacked(void) {
	fs_sandbox();
	int rs = ruleset(WF | RD, 0, 0);
	RET("stack.rule.b", path_rule(rs, "/mnt/b", WF | RD));
	enforce("stack.restrict", rs);
	RET("stack.write.a", open_close("/mnt/a/f", O_WRONLY));
	RET("stack.write.b", open_close("/mnt/b/g", O_WRONLY));
	RET("stack.read.a", open_close("/mnt/a/f", O_RDONLY));
	RET("stack.readdir.a", opendir_close("/mnt/a"));
	RET("stack.readdir.b", opendir_close("/mnt/b"));
}

static long tcp(int family, int type, int port, int do_connect) {
	int s = socket(family, type, 0);
	long r;
	if (family == AF_INET) {
		struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
		sin.sin_addr.s_addr = htonl(do_connect ? INADDR_LOOPBACK : INADDR_ANY);
		r = do_connect ? connect(s, (void *)&sin, sizeof sin) : bind(s, (void *)&sin, sizeof sin);
	} else {
		struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
		if (do_connect)
			sin6.sin6_addr = in6addr_loopback;
		r = do_connect ? connect(s, (void *)&sin6, sizeof sin6) : bind(s, (void *)&sin6, sizeof sin6);
	}
	close(s);
	return r;
}

static void net(void) {
	int rs = ruleset(0, LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP, 0);
	struct landlock_net_port_attr np = {.allowed_access = LANDLOCK_ACCESS_NET_BIND_TCP, .port = 5000};
	RET("net.rule", add_rule(rs, LANDLOCK_RULE_NET_PORT, &np, 0));
	enforce("net.restrict", rs);
	RET("net.bind.allowed", tcp(AF_INET, SOCK_STREAM, 5000, 0));
	RET("net.bind.denied", tcp(AF_INET, SOCK_STREAM, 5001, 0));
	RET("net.bind6.denied", tcp(AF_INET6, SOCK_STREAM, 5001, 0));
	RET("net.bind.udp", tcp(AF_INET, SOCK_DGRAM, 5001, 0));
	RET("net.connect.denied", tcp(AF_INET, SOCK_STREAM, 5000, 1));
	RET("net.connect6.denied", tcp(AF_INET6, SOCK_STREAM, 5000, 1));
}

static int unix_listener(const char *name, int abstract) {
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	strcpy(sun.sun_path + (abstract ? 1 : 0), name);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + strlen(name) + (abstract ? 1 : 0);
	if (bind(s, (void *)&sun, len) || listen(s, 4))
		printf("setup listener %s failed\n", name);
	return s;
}

static long unix_connect(const char *name, int abstract) {
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	strcpy(sun.sun_path + (abstract ? 1 : 0), name);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + strlen(name) + (abstract ? 1 : 0);
	long r = connect(s, (void *)&sun, len);
	close(s);
	return r;
}

static void scopes(void) {
	pid_t parent = getppid();
	enforce("scope.restrict", ruleset(0, 0, LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET));
	RET("scope.kill.parent", kill(parent, 0));
	RET("scope.kill.self", kill(getpid(), 0));
	RET("scope.connect.outside", unix_connect("llt-out", 1));
	RET("scope.connect.path", unix_connect("/mnt/sock", 0));
	int in = unix_listener("llt-in", 1);
	pid_t c = fork();
	if (c == 0) {
		RET("scope.child.connect.inside", unix_connect("llt-in", 1));
		RET("scope.child.kill.parent", kill(getppid(), 0));
		enforce("scope.child.restrict", ruleset(0, 0, LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET));
		RET("scope.grandchild.connect.outer", unix_connect("llt-in", 1));
		RET("scope.grandchild.kill.parent", kill(getppid(), 0));
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	close(in);
	c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	RET("scope.kill.child", kill(c, SIGKILL));
	waitpid(c, &st, 0);
}

int main(int argc, char **argv) {
	if (argc > 1) { /* run again by execve in a restricted process */
		fs_checks("execd");
		return 7;
	}
	mkdir("/mnt", 0755);
	mount("tmpfs", "/mnt", "tmpfs", 0, NULL);
	mkdir("/mnt/a", 0755);
	mkdir("/mnt/b", 0755);
	mkdir("/mnt/c", 0755);
	mkdir("/mnt/d", 0755);
	put("/mnt/top");
	put("/mnt/a/f");
	put("/mnt/a/x");
	put("/mnt/a/y");
	put("/mnt/a/z");
	put("/mnt/b/g");
	put("/mnt/c/h");
	mknod("/mnt/a/null", S_IFCHR | 0666, makedev(1, 3));
	mknod("/mnt/b/null", S_IFCHR | 0666, makedev(1, 3));
	int src = open("/init", O_RDONLY), dst = open("/mnt/a/prog", O_WRONLY | O_CREAT, 0755);
	char buf[4096];
	ssize_t n;
	while ((n = read(src, buf, sizeof buf)) > 0)
		if (write(dst, buf, n) != n)
			break;
	close(src);
	close(dst);

	errors();
	in_child(restrict_nobody);
	in_child(restrict_many);
	in_child(fs_all);
	in_child(stacked);
	in_child(net);

	int out = unix_listener("llt-out", 1);
	int path = unix_listener("/mnt/sock", 0);
	in_child(scopes);
	close(out);
	close(path);
	RET("unrestricted.kill.self", kill(getpid(), 0));
	return 0;
}
