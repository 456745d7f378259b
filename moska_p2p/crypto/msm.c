/* A variable-time multi-scalar multiplication on ristretto255, over libdecaf's public point
 * functions (moska_p2p/crypto/msm.py compiles this at first use; see its docstring for why).
 *
 * Every input is public (a verifier's batch: points received, scalars from proofs and the
 * verifier's own random weights), so the running time may depend on the scalars.
 *
 * Two methods, both written from the literature:
 * - Straus' interleaving with signed sliding windows (w-NAF): per point a table of the odd
 *   multiples P, 3P, ..., (2^(w-1)-1)P, one shared chain of doublings, and one addition per
 *   non-zero digit (about b/(w+1) for a b-bit scalar);
 * - Pippenger's bucket method with signed c-bit digits: per window every point is added into
 *   the bucket of its digit, and the buckets are summed with 2 * 2^(c-1) additions.
 * moska_msm picks by size unless told (Straus is faster below about 100 points).
 *
 * No header of libdecaf is needed (a machine may have the library without its -dev package):
 * the few prototypes are declared here, as libdecaf 1.0 exports them. The library is loaded
 * by the caller with RTLD_GLOBAL before this object, so the symbols resolve against it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t limb[32];
} __attribute__((aligned(32))) point_t; /* decaf_255_point_s: x, y, z, t, 64 bytes each */

/* decaf/common.h: a word (and decaf_bool_t) is 64 bits on 64-bit targets, 32 otherwise. */
#if defined(__ILP64__) || defined(__amd64__) || defined(__x86_64__) || \
    (((__UINT_FAST32_MAX__) >> 30) >> 30)
typedef uint64_t decaf_bool_t;
#else
typedef uint32_t decaf_bool_t;
#endif
typedef int decaf_error_t; /* DECAF_SUCCESS is -1 */

extern const point_t decaf_255_point_identity[1];
extern const point_t decaf_255_point_base[1];
decaf_error_t decaf_255_point_decode(point_t *pt, const uint8_t ser[32], decaf_bool_t allow_id);
void decaf_255_point_encode(uint8_t ser[32], const point_t *pt);
void decaf_255_point_add(point_t *out, const point_t *a, const point_t *b);
void decaf_255_point_sub(point_t *out, const point_t *a, const point_t *b);
void decaf_255_point_double(point_t *out, const point_t *a);
decaf_bool_t decaf_255_point_eq(const point_t *a, const point_t *b);

#define DIGITS 258 /* a 256-bit scalar has a w-NAF of at most 257 digits */

/* Load a 256-bit little-endian integer into five 64-bit limbs (the fifth for carries). */
static void load(uint64_t k[5], const uint8_t *s) {
    for (int i = 0; i < 4; i++) {
        uint64_t v = 0;
        for (int b = 7; b >= 0; b--) v = (v << 8) | s[8 * i + b];
        k[i] = v;
    }
    k[4] = 0;
}

static int is_zero(const uint64_t k[5]) { return !(k[0] | k[1] | k[2] | k[3] | k[4]); }

static void add_small(uint64_t k[5], uint64_t d) {
    for (int i = 0; i < 5 && d; i++) {
        uint64_t before = k[i];
        k[i] += d;
        d = k[i] < before;
    }
}

static void sub_small(uint64_t k[5], uint64_t d) {
    for (int i = 0; i < 5 && d; i++) {
        uint64_t before = k[i];
        k[i] -= d;
        d = k[i] > before;
    }
}

static void shift_right(uint64_t k[5], int bits) {
    for (int i = 0; i < 4; i++) k[i] = (k[i] >> bits) | (k[i + 1] << (64 - bits));
    k[4] >>= bits;
}

/* The w-NAF of a scalar: digits odd in (-2^(w-1), 2^(w-1)) or zero, any w non-zero digits
 * apart. Returns the number of digits. */
static int wnaf(int8_t digits[DIGITS], const uint8_t *scalar, int w) {
    uint64_t k[5];
    load(k, scalar);
    memset(digits, 0, DIGITS);
    int length = 0;
    const int64_t width = (int64_t)1 << w, half = width >> 1;
    while (!is_zero(k)) {
        if (k[0] & 1) {
            int64_t d = (int64_t)(k[0] & (uint64_t)(width - 1));
            if (d >= half) d -= width;
            digits[length] = (int8_t)d;
            if (d > 0) sub_small(k, (uint64_t)d);
            else add_small(k, (uint64_t)(-d));
        }
        shift_right(k, 1);
        length++;
    }
    return length;
}

/* Decode every point, refusing a set top bit (libsodium ignores it; the protocol refuses it)
 * and, unless allowed, the identity; negate those the caller marks. */
static int decode_all(point_t *out, const uint8_t *encodings, const uint8_t *negate, size_t n,
                      int allow_identity) {
    const decaf_bool_t allow = allow_identity ? (decaf_bool_t)-1 : 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = encodings + 32 * i;
        if ((e[31] & 0x80) || decaf_255_point_decode(&out[i], e, allow) != -1) return (int)i + 1;
        if (negate && negate[i]) decaf_255_point_sub(&out[i], decaf_255_point_identity, &out[i]);
    }
    return 0;
}

/* The odd multiples P, 3P, ..., (2^(w-1) - 1) P of a point, for w-NAF digits. */
static void odd_multiples(point_t *row, const point_t *point, int entries) {
    row[0] = *point;
    if (entries > 1) {
        point_t twice;
        decaf_255_point_double(&twice, point);
        for (int m = 1; m < entries; m++) decaf_255_point_add(&row[m], &row[m - 1], &twice);
    }
}

/* Straus over ready tables: acc = sum_i sign_i * digits_i(tables_i), top digits at most. */
static void interleave(point_t *acc, const point_t *const *tables, const int8_t *const *digits,
                       const int *negative, int count, int top) {
    *acc = decaf_255_point_identity[0];
    int started = 0;
    for (int bit = top - 1; bit >= 0; bit--) {
        if (started) decaf_255_point_double(acc, acc);
        for (int i = 0; i < count; i++) {
            int d = digits[i][bit];
            if (!d) continue;
            if (negative[i]) d = -d;
            const point_t *entry = &tables[i][(d > 0 ? d : -d) >> 1];
            if (!started) {
                if (d > 0) *acc = *entry;
                else decaf_255_point_sub(acc, decaf_255_point_identity, entry);
                started = 1;
            } else if (d > 0) {
                decaf_255_point_add(acc, acc, entry);
            } else {
                decaf_255_point_sub(acc, acc, entry);
            }
        }
    }
}

static int straus(point_t *acc, const point_t *points, const uint8_t *scalars, size_t n, int w) {
    const int entries = 1 << (w - 2); /* P, 3P, ..., (2^(w-1) - 1) P */
    point_t *table = NULL;
    int8_t *digits = malloc(n * DIGITS);
    const point_t **rows = malloc(n * sizeof(*rows));
    const int8_t **row_digits = malloc(n * sizeof(*row_digits));
    int *negative = calloc(n, sizeof(int)); /* negated points were negated when decoded */
    int status = -1;
    if (!digits || !rows || !row_digits || !negative ||
        posix_memalign((void **)&table, 32, n * entries * sizeof(point_t)))
        goto done;
    int top = 0;
    for (size_t i = 0; i < n; i++) {
        int length = wnaf(digits + i * DIGITS, scalars + 32 * i, w);
        if (length > top) top = length;
        odd_multiples(table + i * entries, &points[i], entries);
        rows[i] = table + i * entries;
        row_digits[i] = digits + i * DIGITS;
    }
    interleave(acc, rows, row_digits, negative, (int)n, top);
    status = 0;
done:
    free(table);
    free(digits);
    free(rows);
    free(row_digits);
    free(negative);
    return status;
}

/* Signed c-bit digits of a scalar, least significant first: each in [-2^(c-1), 2^(c-1)). */
static int signed_digits(int16_t *digits, int windows, const uint8_t *scalar, int c) {
    uint64_t k[5];
    load(k, scalar);
    const int64_t width = (int64_t)1 << c, half = width >> 1;
    int last = -1;
    for (int i = 0; i < windows; i++) {
        int64_t d = (int64_t)(k[0] & (uint64_t)(width - 1));
        shift_right(k, c);
        if (d >= half) {
            d -= width;
            add_small(k, 1);
        }
        digits[i] = (int16_t)d;
        if (d) last = i;
    }
    return last + 1;
}

static int pippenger(point_t *acc, const point_t *points, const uint8_t *scalars, size_t n,
                     int c) {
    const int windows = (256 + c) / c + 1;
    const int buckets = 1 << (c - 1);
    int16_t *digits = malloc(n * windows * sizeof(int16_t));
    point_t *bucket = NULL;
    uint8_t *used = malloc(buckets);
    if (!digits || !used || posix_memalign((void **)&bucket, 32, buckets * sizeof(point_t))) {
        free(digits);
        free(used);
        return -1;
    }
    int top = 0;
    for (size_t i = 0; i < n; i++) {
        int length = signed_digits(digits + i * windows, windows, scalars + 32 * i, c);
        if (length > top) top = length;
    }
    *acc = decaf_255_point_identity[0];
    int started = 0;
    for (int window = top - 1; window >= 0; window--) {
        if (started)
            for (int b = 0; b < c; b++) decaf_255_point_double(acc, acc);
        memset(used, 0, buckets);
        for (size_t i = 0; i < n; i++) {
            int d = digits[i * windows + window];
            if (!d) continue;
            int index = (d > 0 ? d : -d) - 1;
            if (!used[index]) {
                if (d > 0) bucket[index] = points[i];
                else decaf_255_point_sub(&bucket[index], decaf_255_point_identity, &points[i]);
                used[index] = 1;
            } else if (d > 0) {
                decaf_255_point_add(&bucket[index], &bucket[index], &points[i]);
            } else {
                decaf_255_point_sub(&bucket[index], &bucket[index], &points[i]);
            }
        }
        /* sum over b of (b + 1) * bucket[b], as running sums from the top bucket down */
        point_t running, total;
        int have_running = 0, have_total = 0;
        for (int b = buckets - 1; b >= 0; b--) {
            if (used[b]) {
                if (have_running) decaf_255_point_add(&running, &running, &bucket[b]);
                else running = bucket[b];
                have_running = 1;
            }
            if (have_running) {
                if (have_total) decaf_255_point_add(&total, &total, &running);
                else total = running;
                have_total = 1;
            }
        }
        if (have_total) {
            if (started) decaf_255_point_add(acc, acc, &total);
            else *acc = total;
            started = 1;
        }
    }
    free(bucket);
    free(used);
    free(digits);
    return 0;
}

/* sum_i (-1)^negate[i] scalars[i] * points[i] into out (32 bytes, its encoding); negate may
 * be NULL (all positive). Negating a point instead of its scalar keeps a short scalar short.
 * method 0: pick by size; 1: Straus with window w = param; 2: Pippenger with c = param.
 * Returns 0, or i + 1 when point i is not a canonical encoding (or is the identity and
 * allow_identity is 0), or -1 when out of memory. */
int moska_msm(uint8_t out[32], const uint8_t *encodings, const uint8_t *scalars,
              const uint8_t *negate, size_t n, int allow_identity, int method, int param) {
    point_t *points = NULL, acc;
    if (n == 0) {
        memset(out, 0, 32);
        return 0;
    }
    if (posix_memalign((void **)&points, 32, n * sizeof(point_t))) return -1;
    int status = decode_all(points, encodings, negate, n, allow_identity);
    if (status == 0) {
        if (method == 0) {
            method = n < 100 ? 1 : 2;
            param = method == 1 ? 5 : (n < 600 ? 6 : 7);
        }
        status = method == 1 ? straus(&acc, points, scalars, n, param)
                             : pippenger(&acc, points, scalars, n, param);
        if (status == 0) decaf_255_point_encode(out, &acc);
    }
    free(points);
    return status;
}

/* The shuffle argument's chain commitments (PROTOCOL.md 11.3), for k = 0 .. n-1:
 *     out_k = s_hat_k * B + s_prime_k * C_{k-1} - c * C_k,   C_{-1} = H_0,
 * each encoded into out + 32 k. One table of odd multiples per point serves both products it
 * takes part in. Returns 0; 1 when H_0, k + 2 when C_k is not a valid non-identity encoding;
 * -1 when out of memory. */
int moska_chain(uint8_t *out, const uint8_t h0[32], const uint8_t *chain, const uint8_t *s_hat,
                const uint8_t *s_prime, const uint8_t c[32], size_t n) {
    enum { W = 5, ENTRIES = 1 << (W - 2) };
    point_t *points = NULL, *tables = NULL;
    if (posix_memalign((void **)&points, 32, (n + 1) * sizeof(point_t))) return -1;
    if (posix_memalign((void **)&tables, 32, (n + 2) * ENTRIES * sizeof(point_t))) {
        free(points);
        return -1;
    }
    int status = decode_all(points, h0, NULL, 1, 0);
    if (status == 0) {
        status = decode_all(points + 1, chain, NULL, n, 0);
        if (status) status += 1;
    }
    if (status == 0) {
        /* tables: 0 = H_0, k + 1 = C_k, n + 1 = B */
        for (size_t i = 0; i <= n; i++) odd_multiples(&tables[i * ENTRIES], &points[i], ENTRIES);
        odd_multiples(&tables[(n + 1) * ENTRIES], decaf_255_point_base, ENTRIES);
        int8_t c_digits[DIGITS], hat_digits[DIGITS], prime_digits[DIGITS];
        int c_top = wnaf(c_digits, c, W);
        for (size_t k = 0; k < n; k++) {
            int top = c_top, length;
            length = wnaf(hat_digits, s_hat + 32 * k, W);
            if (length > top) top = length;
            length = wnaf(prime_digits, s_prime + 32 * k, W);
            if (length > top) top = length;
            const point_t *row[3] = {&tables[(n + 1) * ENTRIES], &tables[k * ENTRIES],
                                     &tables[(k + 1) * ENTRIES]};
            const int8_t *digits[3] = {hat_digits, prime_digits, c_digits};
            const int negative[3] = {0, 0, 1};
            point_t acc;
            interleave(&acc, row, digits, negative, 3, top);
            decaf_255_point_encode(out + 32 * k, &acc);
        }
    }
    free(tables);
    free(points);
    return status;
}
