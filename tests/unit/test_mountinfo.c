/*
 * test_mountinfo.c - mountinfo.c: lines of /proc/self/mountinfo as the
 * kernel writes them (optional tags or none, a mount root below the
 * filesystem's, octal escapes in the root, the mount point and the
 * source, but not in the types or options) parse into their fields,
 * unescaped; lines that are not such lines are refused; and the real
 * file is walked until the callback says stop.
 */
#include "unit.h"
#include "mountinfo.h"

static void
test_lines(void **state)
{
	static const struct {
		const char *line;
		unsigned long id;
		const char *root, *point, *fstype, *source, *superopts;
	} good[] = {
		{ "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup "
		    "cgroup rw,memory\n", 35, "/", "/sys/fs/cgroup/memory",
		    "cgroup", "cgroup", "rw,memory" },
		{ "29 23 0:26 /user.slice/u.scope /sys/fs/cgroup rw,nosuid "
		    "shared:4 master:1 - cgroup2 cgroup2 rw,nsdelegate\n", 29,
		    "/user.slice/u.scope", "/sys/fs/cgroup", "cgroup2",
		    "cgroup2", "rw,nsdelegate" },
		{ "812 23 0:90 / /tmp/a\\040b\\134c rw,nodev - fuse.spoolfs "
		    "/srv/my\\040spool\\011x rw,user_id=0", 812, "/",
		    "/tmp/a b\\c", "fuse.spoolfs", "/srv/my spool\tx",
		    "rw,user_id=0" },
		/* a newline in a name; backslashes that are no escape */
		{ "7 1 8:1 /a\\012b /m\\9\\04 rw - ext4 /dev/vda1 rw\n", 7,
		    "/a\nb", "/m\\9\\04", "ext4", "/dev/vda1", "rw" },
		/* no super options (not written by the kernels we know) */
		{ "8 1 0:5 / /x rw - tmpfs none", 8, "/", "/x", "tmpfs",
		    "none", "" },
	};
	static const char *bad[] = {
		"",
		"\n",
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime cgroup cgroup rw",
		"35 31 0:32 / /m - cgroup cgroup rw",	/* no options */
		"35 31 0:32 / /m rw - cgroup\n",	/* no source */
		"35 31 0:32 / /m rw - \n",
		"x5 31 0:32 / /m rw - tmpfs none rw",
		"-1x 31 0:32 / /m rw - tmpfs none rw",
		"99999999999999999999999 1 0:1 / /m rw - tmpfs none rw",
	};
	struct mountinfo m;
	char line[256];
	size_t i;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(good); i++) {
		snprintf(line, sizeof line, "%s", good[i].line);
		if (mountinfo_parse(line, &m) != 0) {
			TEXPECT(nfail, 0, "good row %zu refused", i);
			continue;
		}
		TEXPECT(nfail, m.id == good[i].id, "row %zu: id %lu", i, m.id);
		TEXPECT(nfail, strcmp(m.root, good[i].root) == 0,
		    "row %zu: root \"%s\"", i, m.root);
		TEXPECT(nfail, strcmp(m.point, good[i].point) == 0,
		    "row %zu: point \"%s\"", i, m.point);
		TEXPECT(nfail, strcmp(m.fstype, good[i].fstype) == 0,
		    "row %zu: type \"%s\"", i, m.fstype);
		TEXPECT(nfail, strcmp(m.source, good[i].source) == 0,
		    "row %zu: source \"%s\"", i, m.source);
		TEXPECT(nfail, strcmp(m.superopts, good[i].superopts) == 0,
		    "row %zu: super options \"%s\"", i, m.superopts);
	}
	for (i = 0; i < NELEM(bad); i++) {
		snprintf(line, sizeof line, "%s", bad[i]);
		TEXPECT(nfail, mountinfo_parse(line, &m) == -1,
		    "bad row %zu accepted: \"%s\"", i, bad[i]);
	}
	assert_int_equal(nfail, 0);
}

struct seen {
	int	calls;
	int	stop_at;	/* return 5 at this call */
	int	root;		/* saw the mount on "/" */
};

static int
count(void *arg, const struct mountinfo *m)
{
	struct seen *s = arg;

	s->calls++;
	if (strcmp(m->point, "/") == 0)
		s->root = 1;
	return s->calls == s->stop_at ? 5 : 0;
}

static void
test_walk(void **state)
{
	struct seen all = { 0, 0, 0 }, first = { 0, 1, 0 };

	(void)state;
	/* every mount namespace has a mount on / */
	assert_int_equal(mountinfo_each(count, &all), 0);
	assert_true(all.root);
	assert_true(all.calls >= 1);
	/* stopped at once, with the callback's value */
	assert_int_equal(mountinfo_each(count, &first), 5);
	assert_int_equal(first.calls, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
