/* Permission bits as Linux keeps them: chmod and fchmod set setuid, setgid
 * and sticky; mkdir keeps only the permission and sticky bits; creation
 * modes lose the umask; chdir through a symbolic link leaves getcwd with
 * the physical path. */
#include "../conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

static void mode(const char *name, const char *path) {
	struct stat st;
	if (stat(path, &st) != 0)
		SHOW(name, "-1 %s", strerrorname_np(errno));
	else
		SHOW(name, "%04o", st.st_mode & 07777);
}

int main(void) {
	umask(022);
	RET("mkdir(03777)", mkdir("modes-d", 03777));
	mode("mkdir keeps sticky only", "modes-d");
	RET("open(O_CREAT, 06777)", open("modes-f", O_CREAT | O_WRONLY, 06777));
	mode("created under umask 022", "modes-f");
	RET("chmod(04755)", chmod("modes-f", 04755));
	mode("chmod setuid", "modes-f");
	RET("chmod(02711)", chmod("modes-f", 02711));
	mode("chmod setgid", "modes-f");
	int fd = open("modes-f", O_RDONLY);
	RET("fchmod(01644)", fchmod(fd, 01644));
	mode("fchmod sticky", "modes-f");
	RET("chmod(0)", chmod("modes-f", 0));
	mode("chmod 0", "modes-f");
	RET("chmod(017777)", chmod("modes-d", 017777));
	mode("chmod ignores file-type bits", "modes-d");
	RET("symlink", symlink("modes-d", "modes-l"));
	RET("chdir(link)", chdir("modes-l"));
	char cwd[4096];
	const char *got = getcwd(cwd, sizeof cwd);
	const char *base = got ? strrchr(got, '/') + 1 : "(error)";
	SHOW("getcwd after chdir through a link", "%s", base);
	RET("chdir(..)", chdir(".."));
	RET("stat(modes-l/..)", access("modes-l/../modes-f", F_OK));
	return 0;
}
