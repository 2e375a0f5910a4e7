/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The input of fuzz-registry: a JIT code registry (Documentation/
 * jit-code-registry.txt in tools/perf) as a process has it in its memory,
 * and how that process changes it while perf reads it.
 *
 *   struct registry_input	the header
 *   struct registry_change	nr_changes of them
 *   the image			mapped at REGISTRY_BASE, zeros after it up
 *				to REGISTRY_WINDOW, nothing beyond
 *
 * Addresses in the image (the chunk table, chunks, names) are addresses
 * in that window: REGISTRY_BASE + offset. Before perf's read number
 * 'before' (each process_vm_readv() call is one, from 0), the change
 * writes 'value' at 'offset' of the window, or, with REGISTRY_UNMAP in
 * offset, unmaps the page there (the runtime freed it).
 */
#ifndef REGISTRY_INPUT_H
#define REGISTRY_INPUT_H

#include <stdint.h>

#define REGISTRY_BASE		0x300000000000ULL
#define REGISTRY_WINDOW		(128ULL << 20)
#define REGISTRY_PAGE		4096
#define REGISTRY_UNMAP		0x80000000U
#define REGISTRY_MAX_CHANGES	64

struct registry_input {
	uint32_t	desc;		/* offset of the descriptor */
	uint16_t	nr_changes;	/* at most REGISTRY_MAX_CHANGES */
	uint16_t	flags;		/* 0 */
	uint64_t	holes;		/* bit i: page i not mapped */
};

struct registry_change {
	uint32_t	before;
	uint32_t	offset;
	uint64_t	value;
};

/* The registry, version 2, as jit-code-registry.txt lays it out. */
struct registry_desc {
	uint32_t	magic;
	uint32_t	version;
	uint32_t	descriptor_size;
	uint32_t	entry_size;
	uint64_t	seq;
	uint64_t	chunks;
	uint64_t	nr_chunks;
	uint64_t	chunk_slots;
	uint64_t	nr_live;
	uint64_t	changes;
};

struct registry_entry {
	uint64_t	seq;
	uint64_t	addr;
	uint64_t	len;
	uint64_t	code_index;
	uint64_t	name;
	uint32_t	name_len;
	uint32_t	kind;
	uint32_t	tier;
	uint32_t	data_size;	/* bytes at data, in 64-byte entries */
	uint64_t	data;
};

#define REGISTRY_MAGIC		0x4a495452	/* "JITR" */
#define REGISTRY_VERSION	2

#endif /* REGISTRY_INPUT_H */
