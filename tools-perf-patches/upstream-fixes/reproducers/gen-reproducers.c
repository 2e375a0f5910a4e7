// SPDX-License-Identifier: GPL-2.0
/*
 * Write the perf.data files that reproduce the bugs the upstream fixes in
 * ../ fix, one file per bug, into the directory given.
 *
 *   gen-reproducers DIR
 *
 * Each file is as small as a file perf reads can be: the header, one attr,
 * a data section of a record or two and the feature sections the bug
 * needs. The "other endian" files are big endian, written here by
 * swapping every field: perf reads them as a big-endian host's files.
 */
#include <byteswap.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What perf's headers define, as the file format has them. */
#define PERF_MAGIC2		0x32454c4946524550ULL	/* "PERFILE2" */
#define FILE_HEADER_SIZE	104
#define ATTR_SIZE_VER0		64
#define FILE_ATTR_SIZE		(ATTR_SIZE_VER0 + 16)
#define DATA_OFFSET		(FILE_HEADER_SIZE + FILE_ATTR_SIZE)

#define PERF_TYPE_SOFTWARE	1
#define PERF_SAMPLE_IP		(1U << 0)
#define PERF_SAMPLE_TID		(1U << 1)
#define PERF_SAMPLE_CPU		(1U << 7)
#define PERF_RECORD_MISC_USER	2

#define PERF_RECORD_SAMPLE		9
#define PERF_RECORD_NAMESPACES		16
#define PERF_RECORD_HEADER_ATTR		64
#define PERF_RECORD_HEADER_BUILD_ID	67
#define PERF_RECORD_FINISHED_ROUND	68

#define HEADER_BUILD_ID		2
#define HEADER_HOSTNAME		3
#define HEADER_NRCPUS		7
#define HEADER_CMDLINE		11
#define HEADER_EVENT_DESC	12
#define HEADER_CPU_TOPOLOGY	13
#define HEADER_PMU_MAPPINGS	16

#define BUILD_ID_RECORD_SIZE	36	/* with its pid */
#define OLD_BUILD_ID_RECORD_SIZE 32	/* without */
#define PATH_MAX_PERF		4096

#define MAX_FILE		(16 * 1024)
#define MAX_FEATURES		4

struct section {
	int feat;
	unsigned char buf[MAX_FILE];
	size_t len;
	size_t size;		/* what the section table says, 0: len */
};

struct file {
	int swap;		/* write the other byte order */
	unsigned char data[MAX_FILE];
	size_t data_len;
	uint64_t data_size;	/* what the header says, 0: data_len */
	struct section feat[MAX_FEATURES];
	int nr_feat;
	unsigned char tail[MAX_FILE];	/* bytes after the last section */
	size_t tail_len;
	size_t pad_to;		/* make the file this long, 0: as it is */
};

static void put(unsigned char *buf, size_t *len, const void *p, size_t n)
{
	if (*len + n > MAX_FILE) {
		fprintf(stderr, "gen-reproducers: a file is too large\n");
		exit(2);
	}
	memcpy(buf + *len, p, n);
	*len += n;
}

static void put16(const struct file *f, unsigned char *buf, size_t *len, uint16_t v)
{
	if (f->swap)
		v = bswap_16(v);
	put(buf, len, &v, sizeof(v));
}

static void put32(const struct file *f, unsigned char *buf, size_t *len, uint32_t v)
{
	if (f->swap)
		v = bswap_32(v);
	put(buf, len, &v, sizeof(v));
}

static void put64(const struct file *f, unsigned char *buf, size_t *len, uint64_t v)
{
	if (f->swap)
		v = bswap_64(v);
	put(buf, len, &v, sizeof(v));
}

static void put_record_header(const struct file *f, unsigned char *buf,
			      size_t *len, uint32_t type, uint16_t misc,
			      uint16_t size)
{
	put32(f, buf, len, type);
	put16(f, buf, len, misc);
	put16(f, buf, len, size);
}

/* A string of a feature section: its length, padded, then the bytes. */
static void put_string(const struct file *f, struct section *s,
		       const char *str, uint32_t len)
{
	size_t n = strlen(str);

	put32(f, s->buf, &s->len, len);
	put(s->buf, &s->len, str, n < len ? n : len);
	while (n++ < len)
		put(s->buf, &s->len, "", 1);
}

static struct section *add_feature(struct file *f, int feat)
{
	struct section *s = &f->feat[f->nr_feat++];

	s->feat = feat;
	return s;
}

/* A file of the other byte order needs HEADER_HOSTNAME to keep its features. */
static void add_hostname(struct file *f)
{
	put_string(f, add_feature(f, HEADER_HOSTNAME), "host", 8);
}

static void add_finished_round(struct file *f, uint16_t size)
{
	put_record_header(f, f->data, &f->data_len, PERF_RECORD_FINISHED_ROUND,
			  0, size);
	while (size-- > 8)
		put(f->data, &f->data_len, "", 1);
}

static int write_file(const char *dir, const char *name, struct file *f)
{
	unsigned char out[MAX_FILE * 2];
	uint64_t features[4] = { 0 };
	size_t len = 0, feat_len = 0, offset;
	char path[4096];
	FILE *fp;
	int i;

	for (i = 0; i < f->nr_feat; i++)
		features[f->feat[i].feat / 64] |= 1ULL << (f->feat[i].feat % 64);

	/* struct perf_file_header */
	put64(f, out, &len, PERF_MAGIC2);
	put64(f, out, &len, FILE_HEADER_SIZE);
	put64(f, out, &len, FILE_ATTR_SIZE);
	put64(f, out, &len, FILE_HEADER_SIZE);		/* attrs */
	put64(f, out, &len, FILE_ATTR_SIZE);
	put64(f, out, &len, DATA_OFFSET);		/* data */
	put64(f, out, &len, f->data_size ? f->data_size : f->data_len);
	put64(f, out, &len, 0);				/* event_types */
	put64(f, out, &len, 0);
	for (i = 0; i < 4; i++)
		put64(f, out, &len, features[i]);

	/* struct perf_file_attr: a cpu-clock sampling IP, TID and CPU */
	put32(f, out, &len, PERF_TYPE_SOFTWARE);
	put32(f, out, &len, ATTR_SIZE_VER0);
	put64(f, out, &len, 0);				/* config */
	put64(f, out, &len, 1);				/* sample_period */
	put64(f, out, &len, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CPU);
	put64(f, out, &len, 0);				/* read_format */
	put64(f, out, &len, 0);				/* flags */
	put32(f, out, &len, 0);				/* wakeup_events */
	put32(f, out, &len, 0);				/* bp_type */
	put64(f, out, &len, 0);				/* config1 */
	put64(f, out, &len, 0);				/* ids */
	put64(f, out, &len, 0);

	put(out, &len, f->data, f->data_len);

	/* The feature sections' table, in the order of their bits */
	offset = len + f->nr_feat * 16;
	for (i = 0; i < f->nr_feat; i++) {
		put64(f, out, &len, offset);
		put64(f, out, &len, f->feat[i].size ? f->feat[i].size : f->feat[i].len);
		offset += f->feat[i].len;
	}
	for (i = 0; i < f->nr_feat; i++) {
		put(out, &len, f->feat[i].buf, f->feat[i].len);
		feat_len += f->feat[i].len;
	}
	put(out, &len, f->tail, f->tail_len);
	while (len < f->pad_to)
		put(out, &len, "", 1);

	snprintf(path, sizeof(path), "%s/%s.data", dir, name);
	fp = fopen(path, "w");
	if (!fp || fwrite(out, 1, len, fp) != len || fclose(fp)) {
		fprintf(stderr, "gen-reproducers: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* 1: a cross-endian record of a type past those perf knows */
static void swap_unknown_type(struct file *f)
{
	f->swap = 1;
	add_hostname(f);
	put_record_header(f, f->data, &f->data_len, 0x12345678, 0, 8);
}

/* 2: a data section that ends past the end of the file, at a page end */
static void truncated(struct file *f)
{
	add_finished_round(f, 4096 - DATA_OFFSET);
	f->data_size = 65536;
}

/* 3: HEADER_EVENT_DESC with 8-byte attrs that say they are 136 bytes */
static void event_desc_swap(struct file *f)
{
	struct section *s;

	f->swap = 1;
	add_hostname(f);
	s = add_feature(f, HEADER_EVENT_DESC);
	put32(f, s->buf, &s->len, 1);			/* nre */
	put32(f, s->buf, &s->len, 8);			/* sz */
	put32(f, s->buf, &s->len, PERF_TYPE_SOFTWARE);
	put32(f, s->buf, &s->len, 136);			/* attr.size */
	put32(f, s->buf, &s->len, 0);			/* nr ids */
	put_string(f, s, "cpu-clock", 16);
	add_finished_round(f, 8);
}

/* 4: HEADER_CMDLINE whose string is longer than its section */
static void cmdline(struct file *f)
{
	struct section *s = add_feature(f, HEADER_CMDLINE);

	put32(f, s->buf, &s->len, 1);			/* nr */
	put32(f, s->buf, &s->len, 256);			/* the string's length */
	memset(f->tail, 'A', 255);
	f->tail_len = 256;
	add_finished_round(f, 8);
}

/* 5: a header string without a NUL: a PMU named "cpu" in 3 bytes */
static void string_nul(struct file *f)
{
	struct section *s = add_feature(f, HEADER_PMU_MAPPINGS);

	put32(f, s->buf, &s->len, 1);			/* pmu_num */
	put32(f, s->buf, &s->len, 4);			/* type */
	put32(f, s->buf, &s->len, 3);
	put(s->buf, &s->len, "cpu", 3);
	add_finished_round(f, 8);
}

/* 6: a cross-endian NAMESPACES record of no entries that says 2^40 */
static void namespaces_swap(struct file *f)
{
	f->swap = 1;
	add_hostname(f);
	put_record_header(f, f->data, &f->data_len, PERF_RECORD_NAMESPACES, 0, 24);
	put32(f, f->data, &f->data_len, 1);		/* pid */
	put32(f, f->data, &f->data_len, 1);		/* tid */
	put64(f, f->data, &f->data_len, 1ULL << 40);	/* nr_namespaces */
}

/* 7: a sample on CPU 65536 in a file of one CPU */
static void sample_cpu(struct file *f)
{
	struct section *s;

	s = add_feature(f, HEADER_NRCPUS);
	put32(f, s->buf, &s->len, 1);			/* nr_cpus_avail */
	put32(f, s->buf, &s->len, 1);			/* nr_cpus_online */
	s = add_feature(f, HEADER_CPU_TOPOLOGY);
	put32(f, s->buf, &s->len, 1);			/* sibling cores */
	put_string(f, s, "0", 64);
	put32(f, s->buf, &s->len, 1);			/* sibling threads */
	put_string(f, s, "0", 64);
	put32(f, s->buf, &s->len, 0);			/* core_id */
	put32(f, s->buf, &s->len, 0);			/* socket_id */

	put_record_header(f, f->data, &f->data_len, PERF_RECORD_SAMPLE,
			  PERF_RECORD_MISC_USER, 32);
	put64(f, f->data, &f->data_len, 0x400000);	/* ip */
	put32(f, f->data, &f->data_len, 1);		/* pid */
	put32(f, f->data, &f->data_len, 1);		/* tid */
	put32(f, f->data, &f->data_len, 65536);		/* cpu */
	put32(f, f->data, &f->data_len, 0);
}

/* 8: a build-id record whose file name is 4 KiB + 512 bytes */
static void build_id(struct file *f)
{
	struct section *s = add_feature(f, HEADER_BUILD_ID);
	uint16_t size = BUILD_ID_RECORD_SIZE + PATH_MAX_PERF + 512;

	put_record_header(f, s->buf, &s->len, PERF_RECORD_HEADER_BUILD_ID, 0, size);
	while (s->len < size)
		put(s->buf, &s->len, "B", 1);
	add_finished_round(f, 8);
}

/*
 * 9: the same in a section of the old layout, without the pid: a first
 * record that perf takes for the old layout's '[kernel.kallsyms]', then
 * the long one.
 */
static void build_id_quirk(struct file *f)
{
	struct section *s = add_feature(f, HEADER_BUILD_ID);
	uint16_t size = OLD_BUILD_ID_RECORD_SIZE + PATH_MAX_PERF + 512;
	size_t start;
	int i;

	put_record_header(f, s->buf, &s->len, PERF_RECORD_HEADER_BUILD_ID, 0,
			  OLD_BUILD_ID_RECORD_SIZE + 20);
	for (i = 0; i < 24; i++)			/* build id, size, pad */
		put(s->buf, &s->len, "\x11", 1);
	put(s->buf, &s->len, "[kernel.kallsyms]\0\0\0", 20);

	start = s->len;
	put_record_header(f, s->buf, &s->len, PERF_RECORD_HEADER_BUILD_ID, 0, size);
	while (s->len < start + size)
		put(s->buf, &s->len, "B", 1);
	add_finished_round(f, 8);
}

/*
 * 10: a HEADER_ATTR record of 24 bytes whose attr says it is larger: in
 * this byte order 4 KiB (the count of its ids wraps round), in the other
 * 2 GiB + 24 bytes (the swap of its ids starts 2 GiB past the record).
 */
static void put_attr_record(struct file *f, uint32_t attr_size)
{
	put_record_header(f, f->data, &f->data_len, PERF_RECORD_HEADER_ATTR, 0, 24);
	put32(f, f->data, &f->data_len, PERF_TYPE_SOFTWARE);
	put32(f, f->data, &f->data_len, attr_size);
	put64(f, f->data, &f->data_len, 0);		/* config */
	add_finished_round(f, 8);
}

static void attr_size(struct file *f)
{
	put_attr_record(f, 4096);
}

static void attr_size_swap(struct file *f)
{
	f->swap = 1;
	add_hostname(f);
	put_attr_record(f, 0x80000018);
}

static const struct {
	const char *name;
	void (*make)(struct file *f);
} reproducers[] = {
	{ "1-swap-unknown-type",	swap_unknown_type },
	{ "2-truncated",		truncated },
	{ "3-event-desc-swap",		event_desc_swap },
	{ "4-cmdline",			cmdline },
	{ "5-string-nul",		string_nul },
	{ "6-namespaces-swap",		namespaces_swap },
	{ "7-sample-cpu",		sample_cpu },
	{ "8-build-id",			build_id },
	{ "9-build-id-quirk",		build_id_quirk },
	{ "10-attr-size",		attr_size },
	{ "10-attr-size-swap",		attr_size_swap },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-reproducers DIR\n");
		return 2;
	}
	for (i = 0; i < sizeof(reproducers) / sizeof(reproducers[0]); i++) {
		static struct file f;

		memset(&f, 0, sizeof(f));
		reproducers[i].make(&f);
		if (write_file(argv[1], reproducers[i].name, &f))
			return 1;
	}
	return 0;
}
