/*
 * crc32c.c: the two CRCs of the jbd2 format.
 *
 * CRC-32C (Castagnoli, reflected) guards every v2/v3 journal block; CRC-32
 * (MSB-first, polynomial 0x04C11DB7) only the old COMPAT_CHECKSUM commit.
 * Neither inverts inside the primitive: callers pass the initial value, as
 * jbd2 and libext2fs do.
 *
 * The one idea: on x86-64 with SSE4.2 the `crc32` instruction computes
 * CRC-32C eight bytes per instruction; elsewhere slicing-by-8 tables (eight
 * lookups per 8 bytes) do nearly as well. The tables are built by a load
 * time constructor, before any thread can call in, so no lock is needed.
 *
 * The instruction takes 3 cycles but the CPU can start one each cycle, so
 * a buffer of at least 3 x CRC_STRIDE bytes is cut into three streams
 * computed side by side, then joined: the CRC is linear, so the CRC of A
 * then B is CRC(A) times x^(8|B|), plus the CRC of B from 0 (GF(2)
 * polynomials modulo the CRC's; the two powers of x are constants, and
 * multiplying by one is four table lookups). A 4 KiB block takes under half
 * the time. What is left under a round but at least 3 x CRC_STRIDE_SHORT
 * bytes gets one round of that shorter stride: a 4 KiB commit block's
 * checksum covers 4076 bytes from an unaligned start, just short of a full
 * round, and it is computed twice per commit (built, then checked).
 */
#include <stdatomic.h>
#include <string.h>

#include "ujbd/format.h"

#define CRC32C_POLY_REFLECTED 0x82F63B78u
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC32C_X86 1 /* the SSE4.2 path, chosen at run time */
#endif
#define CRC32_POLY 0x04C11DB7u

static uint32_t crc32c_tab[8][256];
static uint32_t crc32be_tab[8][256];

static void crc32c_build(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? CRC32C_POLY_REFLECTED : 0);
		crc32c_tab[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int t = 1; t < 8; t++)
			crc32c_tab[t][n] = (crc32c_tab[t - 1][n] >> 8) ^
					   crc32c_tab[0][crc32c_tab[t - 1][n] & 0xFF];
}

static void crc32be_build(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n << 24;
		for (int k = 0; k < 8; k++)
			c = (c << 1) ^ ((c & 0x80000000u) ? CRC32_POLY : 0);
		crc32be_tab[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int t = 1; t < 8; t++)
			crc32be_tab[t][n] = (crc32be_tab[t - 1][n] << 8) ^
					    crc32be_tab[0][crc32be_tab[t - 1][n] >> 24];
}

#ifdef CRC32C_X86
/* a times b modulo the CRC-32C polynomial, both reflected (bit 31 is the
 * coefficient of x^0, bit 0 that of x^31). */
static uint32_t crc32c_mulmod(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (int i = 31; i >= 0; i--) {
		p ^= b & (0u - ((a >> i) & 1));
		b = (b >> 1) ^ (CRC32C_POLY_REFLECTED & (0u - (b & 1))); /* b * x */
	}
	return p;
}

/* x^(8 n) modulo the polynomial, reflected: what n zero bytes multiply a
 * CRC by. */
static uint32_t crc32c_xpow8n(uint64_t n)
{
	uint32_t r = 0x80000000u, sq = 0x00800000u; /* x^0, x^8 */

	for (; n; n >>= 1) {
		if (n & 1)
			r = crc32c_mulmod(r, sq);
		sq = crc32c_mulmod(sq, sq);
	}
	return r;
}

/* The stride of the three streams: 170 instructions each, so that a 4 KiB
 * block is one round (and 16 bytes). Multiplying by x^(8 stride) and by
 * x^(16 stride) is linear in the other factor, so each is four table
 * lookups, one per byte of it. */
#define CRC_STRIDE 1360u
/* 3 x 1352 = 4056 bytes: the 4072 of a commit block's checksum after its
 * first 20 bytes and the 4 up to alignment, with 16 left over. */
#define CRC_STRIDE_SHORT 1352u
static uint32_t crc_k1_tab[4][256], crc_k2_tab[4][256];
static uint32_t crc_s1_tab[4][256], crc_s2_tab[4][256]; /* the same for the short stride */

static void crc_shift_build(uint32_t tab[4][256], uint32_t k)
{
	for (uint32_t i = 0; i < 4; i++)
		for (uint32_t v = 0; v < 256; v++)
			tab[i][v] = crc32c_mulmod(v << (8 * i), k);
}

static inline uint32_t crc_shift(const uint32_t tab[4][256], uint32_t a)
{
	return tab[0][a & 0xFF] ^ tab[1][(a >> 8) & 0xFF] ^ tab[2][(a >> 16) & 0xFF] ^
	       tab[3][a >> 24];
}
#endif

__attribute__((constructor))
static void crc_tables_init(void)
{
	crc32c_build();
	crc32be_build();
#ifdef CRC32C_X86
	crc_shift_build(crc_k1_tab, crc32c_xpow8n(CRC_STRIDE));
	crc_shift_build(crc_k2_tab, crc32c_xpow8n(2 * CRC_STRIDE));
	crc_shift_build(crc_s1_tab, crc32c_xpow8n(CRC_STRIDE_SHORT));
	crc_shift_build(crc_s2_tab, crc32c_xpow8n(2 * CRC_STRIDE_SHORT));
#endif
}

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint32_t jbd_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len >= 8) {
		uint64_t v = load_le64(p) ^ crc;
		crc = crc32c_tab[7][v & 0xFF] ^ crc32c_tab[6][(v >> 8) & 0xFF] ^
		      crc32c_tab[5][(v >> 16) & 0xFF] ^ crc32c_tab[4][(v >> 24) & 0xFF] ^
		      crc32c_tab[3][(v >> 32) & 0xFF] ^ crc32c_tab[2][(v >> 40) & 0xFF] ^
		      crc32c_tab[1][(v >> 48) & 0xFF] ^ crc32c_tab[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc32c_tab[0][(crc ^ *p++) & 0xFF];
	return crc;
}

#ifdef CRC32C_X86
#include <cpuid.h>

/* One round: the CRC c of what came before, continued over 3 x stride
 * bytes at p as three streams joined; k1 and k2 multiply by x^(8 stride)
 * and x^(16 stride). */
__attribute__((target("sse4.2"), always_inline))
static inline uint64_t crc3_round(uint64_t c, const uint8_t *p, size_t stride,
				  const uint32_t k1[4][256], const uint32_t k2[4][256])
{
	uint64_t c1 = 0, c2 = 0;

	for (size_t i = 0; i < stride; i += 8) {
		uint64_t v0, v1, v2;

		memcpy(&v0, p + i, 8);
		memcpy(&v1, p + stride + i, 8);
		memcpy(&v2, p + 2 * stride + i, 8);
		c = __builtin_ia32_crc32di(c, v0);
		c1 = __builtin_ia32_crc32di(c1, v1);
		c2 = __builtin_ia32_crc32di(c2, v2);
	}
	return crc_shift(k2, (uint32_t)c) ^ crc_shift(k1, (uint32_t)c1) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 3 * CRC_STRIDE) {
		c = crc3_round(c, p, CRC_STRIDE, crc_k1_tab, crc_k2_tab);
		p += 3 * CRC_STRIDE;
		len -= 3 * CRC_STRIDE;
	}
	if (len >= 3 * CRC_STRIDE_SHORT) {
		c = crc3_round(c, p, CRC_STRIDE_SHORT, crc_s1_tab, crc_s2_tab);
		p += 3 * CRC_STRIDE_SHORT;
		len -= 3 * CRC_STRIDE_SHORT;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}

static bool cpu_has_sse42(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return false;
	return (c & bit_SSE4_2) != 0;
}
#else
static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	return jbd_crc32c_sw(crc, buf, len);
}

static bool cpu_has_sse42(void)
{
	return false;
}
#endif

/* 0 unknown, 1 software, 2 hardware. */
static atomic_int crc32c_impl;

bool jbd_crc32c_hw(void)
{
	int impl = atomic_load_explicit(&crc32c_impl, memory_order_relaxed);

	if (impl == 0) {
		impl = cpu_has_sse42() ? 2 : 1;
		atomic_store_explicit(&crc32c_impl, impl, memory_order_relaxed);
	}
	return impl == 2;
}

uint32_t jbd_crc32c(uint32_t crc, const void *buf, size_t len)
{
	if (jbd_crc32c_hw())
		return crc32c_hw(crc, buf, len);
	return jbd_crc32c_sw(crc, buf, len);
}

static inline uint64_t load_be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

uint32_t jbd_crc32_be(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len >= 8) {
		uint64_t v = load_be64(p);
		uint32_t hi = (uint32_t)(v >> 32) ^ crc, lo = (uint32_t)v;
		crc = crc32be_tab[7][hi >> 24] ^ crc32be_tab[6][(hi >> 16) & 0xFF] ^
		      crc32be_tab[5][(hi >> 8) & 0xFF] ^ crc32be_tab[4][hi & 0xFF] ^
		      crc32be_tab[3][lo >> 24] ^ crc32be_tab[2][(lo >> 16) & 0xFF] ^
		      crc32be_tab[1][(lo >> 8) & 0xFF] ^ crc32be_tab[0][lo & 0xFF];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc << 8) ^ crc32be_tab[0][(crc >> 24) ^ *p++];
	return crc;
}
