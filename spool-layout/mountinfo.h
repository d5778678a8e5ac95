/*
 * mountinfo.h - the lines of /proc/self/mountinfo (proc(5)), parsed:
 *
 *	ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAG...] - TYPE SOURCE SUPEROPTIONS
 *
 * The kernel writes a space, tab, newline or backslash in ROOT,
 * MOUNTPOINT and SOURCE as an octal escape (\040 ...); those three come
 * back unescaped.  For ckworker (where the cgroup hierarchies are
 * mounted) and "spool shutdown" (the spool's spoolfs mounts on this
 * host).
 */
#ifndef MOUNTINFO_H
#define MOUNTINFO_H

struct mountinfo {
	unsigned long id;	/* the kernel may reuse it after an unmount */
	const char *root;	/* of the mount, within its filesystem */
	const char *point;	/* where it is mounted */
	const char *fstype;	/* "cgroup2", "fuse.spoolfs" ... */
	const char *source;
	const char *superopts;	/* the filesystem's options: "rw,memory" */
};

/* Parse one line in place; 0, or -1 when it is not such a line. */
int	mountinfo_parse(char *line, struct mountinfo *m);

/*
 * Call fn for each mount of /proc/self/mountinfo (this process's mount
 * namespace) until it returns nonzero, which is returned; 0 when all
 * were seen; -1 with errno when the file cannot be opened or read.
 * What m points to lasts until fn returns.
 */
int	mountinfo_each(int (*fn)(void *arg, const struct mountinfo *m),
	    void *arg);

#endif
