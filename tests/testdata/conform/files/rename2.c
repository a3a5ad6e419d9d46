/* renameat2's RENAME_NOREPLACE and RENAME_EXCHANGE, and a working
 * directory that follows its directory's rename. */
#define _GNU_SOURCE
#include "../conform.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

static const char *content(const char *p) {
	static char buf[16];
	int fd = open(p, O_RDONLY);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = 0;
	return buf;
}

static void put(const char *p, const char *s) {
	int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	write(fd, s, strlen(s));
	close(fd);
}

int main(void) {
	mkdir("r2", 0755);
	put("r2/a", "A");
	put("r2/b", "B");
	mkdir("r2/d", 0755);
	put("r2/d/in", "D");
	RET("noreplace.exists", renameat2(AT_FDCWD, "r2/a", AT_FDCWD, "r2/b", RENAME_NOREPLACE));
	RET("noreplace.new", renameat2(AT_FDCWD, "r2/a", AT_FDCWD, "r2/c", RENAME_NOREPLACE));
	RET("exchange", renameat2(AT_FDCWD, "r2/b", AT_FDCWD, "r2/c", RENAME_EXCHANGE));
	SHOW("after.exchange", "b=%s c=%s", content("r2/b"), content("r2/c"));
	RET("exchange.missing", renameat2(AT_FDCWD, "r2/b", AT_FDCWD, "r2/none", RENAME_EXCHANGE));
	RET("both.flags", renameat2(AT_FDCWD, "r2/b", AT_FDCWD, "r2/c", RENAME_EXCHANGE | RENAME_NOREPLACE));
	RET("whiteout.exchange", renameat2(AT_FDCWD, "r2/b", AT_FDCWD, "r2/c", RENAME_EXCHANGE | RENAME_WHITEOUT));
	RET("badflags", renameat2(AT_FDCWD, "r2/b", AT_FDCWD, "r2/c", 8));
	RET("exchange.dir.file", renameat2(AT_FDCWD, "r2/d", AT_FDCWD, "r2/b", RENAME_EXCHANGE));
	struct stat st;
	RET("b.is.dir", (stat("r2/b", &st), S_ISDIR(st.st_mode)));
	SHOW("dir.moved", "%s", content("r2/b/in"));
	RET("exchange.into.itself", renameat2(AT_FDCWD, "r2", AT_FDCWD, "r2/b/in", RENAME_EXCHANGE));

	/* The working directory follows a rename of itself or a parent. */
	mkdir("r2/w", 0755);
	mkdir("r2/w/x", 0755);
	char top[4096];
	getcwd(top, sizeof top);
	chdir("r2/w/x");
	char from[4200], to[4200];
	snprintf(from, sizeof from, "%s/r2/w", top);
	snprintf(to, sizeof to, "%s/r2/v", top);
	RET("rename.cwd.parent", rename(from, to));
	put("here", "H");
	chdir(top);
	SHOW("created.in.moved.cwd", "%s", content("r2/v/x/here"));
	return 0;
}
