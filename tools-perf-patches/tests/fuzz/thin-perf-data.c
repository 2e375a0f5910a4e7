// SPDX-License-Identifier: GPL-2.0
/*
 * thin-perf-data IN OUT BYTES: a smaller copy of the perf.data file IN
 * (in this machine's byte order), to seed a fuzzer with a real recording:
 * the same header, attrs and feature sections, and of the data every
 * record but samples, and as many samples, evenly spread, as fit in
 * BYTES in all. Layout as in tools/perf/Documentation/
 * perf.data-file-format.txt: the data section, then a table of the
 * feature sections, one for each bit set in the header, then what they
 * hold.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERF_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_RECORD_SAMPLE	9
#define NR_FEATURE_BITS		256

struct file_section {
	uint64_t	offset;
	uint64_t	size;
};

struct file_header {
	uint64_t		magic;
	uint64_t		size;
	uint64_t		attr_size;
	struct file_section	attrs;
	struct file_section	data;
	struct file_section	event_types;
	uint64_t		features[NR_FEATURE_BITS / 64];
};

struct record_header {
	uint32_t	type;
	uint16_t	misc;
	uint16_t	size;
};

static void die(const char *what)
{
	fprintf(stderr, "thin-perf-data: %s\n", what);
	exit(1);
}

static unsigned char *read_file(const char *path, size_t *size)
{
	unsigned char *buf = NULL;
	size_t len = 0, alloc = 0, n;
	FILE *f = fopen(path, "r");

	if (!f)
		die(strerror(errno));
	do {
		if (len == alloc) {
			alloc = alloc ? 2 * alloc : 1 << 20;
			buf = realloc(buf, alloc);
			if (!buf)
				die("out of memory");
		}
		n = fread(buf + len, 1, alloc - len, f);
		len += n;
	} while (n);
	fclose(f);
	*size = len;
	return buf;
}

int main(int argc, char **argv)
{
	struct file_section *feats, *out_feats;
	size_t size, nr_feats = 0, i, pos, end, nonsample = 0, samples = 0;
	size_t nr_samples = 0, budget, keep_every, kept = 0, feat_bytes = 0;
	struct file_header h;
	unsigned char *in;
	uint64_t at;
	FILE *out;

	if (argc != 4)
		die("usage: thin-perf-data IN OUT BYTES");
	budget = strtoul(argv[3], NULL, 0);
	in = read_file(argv[1], &size);
	if (size < sizeof(h))
		die("not a perf.data file");
	memcpy(&h, in, sizeof(h));
	if (h.magic != PERF_MAGIC || h.size != sizeof(h))
		die("not a perf.data file in this machine's byte order");
	end = h.data.offset + h.data.size;
	if (h.data.offset > size || end > size || end < h.data.offset)
		die("data section out of the file");

	for (i = 0; i < NR_FEATURE_BITS; i++)
		nr_feats += !!(h.features[i / 64] & (1ULL << (i % 64)));
	feats = calloc(nr_feats + 1, sizeof(*feats));
	out_feats = calloc(nr_feats + 1, sizeof(*out_feats));
	if (!feats || !out_feats)
		die("out of memory");
	if (end + nr_feats * sizeof(*feats) > size)
		die("feature table out of the file");
	memcpy(feats, in + end, nr_feats * sizeof(*feats));
	for (i = 0; i < nr_feats; i++) {
		if (feats[i].offset > size || feats[i].size > size - feats[i].offset)
			die("feature section out of the file");
		feat_bytes += feats[i].size;
	}

	for (pos = h.data.offset; pos + sizeof(struct record_header) <= end;) {
		struct record_header r;

		memcpy(&r, in + pos, sizeof(r));
		if (r.size < sizeof(r) || pos + r.size > end)
			break;
		if (r.type == PERF_RECORD_SAMPLE) {
			samples += r.size;
			nr_samples++;
		} else {
			nonsample += r.size;
		}
		pos += r.size;
	}
	end = pos;

	/* What is left for samples: keep one in keep_every */
	at = h.data.offset + nonsample + nr_feats * sizeof(*feats) + feat_bytes;
	keep_every = at < budget ? (samples + budget - at - 1) / (budget - at) : 0;
	if (keep_every < 1)
		keep_every = 1;

	out = fopen(argv[2], "w");
	if (!out)
		die(strerror(errno));
	/* header, ids and attrs: before the data, unchanged but data.size */
	fseek(out, h.data.offset, SEEK_SET);
	for (pos = h.data.offset; pos < end;) {
		struct record_header r;

		memcpy(&r, in + pos, sizeof(r));
		if (r.type != PERF_RECORD_SAMPLE || !(kept++ % keep_every))
			fwrite(in + pos, 1, r.size, out);
		pos += r.size;
	}
	at = ftell(out);
	h.data.size = at - h.data.offset;
	at += nr_feats * sizeof(*feats);
	for (i = 0; i < nr_feats; i++) {
		out_feats[i].offset = at;
		out_feats[i].size = feats[i].size;
		at += feats[i].size;
	}
	fwrite(out_feats, sizeof(*out_feats), nr_feats, out);
	for (i = 0; i < nr_feats; i++)
		fwrite(in + feats[i].offset, 1, feats[i].size, out);
	rewind(out);
	fwrite(in, 1, h.data.offset, out);
	rewind(out);
	fwrite(&h, sizeof(h), 1, out);
	if (fclose(out))
		die(strerror(errno));
	return 0;
}
