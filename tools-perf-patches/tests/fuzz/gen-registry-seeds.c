// SPDX-License-Identifier: GPL-2.0
/*
 * gen-registry-seeds DIR: write inputs of fuzz-registry (registry-input.h)
 * to start from: registries sound and broken, and runtimes that change
 * them while perf reads them, one file each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry-input.h"

/*
 * The image: the descriptor, the chunk table, names, a page for one name
 * alone (to be freed), the chunks.
 */
#define DESC_AT		0
#define TABLE_AT	256
#define NAMES_AT	1024
#define NAMES_END	(3 * REGISTRY_PAGE)
#define LONE_NAME_AT	(3 * REGISTRY_PAGE)
#define CHUNKS_AT	(4 * REGISTRY_PAGE)
#define IMAGE_SIZE	(8 * REGISTRY_PAGE)

struct seed {
	struct registry_input	in;
	struct registry_change	changes[REGISTRY_MAX_CHANGES];
	unsigned char		image[IMAGE_SIZE];
	size_t			image_size;
	size_t			names_used;
};

static uint64_t addr_of(size_t offset)
{
	return REGISTRY_BASE + offset;
}

static struct registry_desc *desc_of(struct seed *s)
{
	return (struct registry_desc *)(s->image + DESC_AT);
}

static struct registry_entry *entry_of(struct seed *s, size_t chunk, size_t slot)
{
	struct registry_desc *d = desc_of(s);
	uint64_t *table = (uint64_t *)(s->image + TABLE_AT);

	return (struct registry_entry *)(s->image + (table[chunk] - REGISTRY_BASE) +
					 slot * d->entry_size);
}

static uint64_t add_name(struct seed *s, const char *name, size_t len)
{
	size_t at = NAMES_AT + s->names_used;

	if (at + len + 1 > NAMES_END) {
		fprintf(stderr, "gen-registry-seeds: no room for a name\n");
		exit(1);
	}
	memcpy(s->image + at, name, len);
	s->image[at + len] = '\0';
	s->names_used += len + 1;
	return addr_of(at);
}

static void add_change(struct seed *s, uint32_t before, uint32_t offset, uint64_t value)
{
	struct registry_change *c = &s->changes[s->in.nr_changes++];

	c->before = before;
	c->offset = offset;
	c->value = value;
}

/*
 * A registry of @nr_chunks chunks of @slots entries of @entry_size bytes,
 * every other slot live with a name of its own.
 */
static void init_registry(struct seed *s, uint32_t entry_size, size_t nr_chunks,
			  size_t slots)
{
	struct registry_desc *d = desc_of(s);
	uint64_t *table = (uint64_t *)(s->image + TABLE_AT);
	char name[64];
	size_t c, i, live = 0;

	memset(s, 0, sizeof(*s));
	s->image_size = IMAGE_SIZE;
	s->in.desc = DESC_AT;
	d->magic = REGISTRY_MAGIC;
	d->version = REGISTRY_VERSION;
	d->descriptor_size = sizeof(*d);
	d->entry_size = entry_size;
	d->seq = 2;
	d->chunks = addr_of(TABLE_AT);
	d->nr_chunks = nr_chunks;
	d->chunk_slots = slots;
	d->changes = 7;
	for (c = 0; c < nr_chunks; c++)
		table[c] = addr_of(CHUNKS_AT + c * slots * entry_size);
	for (c = 0; c < nr_chunks; c++) {
		for (i = 0; i < slots; i += 2) {
			struct registry_entry *e = entry_of(s, c, i);
			int len = snprintf(name, sizeof(name), "js::fn%zu_%zu", c, i);

			e->seq = 2;
			e->addr = 0x7f0000100000ULL + (c * slots + i) * 0x100;
			e->len = 0x80;
			e->code_index = c * slots + i + 1;
			e->name = add_name(s, name, len);
			e->name_len = len;
			e->kind = 1;
			live++;
		}
	}
	d->nr_live = live;
}

static uint32_t offset_in_entry(struct seed *s, size_t chunk, size_t slot, size_t field)
{
	return (unsigned char *)entry_of(s, chunk, slot) - s->image + field;
}

static void write_seed(const char *dir, const char *name, struct seed *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(&s->in, sizeof(s->in), 1, f) != 1 ||
	    fwrite(s->changes, sizeof(s->changes[0]), s->in.nr_changes, f) != s->in.nr_changes ||
	    fwrite(s->image, 1, s->image_size, f) != s->image_size || fclose(f)) {
		fprintf(stderr, "gen-registry-seeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static struct seed s;
	struct registry_desc *d;
	uint64_t *table;
	char utf8[2000];
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-registry-seeds DIR\n");
		return 2;
	}

	init_registry(&s, sizeof(struct registry_entry), 4, 64);
	write_seed(argv[1], "sound", &s);

	/* a later version's longer entries, and the first, without data */
	init_registry(&s, 72, 2, 64);
	write_seed(argv[1], "longer-entries", &s);
	init_registry(&s, 56, 2, 64);
	write_seed(argv[1], "entries-without-data", &s);

	/* every live entry with data: a line table of no line */
	init_registry(&s, sizeof(struct registry_entry), 2, 64);
	{
		static const uint32_t blob[4] = { 2, 8, 0, 1 };
		uint64_t at = add_name(&s, (const char *)blob, sizeof(blob));

		for (i = 0; i < 64; i += 2) {
			entry_of(&s, 0, i)->data = at;
			entry_of(&s, 0, i)->data_size = sizeof(blob);
		}
		/* and some that perf leaves out */
		entry_of(&s, 1, 0)->data = at;
		entry_of(&s, 1, 0)->data_size = 12;
		entry_of(&s, 1, 2)->data = addr_of(IMAGE_SIZE + REGISTRY_PAGE);
		entry_of(&s, 1, 2)->data_size = 16;
		entry_of(&s, 1, 4)->data = at;
		entry_of(&s, 1, 4)->data_size = 1U << 31;
	}
	write_seed(argv[1], "with-data", &s);

	/* a chunk being added: the second address still 0 */
	init_registry(&s, sizeof(struct registry_entry), 4, 64);
	((uint64_t *)(s.image + TABLE_AT))[1] = 0;
	write_seed(argv[1], "chunk-being-added", &s);

	/* the chunk table changing during the first reads, then settled */
	init_registry(&s, sizeof(struct registry_entry), 4, 64);
	desc_of(&s)->seq = 3;
	add_change(&s, 2, DESC_AT + 16, 4);
	write_seed(argv[1], "table-settles", &s);

	/* and one that never settles: perf gives up after 2 s */
	init_registry(&s, sizeof(struct registry_entry), 2, 64);
	desc_of(&s)->seq = 5;
	write_seed(argv[1], "table-stuck", &s);

	/* the table replaced between the descriptor and its second read */
	init_registry(&s, sizeof(struct registry_entry), 4, 64);
	add_change(&s, 1, DESC_AT + 16, 4);
	add_change(&s, 1, DESC_AT + 32, 2);
	write_seed(argv[1], "table-replaced", &s);

	/*
	 * Entries that change between perf's reads (0 the descriptor, 1 the
	 * table, 2 the descriptor's seq again, 3 the chunks, 4 the names, 5
	 * the chunks again): one while perf copies the chunks, one after;
	 * one unloaded and its name freed before perf reads the names; a
	 * slot freed and one taken before the second copy. The other 124
	 * entries are read.
	 */
	init_registry(&s, sizeof(struct registry_entry), 4, 64);
	add_change(&s, 3, offset_in_entry(&s, 0, 2, 0), 3);
	add_change(&s, 4, offset_in_entry(&s, 1, 4, 8), 0x7f0000200000ULL);
	memcpy(s.image + LONE_NAME_AT, "js::lone", 9);
	entry_of(&s, 3, 6)->name = addr_of(LONE_NAME_AT);
	entry_of(&s, 3, 6)->name_len = 8;
	add_change(&s, 4, offset_in_entry(&s, 3, 6, 0), 3);
	add_change(&s, 4, REGISTRY_UNMAP | LONE_NAME_AT, 0);
	add_change(&s, 5, offset_in_entry(&s, 2, 6, 32), 0);
	add_change(&s, 5, offset_in_entry(&s, 3, 7, 32), addr_of(NAMES_AT));
	add_change(&s, 5, offset_in_entry(&s, 3, 7, 40), 5);
	write_seed(argv[1], "changing", &s);

	/* names longer than the kernel takes, cut in a UTF-8 sequence */
	init_registry(&s, sizeof(struct registry_entry), 1, 16);
	for (i = 0; i + 2 < sizeof(utf8); i += 2)
		memcpy(utf8 + i, "\xc3\xa9", 2);
	entry_of(&s, 0, 0)->name = add_name(&s, utf8, 1999);
	entry_of(&s, 0, 0)->name_len = 1999;
	entry_of(&s, 0, 2)->name = add_name(&s, utf8 + 1, 1500);
	entry_of(&s, 0, 2)->name_len = 4095;
	entry_of(&s, 0, 6)->name = addr_of(IMAGE_SIZE - 3);
	entry_of(&s, 0, 6)->name_len = 3000;
	write_seed(argv[1], "long-names", &s);
	/* and one the registry may not have: broken */
	entry_of(&s, 0, 4)->name_len = 4096;
	write_seed(argv[1], "name-4096", &s);

	/* unreadable: a chunk in a hole, a name in a hole, the descriptor in one */
	init_registry(&s, sizeof(struct registry_entry), 4, 64);
	memcpy(s.image + LONE_NAME_AT, "js::lone", 9);
	entry_of(&s, 0, 0)->name = addr_of(LONE_NAME_AT);
	s.in.holes = 1ULL << (LONE_NAME_AT / REGISTRY_PAGE);
	write_seed(argv[1], "name-hole", &s);
	init_registry(&s, sizeof(struct registry_entry), 4, 64);
	((uint64_t *)(s.image + TABLE_AT))[2] = REGISTRY_BASE + REGISTRY_WINDOW;
	write_seed(argv[1], "chunk-outside", &s);
	init_registry(&s, sizeof(struct registry_entry), 4, 64);
	s.in.holes = 1;
	write_seed(argv[1], "descriptor-hole", &s);

	/*
	 * Many slots from few bytes: the table names the same chunk again
	 * and again, 8 MiB of them (perf reads up to 64 MiB; a seed of that
	 * size would take a tenth of a second an input), and past the 64.
	 */
	init_registry(&s, sizeof(struct registry_entry), 1, 256);
	d = desc_of(&s);
	table = (uint64_t *)(s.image + TABLE_AT);
	d->chunk_slots = 8192;
	d->nr_chunks = (8ULL << 20) / (d->chunk_slots * sizeof(struct registry_entry));
	for (i = 1; i < d->nr_chunks; i++)
		table[i] = table[0];
	write_seed(argv[1], "many-slots", &s);
	d->chunk_slots = 65536;
	d->nr_chunks = (64ULL << 20) / (d->chunk_slots * sizeof(struct registry_entry)) + 1;
	for (i = 1; i < d->nr_chunks; i++)
		table[i] = table[0];
	write_seed(argv[1], "too-many-slots", &s);

	/* out of bounds: entry size, a chunk size not a power of two, version */
	init_registry(&s, sizeof(struct registry_entry), 1, 64);
	desc_of(&s)->entry_size = 264;
	write_seed(argv[1], "entry-too-large", &s);
	desc_of(&s)->entry_size = sizeof(struct registry_entry);
	desc_of(&s)->chunk_slots = 48;
	write_seed(argv[1], "slots-not-power-of-two", &s);
	desc_of(&s)->chunk_slots = 64;
	desc_of(&s)->version = 3;
	write_seed(argv[1], "version-3", &s);
	return 0;
}
