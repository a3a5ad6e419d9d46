/* Credentials: real, effective and saved ids through setuid, setreuid,
 * setresuid and their group forms; access(2) against the real ids and
 * AT_EACCESS against the effective ones; the effective ids decide who
 * opens and who owns a new file. */
#include "../conform.h"
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void show_ids(const char *name) {
	uid_t r, e, s;
	gid_t gr, ge, gs;
	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	printf("%s: uid %u %u %u gid %u %u %u\n", name, r, e, s, gr, ge, gs);
	fflush(stdout);
}

static void show_owner(const char *name, const char *path) {
	struct stat st;
	if (stat(path, &st) < 0)
		printf("%s: -1 %s\n", name, strerrorname_np(errno));
	else
		printf("%s: uid %u gid %u perm %o\n", name, st.st_uid, st.st_gid, st.st_mode & 07777);
	fflush(stdout);
}

/* run runs fn in a child, so that each case starts as root. */
static void run(const char *name, void (*fn)(void)) {
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("%s.status: %d\n", name, WEXITSTATUS(status));
	fflush(stdout);
}

static void seteuid_and_back(void) {
	RET("setresuid.eff", setresuid(-1, 1000, -1));
	show_ids("ids.eff1000");
	int fd = open("secret", O_RDONLY);
	SHOW("open.secret.eff1000", "%s", fd < 0 ? strerrorname_np(errno) : "ok");
	RET("access.secret.real.root", access("secret", R_OK));
	RET("eaccess.secret.eff1000", faccessat(AT_FDCWD, "secret", R_OK, AT_EACCESS));
	RET("seteuid.root.again", setresuid(-1, 0, -1));
	show_ids("ids.back");
	fd = open("secret", O_RDONLY);
	SHOW("open.secret.back", "%s", fd < 0 ? strerrorname_np(errno) : "ok");
}

static void real_user(void) {
	RET("setreuid.real1000", setreuid(1000, 0));
	show_ids("ids.real1000");
	RET("access.secret.real1000", access("secret", R_OK));
	RET("eaccess.secret.root", faccessat(AT_FDCWD, "secret", R_OK, AT_EACCESS));
	int fd = open("secret", O_RDONLY);
	SHOW("open.secret.eff.root", "%s", fd < 0 ? strerrorname_np(errno) : "ok");
	RET("setuid.0.keeps.saved", setuid(0));
	show_ids("ids.after.setuid0");
}

static void saved_id(void) {
	RET("setresuid.saved", setresuid(1000, 1000, 0));
	show_ids("ids.saved0");
	RET("setuid.to.saved", setuid(0));
	show_ids("ids.setuid.saved");
	RET("setresuid.drop", setresuid(1000, 1000, 1000));
	RET("setuid.root.denied", setuid(0));
	RET("seteuid.2000.denied", setresuid(-1, 2000, -1));
	RET("setreuid.swap.denied", setreuid(2000, -1));
	RET("setuid.invalid", setuid(-1));
	show_ids("ids.dropped");
}

static void groups(void) {
	RET("setresgid", setresgid(1000, 2000, 3000));
	show_ids("ids.groups");
	gid_t g[] = {4000};
	RET("setgroups", setgroups(1, g));
	RET("setresuid.user", setresuid(1000, 1000, 1000));
	RET("setgid.saved", setgid(3000));
	show_ids("ids.setgid.saved");
	RET("setgid.other.denied", setgid(5000));
	RET("setregid.real.to.eff", setregid(3000, -1));
	show_ids("ids.setregid");
	RET("getgroups.count", getgroups(0, NULL));
	int fd = open("made.by.user", O_CREAT | O_WRONLY, 0640);
	SHOW("create.cwd", "%s", fd < 0 ? strerrorname_np(errno) : "ok");
	RET("open.group4000", open("group4000", O_RDONLY) >= 0);
}

static void owner_is_effective(void) {
	RET("setresgid", setresgid(1000, 1500, 1000));
	RET("setresuid", setresuid(1000, 1500, 0));
	int fd = open("made.by.1500", O_CREAT | O_WRONLY, 0640);
	SHOW("create.eff1500", "%s", fd < 0 ? strerrorname_np(errno) : "ok");
	close(fd);
	RET("setresuid.root", setresuid(0, 0, 0));
	show_owner("stat.made.by.1500", "made.by.1500");
}

int main(void) {
	umask(0);
	RET("chmod.cwd", chmod(".", 0777));
	int fd = open("secret", O_CREAT | O_WRONLY, 0600);
	close(fd);
	fd = open("group4000", O_CREAT | O_WRONLY, 0040);
	close(fd);
	RET("chown.group4000", chown("group4000", 0, 4000));
	show_ids("ids.root");
	run("seteuid", seteuid_and_back);
	run("real", real_user);
	run("saved", saved_id);
	run("groups", groups);
	run("owner", owner_is_effective);
	show_owner("stat.made.by.user", "made.by.user");
	return 0;
}
