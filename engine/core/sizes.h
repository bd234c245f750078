/* Message-size lists.  Grammar (shared with the Python front end, see
 * tests/data/sizes_vectors.json):
 *   list  := item ("," item)*
 *   item  := size | size "-" size [":" step]
 *   step  := "x" factor | "+" size          (default x2: powers of two from the start)
 *   size  := digits [K|Ki|KiB|M|Mi|MiB|G|Gi|GiB|B]   (binary multiples, case-insensitive)
 * A range starting at 0 continues 1, 2, 4, ...  Results are sorted and unique.  "KB", "MB"
 * and "GB" are refused as ambiguous between 10^3 and 2^10. */
#ifndef SCOPE_SIZES_H
#define SCOPE_SIZES_H
#include <stddef.h>

#define SIZES_MAX_BYTES (1ull << 30)
#define SIZES_MAX_COUNT 4096

/* Returns the number of sizes, or -1 with a message in err. */
long sizes_parse(const char *spec, unsigned long long *out, size_t max_out, char *err, size_t errlen);
/* One size, at most max bytes (a byte-valued parameter: 512M); 0, or -1 with the reason in err. */
int sizes_parse_one(const char *text, unsigned long long max, unsigned long long *v, char *err, size_t errlen);

#endif
