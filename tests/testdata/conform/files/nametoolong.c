/* ENAMETOOLONG: a path of PATH_MAX bytes or more (the NUL included) is
 * refused before it is walked, and a component longer than NAME_MAX where
 * a directory is searched for it or an entry made with it. */
#include "../conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

/* name returns a string of n copies of c. */
static char *name(int n, char c)
{
	char *s = malloc(n + 1);
	memset(s, c, n);
	s[n] = 0;
	return s;
}

/* dots returns "./" repeated to n bytes: a path to the working directory. */
static char *dots(int n)
{
	char *s = malloc(n + 1);
	for (int i = 0; i < n; i++)
		s[i] = i % 2 ? '/' : '.';
	s[n] = 0;
	return s;
}

int main(void)
{
	struct stat st;
	char *n255 = name(255, 'a'), *n256 = name(256, 'b'), *n300 = name(300, 'c');
	char buf[600];

	RET("open O_CREAT, 255", close(open(n255, O_CREAT | O_WRONLY, 0644)));
	RET("stat, 255", stat(n255, &st));
	RET("unlink, 255", unlink(n255));
	RET("open O_CREAT, 256", open(n256, O_CREAT | O_WRONLY, 0644));
	RET("open O_CREAT, 300", open(n300, O_CREAT | O_WRONLY, 0644));
	RET("open, 300", open(n300, O_RDONLY));
	RET("mkdir, 300", mkdir(n300, 0755));
	RET("stat, 300", stat(n300, &st));
	RET("lstat, 300", lstat(n300, &st));
	RET("unlink, 300", unlink(n300));
	RET("rmdir, 300", rmdir(n300));
	snprintf(buf, sizeof buf, "%s/x", n300);
	RET("stat, 300 then more", stat(buf, &st));
	snprintf(buf, sizeof buf, "missing/%s", n300);
	RET("stat, missing then 300", stat(buf, &st));
	mkdir("ntl.d", 0755);
	snprintf(buf, sizeof buf, "ntl.d/%s", n300);
	RET("mkdir, in a directory", mkdir(buf, 0755));
	RET("open O_CREAT, in a directory", open(buf, O_CREAT | O_WRONLY, 0644));
	close(open("ntl.d/f", O_CREAT | O_WRONLY, 0644));
	RET("rename to 300", rename("ntl.d/f", buf));
	RET("link to 300", link("ntl.d/f", buf));
	RET("symlink at 300", symlink("f", buf));
	RET("symlink to 300", symlink(n300, "ntl.d/l"));
	RET("stat through it", stat("ntl.d/l", &st));
	RET("lstat of it", lstat("ntl.d/l", &st) == 0 ? (long)st.st_size : -1L);

	RET("stat, 4095 bytes", stat(dots(4095), &st));
	RET("stat, 4096 bytes", stat(dots(4096), &st));
	RET("stat, 6000 bytes", stat(dots(6000), &st));
	RET("open, 6000 bytes", open(dots(6000), O_RDONLY));
	RET("open O_CREAT, 6000 bytes", open(name(6000, 'd'), O_CREAT | O_WRONLY, 0644));
	RET("mkdir, 4096 bytes", mkdir(name(4096, 'e'), 0755));
	RET("chdir, 4096 bytes", chdir(dots(4096)));
	RET("access, 4096 bytes", access(dots(4096), F_OK));
	return 0;
}
