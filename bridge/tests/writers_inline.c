// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Built with -O2: glibc's <stdio.h> then inlines putc_unlocked() and a
 * fwrite_unlocked() of a small constant size into stores to the FILE's
 * buffer. No hook sees these bytes; the bridge's self-check must.
 */
#include "fake.h"

void wi_putc_unlocked(FILE *fp, const char *s)
{
	while (*s)
		putc_unlocked(*s++, fp);
}

/* @s in pieces of 8 bytes, then byte by byte: each call inlined. */
void wi_fwrite_unlocked8(FILE *fp, const char *s)
{
	size_t len = 0;

	while (s[len])
		len++;
	for (; len >= 8; s += 8, len -= 8)
		fwrite_unlocked(s, 8, 1, fp);
	for (; len; s++, len--)
		fwrite_unlocked(s, 1, 1, fp);
}
