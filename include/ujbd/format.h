/*
 * ujbd jbd2 on-disk format.
 *
 * CONTRACT SECTION (shared by src/jbd and src/ext4; the format helper owns
 * the rest of this file and fills in the layout of every block type, the
 * accessors and the checksums below it).
 */
#ifndef UJBD_FORMAT_H
#define UJBD_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ujbd/dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- where a journal lives -------------------------------------------- */

/* A run of journal blocks [lblk, lblk+len) stored at device blocks
 * [pblk, pblk+len), in units of the journal block size. */
struct jbd_extent {
	uint64_t lblk, pblk, len;
};

/*
 * A journal = a device, a map from journal block numbers to device blocks,
 * and the data device its tags point into. Built by the caller: identity
 * (one extent) for a standalone journal file or an external journal device,
 * the extents of inode 8 for the internal journal of an ext4 image
 * (src/ext4). The jbd layer never parses ext4.
 */
struct jbd_loc {
	struct dev *j_dev;              /* holds the journal */
	uint32_t j_blocksize;           /* journal block size, bytes */
	const struct jbd_extent *j_map; /* sorted by lblk, covering [0, j_len) */
	size_t j_nmap;
	uint64_t j_len;                 /* blocks the map covers (inode size or device) */
	uint64_t j_sb_block;            /* journal block of the jbd2 superblock:
					 * 0, or 1/2 on an external journal device */
	struct dev *j_data;             /* data device (may equal j_dev), or NULL
					 * when only reading the journal */
	uint64_t j_data_blocks;         /* blocks (of j_blocksize) of the data device;
					 * tags beyond it are corruption */
};

/* Map journal block lblk to a byte offset on j_dev. -EINVAL if unmapped. */
int jbd_loc_offset(const struct jbd_loc *loc, uint64_t lblk, uint64_t *off);

/* A one-line description of what went wrong, for the tools to print. */
struct jbd_err {
	int code;        /* the negative errno also returned */
	char msg[256];   /* "transaction 7: descriptor block 12: bad tail checksum" */
};

#ifdef __cplusplus
}
#endif
#endif
