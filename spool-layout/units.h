/*
 * units.h - sizes and durations as users write them.
 *
 * Sizes (bytes):  "4G" "4GiB" "512M" "1.5G" "100K" "2T" "1048576"
 *	K M G T P and KiB MiB GiB TiB PiB are powers of 1024, as every
 *	batch system means them (sbatch --mem=4G is 4096 MiB);
 *	KB MB GB TB PB are powers of 1000, as dask means them ("4GB").
 *	A bare number is bytes.  Case of the unit is ignored except that
 *	"b" alone is not accepted as bits.
 * Durations (seconds):
 *	"SS"  "MM:SS"  "HH:MM:SS"  "D-HH"  "D-HH:MM"  "D-HH:MM:SS"
 *	(Slurm's forms, except that a bare number is seconds, not
 *	minutes), and "90s" "90m" "2h" "1d" "1h30m".
 * Both reject negative values, garbage and overflow; they return 0 on
 * success and -1 with a static reason in *why.
 */
#ifndef UNITS_H
#define UNITS_H

#include <stddef.h>
#include <stdint.h>

int	units_parse_size(const char *s, uint64_t *bytes, const char **why);
int	units_parse_duration(const char *s, uint64_t *seconds, const char **why);
/* Like a duration, plus "250ms" and "0.5s"/"1.5" (fractional seconds). */
int	units_parse_ms(const char *s, uint64_t *ms, const char **why);
int	units_parse_uint(const char *s, uint64_t max, uint64_t *out,
	    const char **why);
int	units_parse_int(const char *s, int64_t min, int64_t max, int64_t *out,
	    const char **why);

/*
 * Bytes in whole MiB, rounded up: how memory is counted between spoold,
 * its workers and the batch systems (a job asking for "4GB" is granted
 * 3815 MiB).
 */
uint64_t units_mib_up(uint64_t bytes);

/* "4G", "1536M", "1000": exact, in the largest binary unit that divides. */
char	*units_format_size(uint64_t bytes, char *out, size_t size);
/* "23.5G", "512M": rounded to one decimal, for people. */
char	*units_format_human(uint64_t bytes, char *out, size_t size);
/* "45", "1:30", "1:30:00", "2-00:00:00" */
char	*units_format_duration(uint64_t seconds, char *out, size_t size);

#endif
