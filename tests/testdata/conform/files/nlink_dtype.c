/* A directory's link count is 2 plus its subdirectories (find and ls -l
 * read it), and getdents64 names each entry's type: find -type f must not
 * take a FIFO for a regular file. */
#include "../conform.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static long nlink(const char *p)
{
	struct stat st;
	if (stat(p, &st) < 0)
		return -1;
	return st.st_nlink;
}

static const char *type_name(unsigned char t)
{
	switch (t) {
	case DT_REG: return "reg";
	case DT_DIR: return "dir";
	case DT_LNK: return "lnk";
	case DT_FIFO: return "fifo";
	case DT_CHR: return "chr";
	case DT_SOCK: return "sock";
	case DT_UNKNOWN: return "unknown";
	}
	return "other";
}

int main(void)
{
	RET("mkdir", mkdir("nl", 0755));
	SHOW("empty dir", "%ld", nlink("nl"));
	RET("mkdir sub", mkdir("nl/a", 0755));
	RET("mkdir sub2", mkdir("nl/b", 0755));
	RET("mkdir subsub", mkdir("nl/a/x", 0755));
	RET("file", close(open("nl/f", O_CREAT | O_WRONLY, 0644)));
	SHOW("two subdirs", "%ld", nlink("nl"));
	SHOW("one subdir", "%ld", nlink("nl/a"));
	RET("rename dir", rename("nl/a/x", "nl/b/x"));
	SHOW("after rename: old parent", "%ld", nlink("nl/a"));
	SHOW("after rename: new parent", "%ld", nlink("nl/b"));
	RET("rename over empty dir", rename("nl/a", "nl/b/x"));
	SHOW("after replacing: parent", "%ld", nlink("nl"));
	SHOW("after replacing: new parent", "%ld", nlink("nl/b"));
	RET("rmdir", rmdir("nl/b/x"));
	SHOW("after rmdir", "%ld", nlink("nl/b"));

	RET("mkfifo", mkfifo("nl/fifo", 0644));
	RET("symlink", symlink("f", "nl/lnk"));
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	strcpy(sun.sun_path, "nl/sock");
	RET("bind", bind(s, (struct sockaddr *)&sun, sizeof sun));
	DIR *d = opendir("nl");
	struct dirent *e;
	const char *names[] = {".", "..", "b", "f", "fifo", "lnk", "sock"};
	const char *types[7] = {0};
	while ((e = readdir(d)) != NULL)
		for (int i = 0; i < 7; i++)
			if (strcmp(e->d_name, names[i]) == 0)
				types[i] = type_name(e->d_type);
	closedir(d);
	for (int i = 0; i < 7; i++)
		SHOW(names[i], "%s", types[i] ? types[i] : "missing");
	d = opendir("/dev");
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, "null") == 0)
			SHOW("/dev/null", "%s", type_name(e->d_type));
	closedir(d);
	return 0;
}
