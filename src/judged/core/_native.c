/* judged._native: the compiled fast path of judged's reading and alignment.
 *
 * Optional: setup.py builds it when a C compiler is there, and judged.native falls back to
 * the pure Python/numpy path (same results, bit for bit) when it is not, or when the
 * environment sets JUDGED_PURE_PYTHON=1. Every function works on buffers (bytes,
 * bytearray, numpy arrays, Arrow buffers) and releases the GIL while it works, so reading
 * the next block of a file overlaps with scoring the previous one.
 *
 *   tokenize        whitespace-separated lines -> Arrow-style string columns, one number
 *                   column, the 64-bit hash of one column, the rows where the first column
 *                   changes, and the byte offset and number of the line where it last changed
 *   string_hash     the same hash over an Arrow string array (judged.data.string_hash)
 *   dict_pairs      {qid: {docid: value}} -> the same columns, hashes and blocks as tokenize
 *   gather_strings  the bytes of chosen strings of an Arrow string array, one after another
 *   equal_at        whether pairs of strings of two Arrow string arrays are equal
 *   repeated_rows   rows that repeat an earlier (query, id) pair
 *   string_codes    (group, string) pairs numbered by group, then the string's bytes
 *   lookup          grades of (query, docid) pairs from judged.data.KeyTable
 *   lookup_blocks   the same, one small table per query (rows grouped by query)
 *   holes_only_in   per query, the docids among one run's holes that the other's lack
 *   bounded_indices indices 0..n-1 from 32-bit draws, as numpy's Generator.integers makes them
 *   drawn_sums      the hole estimate's drawn grade levels, summed per draw and query
 *   binary_measure  P, R, RR, AP, Rprec, Success, Bpref and the counts, per query
 *   dcg_measure     DCG@k per query under a gain table and a discount
 *   ideal_dcg       IDCG@k of every query of a qrels index (the ideal over its judgments)
 *   trec_rank       trec_eval's ranking order: query, score descending, docid descending
 *   ap_extremes     AP's exact minimum and maximum per query over the labels of its holes
 *   dinkelbach      nDCG's exact extremes: Dinkelbach's method over a DP on the gain levels
 *
 * The pooling wing's kernels (turn_picks, hedge_picks, ts_replay, bounds_picks, pair_gaps,
 * replay_dcg) are a unit of their own, src/judged/analyses/pooling/_native_pooling.c, compiled into
 * this extension and added to it by the module init below.
 *
 * Tokenizing follows Python's bytes.split() on each b"\n"-separated line (white space:
 * space, \t, \r, \v, \f); blank lines and lines whose first field starts with '#' are
 * skipped; with `extra`, fields after the last one are ignored (trec_eval's run format). A
 * line the fast path cannot take (wrong field count, a field that is not a number, invalid
 * UTF-8, a NUL byte) makes tokenize return its line number, and the caller explains that
 * line with the pure Python reader's words.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <math.h>

#define M1 0x9E3779B97F4A7C15ULL
#define M2 0xBF58476D1CE4E5B9ULL
#define MQ 0x94D049BB133111EBULL
#define MAXF 16

static unsigned char WS[256];

static inline uint64_t load_le(const unsigned char *s, Py_ssize_t len)
{
    uint64_t x = 0;
    if (len >= 8) {
        memcpy(&x, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        x = __builtin_bswap64(x);
#endif
        return x;
    }
    for (Py_ssize_t i = len - 1; i >= 0; i--)
        x = (x << 8) | s[i];
    return x;
}

/* judged.data.string_hash, one string: 8-byte little-endian words mixed into a state
 * seeded with the length, then a splitmix64-style finaliser. */
static inline uint64_t hash_bytes(const unsigned char *s, Py_ssize_t len)
{
    uint64_t h = (uint64_t)len * M1;
    for (Py_ssize_t j = 0; j < len; j += 8) {
        uint64_t x = load_le(s + j, len - j) ^ h;
        x *= M2;
        x ^= x >> 31;
        h = x;
    }
    h ^= h >> 30;
    h *= M2;
    h ^= h >> 27;
    h *= MQ;
    h ^= h >> 31;
    return h;
}

static int utf8_valid(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        int len; uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
        else return 0;
        if (i + len > n) return 0;
        for (int k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += len;
    }
    return 1;
}

static const double POW10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A decimal number as Python's float() reads it (without '_', inf or nan): 0 on success.
 * Clinger's fast path (an exact mantissa below 2^53 and a power of ten up to 22 give a
 * correctly rounded quotient or product); strtod, correctly rounded in glibc, otherwise. */
static int parse_double(const unsigned char *s, Py_ssize_t n, double *out)
{
    Py_ssize_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) { neg = s[i] == '-'; i++; }
    uint64_t m = 0;
    int digits = 0, frac = 0, sig = 0, mdigits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (m || s[i] != '0') { if (mdigits < 19) { m = m * 10 + (s[i] - '0'); mdigits++; } else sig++; }
        digits++; i++;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (m || s[i] != '0') { if (mdigits < 19) { m = m * 10 + (s[i] - '0'); mdigits++; frac++; } }
            else frac++;
            digits++; i++;
        }
    }
    if (!digits) return -1;
    long e = 0;
    int ebig = 0;  /* an exponent too long to hold: strtod decides */
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0, edigits = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) { eneg = s[i] == '-'; i++; }
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (e < 100000) e = e * 10 + (s[i] - '0');
            else ebig = 1;
            edigits++; i++;
        }
        if (!edigits) return -1;
        if (eneg) e = -e;
    }
    if (i != n) return -1;
    long p = e - frac + sig;
    if (m == 0) { *out = neg ? -0.0 : 0.0; return 0; }
    if (!ebig && m <= (1ULL << 53) && p >= -22 && p <= 22) {
        double v = (double)m;
        v = p < 0 ? v / POW10[-p] : v * POW10[p];
        *out = neg ? -v : v;
        return 0;
    }
    char stack[64];
    char *buf = n < 64 ? stack : malloc(n + 1);
    if (!buf) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    double v = strtod(buf, &end);
    int ok = end == buf + n;
    if (buf != stack) free(buf);
    if (!ok) return -1;
    *out = v;
    return 0;
}

/* A decimal integer token ([+-]digits) that fits int64: 0 on success. */
static int parse_int64(const unsigned char *s, Py_ssize_t n, int64_t *out)
{
    Py_ssize_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) { neg = s[i] == '-'; i++; }
    if (i == n) return -1;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = s[i] - '0';
        if (v > (limit - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* ---- tokenize ---------------------------------------------------------------------- */

#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JUDGED_SSE2 1
#include <emmintrin.h>

/* Bit masks over the 64 bytes at p: white space (0x20 and 0x09..0x0D, as bytes.split()),
 * line ends, and bytes with the high bit set (UTF-8). A line that fits in the window is
 * then cut into fields without a branch per byte (the per-byte loops mispredict at the end
 * of every field). */
static inline void window_masks(const unsigned char *p, uint64_t *white, uint64_t *newline, uint64_t *high)
{
    const __m128i space = _mm_set1_epi8(' '), nine = _mm_set1_epi8(9), four = _mm_set1_epi8(4);
    const __m128i nl = _mm_set1_epi8('\n');
    uint64_t w = 0, n = 0, h = 0;
    for (int k = 0; k < 4; k++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        __m128i t = _mm_sub_epi8(x, nine);  /* 9..13 -> 0..4; others wrap above 4 */
        __m128i ws = _mm_or_si128(_mm_cmpeq_epi8(x, space), _mm_cmpeq_epi8(_mm_min_epu8(t, four), t));
        w |= (uint64_t)(uint16_t)_mm_movemask_epi8(ws) << (16 * k);
        n |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, nl)) << (16 * k);
        h |= (uint64_t)(uint16_t)_mm_movemask_epi8(x) << (16 * k);
    }
    *white = w;
    *newline = n;
    *high = h;
}
#endif

/* ---- output blocks ------------------------------------------------------------------ */

/* A writable buffer (Python's buffer protocol: numpy and Arrow wrap it without a copy)
 * whose memory goes back to a small pool when the last array over it is freed. Streaming
 * asks for the same sizes piece after piece; fresh memory each time cost page faults (a
 * quarter of the CPU time on wide was the kernel's) where the pool's memory is already
 * mapped. Pool and blocks are only touched with the GIL held. */
typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t size, cap;
} Block;

#define POOL_BLOCKS 64
#define POOL_BYTES ((Py_ssize_t)512 << 20)
static char *pool_data[POOL_BLOCKS];
static Py_ssize_t pool_cap[POOL_BLOCKS];
static int pool_n = 0;
static Py_ssize_t pool_bytes = 0;

static void block_dealloc(Block *b)
{
    if (b->data && pool_n < POOL_BLOCKS && pool_bytes + b->cap <= POOL_BYTES) {
        pool_data[pool_n] = b->data;
        pool_cap[pool_n++] = b->cap;
        pool_bytes += b->cap;
    } else {
        free(b->data);
    }
    PyObject_Free(b);
}

static int block_getbuffer(Block *b, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)b, b->data, b->size, 0, flags);
}

static PyBufferProcs BLOCK_BUFFER = {(getbufferproc)block_getbuffer, NULL};

static PyTypeObject BlockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "judged.core._native.Block",
    .tp_basicsize = sizeof(Block),
    .tp_dealloc = (destructor)block_dealloc,
    .tp_as_buffer = &BLOCK_BUFFER,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "memory for a column, returned to a pool when freed",
};

/* pool_trim(): frees the pool's blocks (for a caller that reads no more files), the bytes. */
static PyObject *pool_trim(PyObject *self, PyObject *noargs)
{
    Py_ssize_t freed = pool_bytes;
    for (int k = 0; k < pool_n; k++) free(pool_data[k]);
    pool_n = 0;
    pool_bytes = 0;
    return PyLong_FromSsize_t(freed);
}

/* A block of at least `size` bytes (the smallest pooled one that fits, else new memory). */
static Block *block_new(Py_ssize_t size)
{
    if (size < 1) size = 1;
    Block *b = PyObject_New(Block, &BlockType);
    if (!b) return NULL;
    int best = -1;
    for (int k = 0; k < pool_n; k++)
        if (pool_cap[k] >= size && (best < 0 || pool_cap[k] < pool_cap[best])) best = k;
    if (best >= 0) {
        b->data = pool_data[best];
        b->cap = pool_cap[best];
        pool_bytes -= b->cap;
        pool_data[best] = pool_data[--pool_n];
        pool_cap[best] = pool_cap[pool_n];
    } else {
        b->data = malloc(size);
        b->cap = size;
        if (!b->data) { b->cap = 0; Py_DECREF(b); return (Block *)PyErr_NoMemory(); }
    }
    b->size = size;
    return b;
}

typedef struct {
    PyObject *obj;  /* a Block */
    char *p;
} Out;

static int out_new(Out *o, Py_ssize_t size)
{
    Block *b = block_new(size);
    if (!b) return -1;
    o->obj = (PyObject *)b;
    o->p = b->data;
    return 0;
}

static int out_fit(Out *o, Py_ssize_t size)
{
    if (o->obj) ((Block *)o->obj)->size = size;  /* shrinking only: the capacity stays */
    return 0;
}

static PyObject *tokenize(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    int nfields, num_field, num_kind, hash_field, extra;
    Py_buffer strspec;
    Py_ssize_t first_line;
    if (!PyArg_ParseTuple(args, "y*iy*iiinp", &buf, &nfields, &strspec, &num_field, &num_kind, &hash_field, &first_line,
                          &extra))
        return NULL;
    const unsigned char *p = buf.buf;
    Py_ssize_t n = buf.len;
    int nstr = (int)strspec.len;
    int strf[MAXF];
    PyObject *result = NULL;
    Out offs[MAXF], datas[MAXF], nums = {0}, hashes = {0}, blocks = {0};
    memset(offs, 0, sizeof offs);
    memset(datas, 0, sizeof datas);
    if (nfields < 1 || nfields > MAXF || nstr < 1 || nstr > MAXF) {
        PyErr_SetString(PyExc_ValueError, "bad field specification");
        goto done;
    }
    for (int k = 0; k < nstr; k++) strf[k] = ((unsigned char *)strspec.buf)[k];
    if (strf[0] != 0) {
        PyErr_SetString(PyExc_ValueError, "the first string field must be field 0");
        goto done;
    }

    /* every data line has at least nfields tokens and nfields separators */
    Py_ssize_t lines = (n + 1) / (2 * nfields) + 1;
    if (n > INT32_MAX) { result = PyLong_FromLong(0); goto done; }  /* too large for int32 offsets */
    for (int k = 0; k < nstr; k++)
        if (out_new(&offs[k], (lines + 1) * 4) || out_new(&datas[k], n)) goto done;
    if (num_field >= 0 && out_new(&nums, lines * 8)) goto done;
    if (hash_field >= 0 && out_new(&hashes, lines * 8)) goto done;
    if (out_new(&blocks, lines * 8)) goto done;

    Py_ssize_t rows = 0, nblocks = 0, bad = 0, last_block_at = 0, last_block_line = first_line;
    int32_t used[MAXF] = {0};
    unsigned char *copy = NULL;
    Py_BEGIN_ALLOW_THREADS
    const unsigned char *nul = n ? memchr(p, 0, n) : NULL;
    Py_ssize_t limit = nul ? nul - p : n;  /* lines before a NUL byte are read, its own is refused */
    if (limit && p[limit - 1] != '\n') {  /* the scan stops at each line's '\n': give the last line one */
        copy = malloc(limit + 1);
        if (copy) { memcpy(copy, p, limit); copy[limit] = '\n'; p = copy; limit++; }
        else bad = -1;
    }
    int32_t *off[MAXF];
    for (int k = 0; k < nstr; k++) { off[k] = (int32_t *)offs[k].p; off[k][0] = 0; }
    Py_ssize_t i = 0, lineno = first_line - 1;
    Py_ssize_t ts[MAXF + 1], tl[MAXF + 1];
    /* field k's text to the end of its column: a fixed 16-byte copy when the field is that
     * short and both buffers have the room (the bytes past it are overwritten or cut off) */
#define COPY_FIELD(k) do { \
        Py_ssize_t f_ = strf[k], len_ = tl[f_]; \
        char *to_ = datas[k].p + used[k]; \
        const unsigned char *from_ = p + ts[f_]; \
        if (len_ <= 16 && used[k] + 16 <= n && ts[f_] + 16 <= limit) memcpy(to_, from_, 16); \
        else memcpy(to_, from_, len_); \
        used[k] += (int32_t)len_; \
        off[k][rows + 1] = used[k]; \
    } while (0)
    const unsigned char *prev_q = NULL;
    Py_ssize_t prev_ql = -1;
    while (i < limit && !bad) {
        lineno++;
        Py_ssize_t line_start = i, line_end = i;  /* line_end: the end of its last field */
        int nt = 0;
        unsigned char any = 0, c;
#ifdef JUDGED_SSE2
        if (i + 64 <= limit) {  /* the whole line in one 64-byte window: token bounds from bit masks */
            uint64_t white, newline, high;
            window_masks(p + i, &white, &newline, &high);
            if (newline) {
                int len = __builtin_ctzll(newline);
                uint64_t inside = len == 63 ? ~0ULL >> 1 : (1ULL << len) - 1;  /* len < 64 */
                uint64_t text = ~white & inside;
                uint64_t starts = text & ~(text << 1), ends = ~text & (text << 1);
                if (high & inside) any = 0x80;
                while (starts) {  /* as many rounds as fields: a count the branch predictor learns */
                    int a = __builtin_ctzll(starts), b = __builtin_ctzll(ends);
                    if (nt <= MAXF) { ts[nt] = i + a; tl[nt] = b - a; }
                    line_end = i + b;
                    nt++;
                    starts &= starts - 1;
                    ends &= ends - 1;
                }
                i += len;
                goto eol;
            }
        }
#endif
        for (;;) {
            while (WS[c = p[i]]) { if (c == '\n') goto eol; i++; }
            Py_ssize_t s = i;
            while (!WS[c = p[i]]) { any |= c; i++; }
            if (nt <= MAXF) { ts[nt] = s; tl[nt] = i - s; }
            line_end = i;
            nt++;
        }
    eol:
        i++;
        if (nt == 0 || p[ts[0]] == '#') continue;
        if (nt < nfields || (nt > nfields && !extra)) { bad = lineno; break; }
        if ((any & 0x80) && !utf8_valid(p + ts[0], line_end - ts[0])) { bad = lineno; break; }
        if (num_field >= 0) {
            const unsigned char *t = p + ts[num_field];
            if (num_kind == 0) {
                double v;
                if (parse_double(t, tl[num_field], &v) || !isfinite(v)) { bad = lineno; break; }
                ((double *)nums.p)[rows] = v;
            } else {
                int64_t v;
                if (parse_int64(t, tl[num_field], &v)) { bad = lineno; break; }
                ((int64_t *)nums.p)[rows] = v;
            }
        }
        const unsigned char *qs = p + ts[0];
        Py_ssize_t ql = tl[0];
        if (ql != prev_ql || memcmp(qs, prev_q, ql) != 0) {
            ((int64_t *)blocks.p)[nblocks++] = rows;
            last_block_at = line_start;
            last_block_line = lineno;
        }
        prev_q = qs; prev_ql = ql;
        if (nstr == 3) {  /* a run line (qid, docid, rank): no loop, short fields copied inline */
            COPY_FIELD(0); COPY_FIELD(1); COPY_FIELD(2);
        } else {
            for (int k = 0; k < nstr; k++) { COPY_FIELD(k); }
        }
        if (hash_field >= 0)
            ((uint64_t *)hashes.p)[rows] = hash_bytes(p + ts[hash_field], tl[hash_field]);
        rows++;
    }
    if (nul && !bad) {  /* the line holding the NUL byte */
        bad = first_line;
        for (const unsigned char *q = buf.buf; q < nul; q++) bad += *q == '\n';
    }
    free(copy);
    Py_END_ALLOW_THREADS
    if (bad < 0) { result = PyErr_NoMemory(); goto done; }
    if (bad) { result = PyLong_FromSsize_t(bad); goto done; }
    PyObject *cols = PyList_New(nstr);
    if (!cols) goto done;
    for (int k = 0; k < nstr; k++) {
        if (out_fit(&offs[k], (rows + 1) * 4) || out_fit(&datas[k], used[k])) { Py_DECREF(cols); goto done; }
        PyList_SET_ITEM(cols, k, Py_BuildValue("(OO)", offs[k].obj, datas[k].obj));
    }
    if (out_fit(&nums, rows * 8) || out_fit(&hashes, rows * 8) || out_fit(&blocks, nblocks * 8)) { Py_DECREF(cols); goto done; }
    result = Py_BuildValue("(nNOOOnn)", rows, cols, nums.obj ? nums.obj : Py_None, hashes.obj ? hashes.obj : Py_None,
                           blocks.obj, last_block_at, last_block_line);
done:
    for (int k = 0; k < MAXF; k++) { Py_XDECREF(offs[k].obj); Py_XDECREF(datas[k].obj); }
    Py_XDECREF(nums.obj);
    Py_XDECREF(hashes.obj);
    Py_XDECREF(blocks.obj);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&strspec);
    return result;
}

/* ---- dict_pairs ----------------------------------------------------------------------- */

/* A column being filled whose final size is not known in advance: a Block grown by realloc. */
typedef struct {
    Block *b;
    Py_ssize_t used;
} Grow;

static int grow_new(Grow *g, Py_ssize_t cap)
{
    g->b = block_new(cap);
    g->used = 0;
    return g->b ? 0 : -1;
}

static int grow_fit(Grow *g, Py_ssize_t more)
{
    if (g->used + more <= g->b->cap) return 0;
    Py_ssize_t cap = g->b->cap * 2;
    if (cap < g->used + more) cap = g->used + more;
    char *p = realloc(g->b->data, cap);
    if (!p) { PyErr_NoMemory(); return -1; }
    g->b->data = p;
    g->b->cap = cap;
    return 0;
}

static int grow_put(Grow *g, const char *s, Py_ssize_t n)
{
    if (grow_fit(g, n)) return -1;
    memcpy(g->b->data + g->used, s, n);
    g->used += n;
    return 0;
}

/* The UTF-8 bytes of str(o): o itself when it is a str (ASCII: its own buffer, no copy),
 * else PyObject_Str(o); *hold keeps what must outlive the bytes (decref it after use).
 * NULL with an exception set when str() or the encoding fails (a lone surrogate). */
static const char *utf8_of(PyObject *o, PyObject **hold, Py_ssize_t *len)
{
    PyObject *s = o;
    *hold = NULL;
    if (!PyUnicode_CheckExact(o)) {
        s = PyObject_Str(o);
        if (!s) return NULL;
        *hold = s;
    }
    if (PyUnicode_IS_ASCII(s)) return PyUnicode_AsUTF8AndSize(s, len);
    PyObject *bytes = PyUnicode_AsUTF8String(s);
    Py_XDECREF(*hold);
    *hold = bytes;
    if (!bytes) return NULL;
    *len = PyBytes_GET_SIZE(bytes);
    return PyBytes_AS_STRING(bytes);
}

/* A value as judged.core.io.frames reads it: a float (numpy's float64 too) or an int as
 * they are, anything else through `number` (frames._finite: a float or None). 0: *x is
 * a finite number (and, with `integer`, a whole number below 2**63 in magnitude); 1: not
 * (the caller falls back: the reference names the problem). */
static int value_of(PyObject *v, PyObject *number, int integer, double *x)
{
    if (PyFloat_Check(v)) {
        *x = PyFloat_AS_DOUBLE(v);
    } else if (PyLong_CheckExact(v)) {
        *x = PyLong_AsDouble(v);
        if (*x == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return 1; }
    } else {
        PyObject *f = PyObject_CallOneArg(number, v);
        if (!f) { PyErr_Clear(); return 1; }
        if (!PyFloat_Check(f)) { Py_DECREF(f); return 1; }
        *x = PyFloat_AS_DOUBLE(f);
        Py_DECREF(f);
    }
    if (!isfinite(*x)) return 1;
    if (integer && (*x != trunc(*x) || fabs(*x) >= 9223372036854775808.0)) return 1;
    return 0;
}

/* dict_pairs(d, integer, mappings, number) -> None or (rows, (qid offsets, data), (docid
 * offsets, data), values, docid hashes, block starts, (block qid offsets, data), all_str):
 * {qid: {docid: value}} walked in its order, one row per (qid, docid) pair, ids as str()
 * gives them in UTF-8 (Arrow string columns), values float64 (int64 with `integer`: whole
 * numbers), the docids' string_hash, the rows where the qid changes and those qids, and
 * whether every query id was a str (its blocks then hold distinct qids). An inner mapping
 * must be of a type in the tuple `mappings`; `number` reads a value that is not a float or
 * an int. None: something the reference must explain (or decide: a non-finite value, a
 * value past int64, an id str() cannot give, 2 GiB of ids). */
static PyObject *dict_pairs(PyObject *self, PyObject *args)
{
    PyObject *d, *mappings, *number;
    int integer;
    if (!PyArg_ParseTuple(args, "O!pO!O", &PyDict_Type, &d, &integer, &PyTuple_Type, &mappings, &number)) return NULL;
    Py_ssize_t rows = 0, nq = PyDict_GET_SIZE(d), pos = 0;
    PyObject *q, *docs, *doc, *v, *result = NULL;
    while (PyDict_Next(d, &pos, &q, &docs)) {
        int ok = 0;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(mappings); k++)
            ok |= (PyObject *)Py_TYPE(docs) == PyTuple_GET_ITEM(mappings, k);
        if (!ok) Py_RETURN_NONE;
        rows += PyDict_GET_SIZE(docs);
    }
    Grow qoff = {0}, qdata = {0}, doff = {0}, ddata = {0}, vals = {0}, hashes = {0}, starts = {0}, boff = {0}, bdata = {0};
    if (grow_new(&qoff, (rows + 1) * 4) || grow_new(&qdata, rows * 8) || grow_new(&doff, (rows + 1) * 4) ||
        grow_new(&ddata, rows * 16) || grow_new(&vals, rows * 8) || grow_new(&hashes, rows * 8) ||
        grow_new(&starts, nq * 8) || grow_new(&boff, (nq + 1) * 4) || grow_new(&bdata, nq * 8))
        goto done;
    int32_t *qo = (int32_t *)qoff.b->data, *dof = (int32_t *)doff.b->data, *bo = (int32_t *)boff.b->data;
    qo[0] = dof[0] = bo[0] = 0;
    Py_ssize_t r = 0, nblocks = 0, prev_at = -1, prev_len = -1;
    int all_str = 1, fallback = 0;
    pos = 0;
    while (!fallback && PyDict_Next(d, &pos, &q, &docs)) {
        Py_ssize_t n = PyDict_GET_SIZE(docs), ql, inner = 0;
        if (n == 0) continue;
        if (PyDict_GET_SIZE(docs) + r > rows) { fallback = 1; break; }  /* changed while walked */
        all_str &= PyUnicode_CheckExact(q);
        PyObject *qhold;
        const char *qs = utf8_of(q, &qhold, &ql);
        if (!qs) { PyErr_Clear(); fallback = 1; break; }
        if (prev_len != ql || memcmp(qdata.b->data + prev_at, qs, ql) != 0) {  /* a new block of rows */
            ((int64_t *)starts.b->data)[nblocks++] = r;
            if (grow_put(&bdata, qs, ql)) { Py_XDECREF(qhold); goto done; }
            bo[nblocks] = (int32_t)bdata.used;
        }
        if (grow_fit(&qdata, ql * n)) { Py_XDECREF(qhold); goto done; }
        prev_at = qdata.used;
        prev_len = ql;
        for (Py_ssize_t j = 0; j < n; j++) {
            memcpy(qdata.b->data + qdata.used, qs, ql);
            qdata.used += ql;
            qo[r + j + 1] = (int32_t)qdata.used;
        }
        Py_XDECREF(qhold);
        while (PyDict_Next(docs, &inner, &doc, &v)) {
            double x;
            if (r >= rows) { fallback = 1; break; }  /* a mapping changed while walked */
            if (value_of(v, number, integer, &x)) { fallback = 1; break; }
            PyObject *dhold;
            Py_ssize_t dl;
            const char *ds = utf8_of(doc, &dhold, &dl);
            if (!ds) { PyErr_Clear(); fallback = 1; break; }
            int failed = grow_put(&ddata, ds, dl);
            if (!failed) ((uint64_t *)hashes.b->data)[r] = hash_bytes((const unsigned char *)ds, dl);
            Py_XDECREF(dhold);
            if (failed) goto done;
            ((int32_t *)doff.b->data)[r + 1] = (int32_t)ddata.used;
            if (integer) ((int64_t *)vals.b->data)[r] = (int64_t)x;
            else ((double *)vals.b->data)[r] = x;
            r++;
        }
        if (qdata.used >= INT32_MAX || ddata.used >= INT32_MAX || bdata.used >= INT32_MAX) fallback = 1;
    }
    if (fallback || r != rows) { result = Py_None; Py_INCREF(result); goto done; }
    qoff.b->size = (rows + 1) * 4; qdata.b->size = qdata.used; doff.b->size = (rows + 1) * 4;
    ddata.b->size = ddata.used; vals.b->size = hashes.b->size = rows * 8; starts.b->size = nblocks * 8;
    boff.b->size = (nblocks + 1) * 4; bdata.b->size = bdata.used;
    result = Py_BuildValue("(n(OO)(OO)OOO(OO)O)", rows, qoff.b, qdata.b, doff.b, ddata.b, vals.b, hashes.b, starts.b,
                           boff.b, bdata.b, all_str ? Py_True : Py_False);
done:
    Py_XDECREF(qoff.b); Py_XDECREF(qdata.b); Py_XDECREF(doff.b); Py_XDECREF(ddata.b); Py_XDECREF(vals.b);
    Py_XDECREF(hashes.b); Py_XDECREF(starts.b); Py_XDECREF(boff.b); Py_XDECREF(bdata.b);
    return result;
}

/* ---- string_hash ------------------------------------------------------------------- */

static PyObject *string_hash(PyObject *self, PyObject *args)
{
    Py_buffer off, data, out;
    if (!PyArg_ParseTuple(args, "y*y*w*", &off, &data, &out)) return NULL;
    Py_ssize_t n = out.len / 8;
    const int32_t *o = off.buf;
    const unsigned char *d = data.buf;
    uint64_t *h = out.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) h[i] = hash_bytes(d + o[i], o[i + 1] - o[i]);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&off);
    PyBuffer_Release(&data);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static inline int same_string(const int32_t *ao, const unsigned char *ad, int64_t a,
                              const int32_t *bo, const unsigned char *bd, int64_t b)
{
    int32_t la = ao[a + 1] - ao[a], lb = bo[b + 1] - bo[b];
    return la == lb && memcmp(ad + ao[a], bd + bo[b], la) == 0;
}

/* ---- gather_strings --------------------------------------------------------------- */

/* gather_strings(offsets_int32, data, rows_int64, out_offsets_int32) -> bytes or None: the bytes
 * of strings rows[i] one after another, out_offsets[i] where each starts (n + 1 of them), as
 * judged.core.data.take_strings gives them; None when a row is out of range or the strings
 * take 2**31 bytes or more (int32 offsets). */
static PyObject *gather_strings(PyObject *self, PyObject *args)
{
    Py_buffer ob, db, rb, pb;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &ob, &db, &rb, &pb)) return NULL;
    const int32_t *off = ob.buf;
    const char *d = db.buf;
    const int64_t *rows = rb.buf;
    int32_t *at = pb.buf;
    const Py_ssize_t n = ob.len / 4 - 1, m = rb.len / 8;
    int ok = pb.len / 4 == m + 1;
    int64_t total = 0;
    Py_BEGIN_ALLOW_THREADS
    if (ok) at[0] = 0;
    for (Py_ssize_t i = 0; i < m && ok; i++) {
        const int64_t r = rows[i];
        if (r < 0 || r >= n) { ok = 0; break; }
        total += off[r + 1] - off[r];
        if (total >= ((int64_t)1 << 31)) { ok = 0; break; }
        at[i + 1] = (int32_t)total;
    }
    Py_END_ALLOW_THREADS
    PyObject *out = ok ? PyBytes_FromStringAndSize(NULL, total) : NULL;
    if (out) {
        char *o = PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            const int64_t r = rows[i];
            memcpy(o + at[i], d + off[r], (size_t)(at[i + 1] - at[i]));
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&ob); PyBuffer_Release(&db); PyBuffer_Release(&rb); PyBuffer_Release(&pb);
    if (!ok) Py_RETURN_NONE;
    return out;
}

/* ---- equal_at ----------------------------------------------------------------------- */

/* out[i] = (string ia[i] of array a == string ib[i] of array b), for Arrow string arrays
 * given as int32 offsets and data: confirms the matches a hash lookup suggests. */
static PyObject *equal_at(PyObject *self, PyObject *args)
{
    Py_buffer ao, ad, ia, bo, bd, ib, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*w*", &ao, &ad, &ia, &bo, &bd, &ib, &out)) return NULL;
    const int64_t *x = ia.buf, *y = ib.buf;
    unsigned char *o = out.buf;
    Py_ssize_t n = out.len;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) o[i] = same_string(ao.buf, ad.buf, x[i], bo.buf, bd.buf, y[i]);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ao); PyBuffer_Release(&ad); PyBuffer_Release(&ia);
    PyBuffer_Release(&bo); PyBuffer_Release(&bd); PyBuffer_Release(&ib); PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

/* ---- rows by query: a stable counting sort ------------------------------------------- */

/* start[0..nq]: where each query's rows begin once sorted (rows with q < 0 are left out). */
static void query_starts(const int64_t *q, Py_ssize_t n, Py_ssize_t nq, int64_t *start)
{
    memset(start, 0, (nq + 1) * sizeof(int64_t));
    for (Py_ssize_t i = 0; i < n; i++)
        if (q[i] >= 0) start[q[i] + 1]++;
    for (Py_ssize_t k = 0; k < nq; k++) start[k + 1] += start[k];
}

/* order: the rows with q >= 0, stably sorted by q (start from query_starts); -1 if out of memory. */
static int rows_by_query(const int64_t *q, Py_ssize_t n, Py_ssize_t nq, const int64_t *start, int64_t *order)
{
    int64_t *fill = malloc((nq + 1) * sizeof(int64_t));
    if (!fill) return -1;
    memcpy(fill, start, (nq + 1) * sizeof(int64_t));
    for (Py_ssize_t i = 0; i < n; i++)
        if (q[i] >= 0) order[fill[q[i]]++] = i;
    free(fill);
    return 0;
}

/* ---- repeated_rows ----------------------------------------------------------------- */

/* Rows (ascending) whose (query code, string) pair appeared on an earlier row. Rows are
 * visited query by query (a stable counting sort when the codes are not already
 * non-decreasing), each query with its own small open-addressing set of string hashes;
 * a hash match is confirmed on the bytes. */
static PyObject *repeated_rows(PyObject *self, PyObject *args)
{
    Py_buffer qb, hb, ob, db;
    Py_ssize_t nq;
    if (!PyArg_ParseTuple(args, "y*ny*y*y*", &qb, &nq, &hb, &ob, &db)) return NULL;
    Py_ssize_t n = qb.len / 8;
    const int64_t *q = qb.buf;
    const uint64_t *h = hb.buf;
    const int32_t *o = ob.buf;
    const unsigned char *d = db.buf;
    int64_t *order = NULL, *start = NULL, *table = NULL, *dups = NULL;
    Py_ssize_t ndup = 0, failed = 0;
    Py_BEGIN_ALLOW_THREADS
    int sorted = 1;
    for (Py_ssize_t i = 1; i < n && sorted; i++) sorted = q[i] >= q[i - 1];
    start = malloc((nq + 1) * sizeof(int64_t));
    dups = malloc((n ? n : 1) * sizeof(int64_t));
    if (!sorted) order = malloc((n ? n : 1) * sizeof(int64_t));
    if (!start || !dups || (!sorted && !order)) failed = 1;
    if (!failed) {
        query_starts(q, n, nq, start);
        if (!sorted && rows_by_query(q, n, nq, start, order)) failed = 1;
    }
    Py_ssize_t cap = 0;
    for (Py_ssize_t k = 0; k < nq && !failed; k++) {
        Py_ssize_t a = start[k], b = start[k + 1], m = b - a;
        if (m < 2) continue;
        Py_ssize_t size = 4;
        while (size < 2 * m) size <<= 1;
        if (size > cap) {
            free(table);
            table = malloc(size * sizeof(int64_t));
            if (!table) { failed = 1; break; }
            cap = size;
        }
        for (Py_ssize_t s = 0; s < size; s++) table[s] = -1;
        int shift = 64 - __builtin_ctzll((unsigned long long)size);
        for (Py_ssize_t j = a; j < b; j++) {
            int64_t r = sorted ? j : order[j];
            Py_ssize_t slot = (Py_ssize_t)(h[r] >> shift);
            for (;;) {
                int64_t other = table[slot];
                if (other < 0) { table[slot] = r; break; }
                if (h[other] == h[r] && same_string(o, d, other, o, d, r)) { dups[ndup++] = r; break; }
                slot = (slot + 1) & (size - 1);
            }
        }
    }
    free(order); free(start); free(table);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&qb); PyBuffer_Release(&hb); PyBuffer_Release(&ob); PyBuffer_Release(&db);
    if (failed) { free(dups); return PyErr_NoMemory(); }
    PyObject *res = PyByteArray_FromStringAndSize((const char *)dups, ndup * 8);
    free(dups);
    return res;
}

/* ---- string_codes ------------------------------------------------------------------- */

/* A row's string for sorting: its first 8 bytes as a big-endian number (zero-padded), the
 * bytes and their count, and the row (the last tie-break: equal strings in row order). */
typedef struct {
    uint64_t head;
    const unsigned char *s;
    int64_t len;
    int64_t row;
} SKey;

/* byte order (memcmp, a prefix first), then the row: < 0, 0 or > 0 */
static inline int skey_order(const SKey *a, const SKey *b)
{
    if (a->head != b->head) return a->head < b->head ? -1 : 1;
    if (a->len > 8 && b->len > 8) {
        int c = memcmp(a->s + 8, b->s + 8, (size_t)((a->len < b->len ? a->len : b->len) - 8));
        if (c) return c;
    }
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

static int skey_cmp(const void *a, const void *b) { return skey_order(a, b); }

static inline int skey_same(const SKey *a, const SKey *b)
{
    return a->head == b->head && a->len == b->len && (a->len <= 8 || memcmp(a->s + 8, b->s + 8, (size_t)(a->len - 8)) == 0);
}

/* keys[0..m) sorted by skey_order (every key distinct: the rows differ): quicksort on the
 * median of three, insertion sort below 16 keys, qsort past a depth of 2 log2(m) */
static void skey_sort(SKey *k, Py_ssize_t m, int depth)
{
    while (m > 16) {
        if (depth-- == 0) { qsort(k, m, sizeof(SKey), skey_cmp); return; }
        SKey t, *a = k, *b = k + m / 2, *c = k + m - 1;
        if (skey_order(b, a) < 0) { t = *a; *a = *b; *b = t; }
        if (skey_order(c, b) < 0) { t = *b; *b = *c; *c = t; if (skey_order(b, a) < 0) { t = *a; *a = *b; *b = t; } }
        SKey pivot = *b;
        Py_ssize_t i = 0, j = m - 1;
        for (;;) {
            while (skey_order(&k[i], &pivot) < 0) i++;
            while (skey_order(&pivot, &k[j]) < 0) j--;
            if (i >= j) break;
            t = k[i]; k[i] = k[j]; k[j] = t;
            i++; j--;
        }
        /* k[0..j] <= pivot <= k[j+1..m) */
        if (j + 1 < m - j - 1) { skey_sort(k, j + 1, depth); k += j + 1; m -= j + 1; }
        else { skey_sort(k + j + 1, m - j - 1, depth); m = j + 1; }
    }
    for (Py_ssize_t i = 1; i < m; i++) {
        SKey x = k[i];
        Py_ssize_t j = i;
        while (j > 0 && skey_order(&x, &k[j - 1]) < 0) { k[j] = k[j - 1]; j--; }
        k[j] = x;
    }
}

/* string_codes(group, n_groups, offsets, data, code, first) -> number of codes: code[i], the
 * number of row i's (group, string) pair among the distinct pairs ordered by group, then by
 * the string's bytes (a prefix first: code point order for UTF-8); first[c], the first row
 * of pair c. Rows are put in group order by a stable counting sort, each group's sorted on
 * (first 8 bytes, the rest, length, row). Exact: strings compared whole. The numpy
 * reference is judged.core.data.string_codes. */
static PyObject *string_codes(PyObject *self, PyObject *args)
{
    Py_buffer gb, ob, db, cb, fb;
    Py_ssize_t ng;
    if (!PyArg_ParseTuple(args, "y*ny*y*w*w*", &gb, &ng, &ob, &db, &cb, &fb)) return NULL;
    const int64_t *g = gb.buf;
    const int32_t *o = ob.buf;
    const unsigned char *d = db.buf;
    int64_t *code = cb.buf, *first = fb.buf;
    Py_ssize_t n = gb.len / 8, count = 0;
    int64_t *start = NULL, *order = NULL;
    SKey *keys = NULL;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    start = malloc((ng + 1) * sizeof(int64_t));
    order = malloc((n ? n : 1) * sizeof(int64_t));
    if (!start || !order) failed = 1;
    if (!failed) {
        query_starts(g, n, ng, start);
        if (rows_by_query(g, n, ng, start, order)) failed = 1;
    }
    Py_ssize_t widest = 0;
    for (Py_ssize_t k = 0; k < ng && !failed; k++)
        if (start[k + 1] - start[k] > widest) widest = start[k + 1] - start[k];
    if (!failed && !(keys = malloc((widest ? widest : 1) * sizeof(SKey)))) failed = 1;
    for (Py_ssize_t k = 0; k < ng && !failed; k++) {
        Py_ssize_t a = start[k], m = start[k + 1] - a;
        for (Py_ssize_t j = 0; j < m; j++) {
            const int64_t r = order[a + j];
            const unsigned char *s = d + o[r];
            const int64_t len = o[r + 1] - o[r];
            uint64_t head = 0;
            for (int b = 0; b < 8; b++) head = (head << 8) | (b < len ? s[b] : 0);
            keys[j].head = head; keys[j].s = s; keys[j].len = len; keys[j].row = r;
        }
        int depth = 2;
        for (Py_ssize_t x = m; x > 1; x >>= 1) depth += 2;
        skey_sort(keys, m, depth);
        for (Py_ssize_t j = 0; j < m; j++) {
            if (j == 0 || !skey_same(&keys[j - 1], &keys[j])) first[count++] = keys[j].row;
            code[keys[j].row] = count - 1;
        }
    }
    free(start); free(order); free(keys);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&gb); PyBuffer_Release(&ob); PyBuffer_Release(&db); PyBuffer_Release(&cb); PyBuffer_Release(&fb);
    if (failed) return PyErr_NoMemory();
    return PyLong_FromSsize_t(count);
}

/* ---- lookup_blocks -------------------------------------------------------------------- */

/* Grades (NaN when unjudged) of the run rows rows[i], grouped by query (as align gives
 * them); q and h are per run row (query code, -1 when unknown; docid hash). Each query's
 * judgments (block j_start[q]..j_start[q+1] of the qrels index, with their docid hashes
 * j_hash) go into a small open-addressing table that stays in cache while that query's
 * rows probe it. Matches are confirmed on the docid bytes; two judgments of one query with
 * equal hashes but different docids are both kept (probing goes on). The numpy reference
 * is judged.data.QrelsIndex.lookup (one KeyTable of every judgment). */
static PyObject *lookup_blocks(PyObject *self, PyObject *args)
{
    Py_buffer qb, hb, rb, ro, rd, js, jh, jo, jd, jg, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*w*", &qb, &hb, &rb, &ro, &rd, &js, &jh, &jo, &jd, &jg, &out))
        return NULL;
    const int64_t *q = qb.buf, *rows = rb.buf, *jstart = js.buf, *grade = jg.buf;
    const uint64_t *h = hb.buf, *jhash = jh.buf;
    const int32_t *run_off = ro.buf, *j_off = jo.buf;
    const unsigned char *run_data = rd.buf, *j_data = jd.buf;
    double *g = out.buf;
    Py_ssize_t n = out.len / 8;
    int64_t *table = NULL;
    Py_ssize_t cap = 0, size = 0;
    int shift = 64, failed = 0;
    int64_t current = -2;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t qi = q[rows[i]];
        g[i] = NAN;
        if (qi < 0) continue;
        if (qi != current) {
            current = qi;
            int64_t a = jstart[qi], b = jstart[qi + 1];
            size = 8;
            while (size < 4 * (b - a)) size <<= 1;  /* at most a quarter full: most probes miss */
            if (size > cap) {
                free(table);
                table = malloc(size * sizeof(int64_t));
                if (!table) { failed = 1; break; }
                cap = size;
            }
            for (Py_ssize_t s = 0; s < size; s++) table[s] = -1;
            shift = 64 - __builtin_ctzll((unsigned long long)size);
            for (int64_t r = a; r < b; r++) {
                Py_ssize_t slot = (Py_ssize_t)(jhash[r] >> shift);
                while (table[slot] >= 0) slot = (slot + 1) & (size - 1);
                table[slot] = r;
            }
        }
        uint64_t key = h[rows[i]];
        for (Py_ssize_t slot = (Py_ssize_t)(key >> shift);; slot = (slot + 1) & (size - 1)) {
            int64_t r = table[slot];
            if (r < 0) break;
            if (jhash[r] == key && same_string(run_off, run_data, rows[i], j_off, j_data, r)) {
                g[i] = (double)grade[r];
                break;
            }
        }
    }
    free(table);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&qb); PyBuffer_Release(&hb); PyBuffer_Release(&rb); PyBuffer_Release(&ro);
    PyBuffer_Release(&rd); PyBuffer_Release(&js); PyBuffer_Release(&jh); PyBuffer_Release(&jo);
    PyBuffer_Release(&jd); PyBuffer_Release(&jg); PyBuffer_Release(&out);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* ---- holes_only_in --------------------------------------------------------------------- */

/* Insert row r (hash h, bytes of string r) into an open-addressing set of rows of one run;
 * 1 when it is new, 0 when an equal string is there already. */
static inline int set_insert(int64_t *table, Py_ssize_t size, int shift, const uint64_t *hash,
                             const int32_t *off, const unsigned char *data, int64_t r)
{
    for (Py_ssize_t slot = (Py_ssize_t)(hash[r] >> shift);; slot = (slot + 1) & (size - 1)) {
        int64_t other = table[slot];
        if (other < 0) { table[slot] = r; return 1; }
        if (hash[other] == hash[r] && same_string(off, data, other, off, data, r)) return 0;
    }
}

/* holes_only_in(a_start, a_grade, a_row, a_hash, a_offsets, a_data, b_start, b_grade, b_row,
 * b_hash, b_offsets, b_data, only_a, only_b): per query code c, the distinct docids among
 * run A's holes of c that are not among B's (only_a[c]), and B's not among A's (only_b[c]).
 * A run's ranked rows of c are x_start[c]..x_start[c+1] of x_grade (NaN: a hole) and x_row
 * (the row of its docid column: Arrow string offsets and data), x_hash a hash per row of
 * the run. Each query's holes go into a small open-addressing set per run (a docid held
 * twice counts once); B's new ones are looked up in A's set; a hash match is confirmed on
 * the bytes. The numpy reference is judged.core.measures.bounds.holes_only_in. */
static PyObject *holes_only_in(PyObject *self, PyObject *args)
{
    Py_buffer as, ag, ar, ah, ao, ad, bs, bg, br, bh, bo, bd, oa, ob;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*y*w*w*", &as, &ag, &ar, &ah, &ao, &ad, &bs, &bg, &br, &bh,
                          &bo, &bd, &oa, &ob))
        return NULL;
    const int64_t *astart = as.buf, *arow = ar.buf, *bstart = bs.buf, *brow = br.buf;
    const double *agrade = ag.buf, *bgrade = bg.buf;
    const uint64_t *ahash = ah.buf, *bhash = bh.buf;
    const int32_t *aoff = ao.buf, *boff = bo.buf;
    const unsigned char *adata = ad.buf, *bdata = bd.buf;
    int64_t *only_a = oa.buf, *only_b = ob.buf;
    Py_ssize_t nq = oa.len / 8, cap = 0;
    int64_t *ta = NULL, *tb = NULL;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t c = 0; c < nq; c++) {
        const int64_t a0 = astart[c], a1 = astart[c + 1], b0 = bstart[c], b1 = bstart[c + 1];
        const int64_t m = a1 - a0 > b1 - b0 ? a1 - a0 : b1 - b0;
        only_a[c] = only_b[c] = 0;
        if (m == 0) continue;
        Py_ssize_t size = 8;
        while (size < 2 * m) size <<= 1;  /* at most half full */
        if (size > cap) {
            free(ta); free(tb);
            ta = malloc(size * sizeof(int64_t));
            tb = malloc(size * sizeof(int64_t));
            if (!ta || !tb) { failed = 1; break; }
            cap = size;
        }
        for (Py_ssize_t s = 0; s < size; s++) ta[s] = tb[s] = -1;
        const int shift = 64 - __builtin_ctzll((unsigned long long)size);
        int64_t na = 0, nb = 0, both = 0;
        for (int64_t j = a0; j < a1; j++)
            if (isnan(agrade[j])) na += set_insert(ta, size, shift, ahash, aoff, adata, arow[j]);
        for (int64_t j = b0; j < b1; j++) {
            const int64_t r = brow[j];
            if (!isnan(bgrade[j]) || !set_insert(tb, size, shift, bhash, boff, bdata, r)) continue;
            nb++;
            for (Py_ssize_t slot = (Py_ssize_t)(bhash[r] >> shift);; slot = (slot + 1) & (size - 1)) {
                const int64_t other = ta[slot];
                if (other < 0) break;
                if (ahash[other] == bhash[r] && same_string(aoff, adata, other, boff, bdata, r)) { both++; break; }
            }
        }
        only_a[c] = na - both;
        only_b[c] = nb - both;
    }
    free(ta); free(tb);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&as); PyBuffer_Release(&ag); PyBuffer_Release(&ar); PyBuffer_Release(&ah);
    PyBuffer_Release(&ao); PyBuffer_Release(&ad); PyBuffer_Release(&bs); PyBuffer_Release(&bg);
    PyBuffer_Release(&br); PyBuffer_Release(&bh); PyBuffer_Release(&bo); PyBuffer_Release(&bd);
    PyBuffer_Release(&oa); PyBuffer_Release(&ob);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* ---- bounded_indices ------------------------------------------------------------------- */

/* bounded_indices(draws, n, out) -> (filled, used): indices 0..n-1 from 32-bit draws as
 * numpy's Generator.integers(0, n) makes them (buffered_bounded_lemire_uint32): per draw u,
 * m = u * n; skipped when m's low 32 bits are under (2^32 - n) mod n, else the index is m's
 * high 32 bits; until out is full or the draws run out. The numpy reference is
 * judged.core.kernels.draws.bounded_indices. */
static PyObject *bounded_indices(PyObject *self, PyObject *args)
{
    Py_buffer db, ob;
    unsigned long long n;
    if (!PyArg_ParseTuple(args, "y*Kw*", &db, &n, &ob)) return NULL;
    const uint32_t *u = db.buf;
    int64_t *out = ob.buf;
    Py_ssize_t nd = db.len / 4, count = ob.len / 8, filled = 0, i = 0;
    const uint32_t rng_excl = (uint32_t)n, threshold = (uint32_t)((0x100000000ULL - n) % n);
    Py_BEGIN_ALLOW_THREADS
    for (; i < nd && filled < count; i++) {
        const uint64_t m = (uint64_t)u[i] * rng_excl;
        if ((uint32_t)m >= threshold) out[filled++] = (int64_t)(m >> 32);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&db);
    PyBuffer_Release(&ob);
    return Py_BuildValue("(nn)", filled, i);
}

/* ---- measure kernels ------------------------------------------------------------------ */

/* Per-query values over align's ranked rows (judged.align.Ranked): query q owns rows
 * offsets[q] .. offsets[q+1], in rank order, with 0-based rank pos and grade (NaN when
 * unjudged). With ``condensed`` the rows whose grade is NaN or negative are dropped and the
 * ranks close up (unjudged=condensed, Ranked.condensed); k < 0 means no cutoff. The numpy
 * kernels of judged.measures.binary and judged.measures.dcg compute the same numbers with
 * the same operations in the same order, so the two paths agree bit for bit. */

enum { M_P, M_R, M_SUCCESS, M_RR, M_AP, M_RPREC, M_NUMRET, M_NUMRELRET, M_BPREF };
/* the measure names of the kinds, in enum order: the module's BINARY_KINDS, which
 * judged.measures.binary reads (the one list of what this kernel computes) */
static const char *BINARY_KINDS[] = {"P", "R", "Success", "RR", "AP", "Rprec", "NumRet", "NumRelRet", "Bpref"};

/* The 0-based rank of row i (grade g) in its query's ranking, or -1 when the condensed
 * ranking drops it; *kept counts the rows the condensed ranking kept so far. */
static inline int64_t rank_of(int condensed, double g, const int64_t *pos, int64_t i, int64_t *kept)
{
    if (!condensed) return pos[i];
    if (!(g >= 0)) return -1;
    return (*kept)++;
}

/* room for one double per row of the longest of the nq blocks (offsets off), plus one; NULL
 * when out of memory. Called without the GIL: malloc only. */
static double *block_scratch(const int64_t *off, Py_ssize_t nq)
{
    int64_t longest = 0;
    for (Py_ssize_t q = 0; q < nq; q++)
        if (off[q + 1] - off[q] > longest) longest = off[q + 1] - off[q];
    return malloc((longest + 1) * sizeof(double));
}

/* binary_measure(kind, k, rel, condensed, offsets, pos, grade, R, N, out): the measure of
 * judged.measures.binary coded ``kind`` (M_* above) for every query; R and N are the
 * query's relevant (grade >= rel) and judged non-relevant (0 <= grade < rel) counts. */
static PyObject *binary_measure(PyObject *self, PyObject *args)
{
    Py_buffer ob, pb, gb, rb, nb, out;
    int kind, condensed;
    long long k;
    double rel;
    if (!PyArg_ParseTuple(args, "iLdpy*y*y*y*y*w*", &kind, &k, &rel, &condensed, &ob, &pb, &gb, &rb, &nb, &out))
        return NULL;
    const int64_t *off = ob.buf, *pos = pb.buf;
    const double *grade = gb.buf, *R = rb.buf, *N = nb.buf;
    double *o = out.buf;
    Py_ssize_t nq = out.len / 8;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < nq; q++) {
        const double Rq = R[q];
        if (kind == M_BPREF) {  /* the whole ranking, unjudged and negative grades skipped */
            const double denom = N[q] < Rq ? N[q] : Rq;
            double s = 0.0;
            int64_t seen = 0;
            for (int64_t i = off[q]; i < off[q + 1]; i++) {
                const double g = grade[i];
                if (g >= rel) {
                    double t = 1.0, n = (double)seen;
                    if (seen > 0) t = 1.0 - (n < Rq ? n : Rq) / denom;
                    s += t;
                } else if (g >= 0) {
                    seen++;
                }
            }
            o[q] = Rq > 0 ? s / Rq : s;
            continue;
        }
        int64_t kept = 0, ret = 0, relret = 0, hits = 0;
        double s = 0.0, rr = 0.0;
        for (int64_t i = off[q]; i < off[q + 1]; i++) {
            const double g = grade[i];
            const int64_t p = rank_of(condensed, g, pos, i, &kept);
            if (p < 0) continue;
            if (k >= 0 && p >= k) break;
            ret++;
            if (!(g >= rel)) continue;
            relret++;
            if (relret == 1) {
                rr = 1.0 / ((double)p + 1.0);
                if (kind == M_RR || kind == M_SUCCESS) break;  /* the first relevant decides */
            }
            s += (double)relret / ((double)p + 1.0);
            if ((double)p < Rq) hits++;
        }
        double v = 0.0;
        switch (kind) {
        case M_P: v = (double)relret / (double)k; break;
        case M_R: v = Rq > 0 ? (double)relret / Rq : 0.0; break;
        case M_SUCCESS: v = relret > 0 ? 1.0 : 0.0; break;
        case M_RR: v = rr; break;
        case M_AP: v = Rq > 0 ? s / Rq : 0.0; break;
        case M_RPREC: v = Rq > 0 ? (double)hits / Rq : 0.0; break;
        case M_NUMRET: v = (double)ret; break;
        case M_NUMRELRET: v = (double)relret; break;
        }
        o[q] = v;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ob); PyBuffer_Release(&pb); PyBuffer_Release(&gb); PyBuffer_Release(&rb);
    PyBuffer_Release(&nb); PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

/* dcg_measure(k, condensed, offsets, pos, grade, gains, denominators, out) -> bool: DCG@k
 * of every query, sum of gains[grade] / denominators[rank] in rank order (gains indexed by
 * integer grade >= 0, NaN where the gain convention has none; negative and unjudged grades
 * gain 0). False, with ``out`` partly written, when a grade is not an integer the table
 * holds or a rank is past the denominators: the caller then takes the numpy path. */
static PyObject *dcg_measure(PyObject *self, PyObject *args)
{
    Py_buffer ob, pb, gb, tb, db, out;
    int condensed;
    long long k;
    if (!PyArg_ParseTuple(args, "Lpy*y*y*y*y*w*", &k, &condensed, &ob, &pb, &gb, &tb, &db, &out)) return NULL;
    const int64_t *off = ob.buf, *pos = pb.buf;
    const double *grade = gb.buf, *gains = tb.buf, *denom = db.buf;
    const Py_ssize_t ngains = tb.len / 8, ndenom = db.len / 8;
    double *o = out.buf;
    Py_ssize_t nq = out.len / 8;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < nq && ok; q++) {
        int64_t kept = 0;
        double s = 0.0;
        for (int64_t i = off[q]; i < off[q + 1]; i++) {
            const double g = grade[i];
            const int64_t p = rank_of(condensed, g, pos, i, &kept);
            if (p < 0) continue;
            if (k >= 0 && p >= k) break;
            double gain = 0.0;
            if (g >= 0) {
                if (!(g < (double)ngains) || (double)(int64_t)g != g || isnan(gains[(int64_t)g])) { ok = 0; break; }
                gain = gains[(int64_t)g];
            }
            if (gain == 0.0) continue;  /* adds +0.0: s (never -0.0) is unchanged */
            if (p >= ndenom) { ok = 0; break; }
            s += gain / denom[p];
        }
        o[q] = s;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ob); PyBuffer_Release(&pb); PyBuffer_Release(&gb); PyBuffer_Release(&tb);
    PyBuffer_Release(&db); PyBuffer_Release(&out);
    return PyBool_FromLong(ok);
}

static int desc_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* ideal_dcg(k, offsets, grade, gains, denominators, out) -> bool: IDCG@k of every query of
 * a qrels index (query q's judgments are grade[offsets[q] .. offsets[q+1]], int64): its
 * positive gains sorted descending, summed as gain / denominators[rank]. False when a
 * grade >= 0 is past the gain table or has no gain there (NaN): numpy then decides. */
static PyObject *ideal_dcg(PyObject *self, PyObject *args)
{
    Py_buffer ob, gb, tb, db, out;
    long long k;
    if (!PyArg_ParseTuple(args, "Ly*y*y*y*w*", &k, &ob, &gb, &tb, &db, &out)) return NULL;
    const int64_t *off = ob.buf, *grade = gb.buf;
    const double *gains = tb.buf, *denom = db.buf;
    const Py_ssize_t ngains = tb.len / 8, ndenom = db.len / 8, nq = out.len / 8;
    double *o = out.buf, *scratch = NULL;
    int ok = 1, failed = 0;
    Py_BEGIN_ALLOW_THREADS
    scratch = block_scratch(off, nq);
    if (!scratch) failed = 1;
    for (Py_ssize_t q = 0; q < nq && ok && !failed; q++) {
        Py_ssize_t m = 0;
        for (int64_t i = off[q]; i < off[q + 1]; i++) {
            const int64_t g = grade[i];
            if (g < 0) continue;
            if (g >= ngains || isnan(gains[g])) { ok = 0; break; }
            if (gains[g] > 0) scratch[m++] = gains[g];
        }
        if (m > 1) {
            if (m <= 16) {
                for (Py_ssize_t i = 1; i < m; i++) {
                    double x = scratch[i];
                    Py_ssize_t j = i;
                    while (j > 0 && scratch[j - 1] < x) { scratch[j] = scratch[j - 1]; j--; }
                    scratch[j] = x;
                }
            } else {
                qsort(scratch, m, sizeof(double), desc_double);
            }
        }
        if (k >= 0 && m > k) m = k;
        if (m > ndenom) { ok = 0; break; }
        double s = 0.0;
        for (Py_ssize_t p = 0; p < m; p++) s += scratch[p] / denom[p];
        o[q] = s;
    }
    free(scratch);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ob); PyBuffer_Release(&gb); PyBuffer_Release(&tb); PyBuffer_Release(&db);
    PyBuffer_Release(&out);
    if (failed) return PyErr_NoMemory();
    return PyBool_FromLong(ok);
}

/* ---- set measures, interpolated precision, ERR, RBP (judged.core.measures.trec_eval_rest, .beyond) --- */

/* The same reading of align's ranked rows as binary_measure (rank_of: condensed skips NaN and
 * negative grades, k < 0 no cutoff); each function computes what its numpy reference in
 * judged.core.measures.trec_eval_rest or .beyond computes, with the same operations in the same order.
 * Powers and exponentials come from the caller's numpy tables, never from libm, so the two
 * paths give the same bits wherever numpy's own (vectorised) functions are used. */

/* PyBuffer_Release of each of the n buffers */
static void release_all(Py_buffer *b, int n)
{
    for (int i = 0; i < n; i++) PyBuffer_Release(&b[i]);
}

enum { S_SETP, S_SETR, S_SETF, S_SETAP, S_SETRELP };
/* the measure names of set_measure's kinds, in enum order: the module's SET_KINDS */
static const char *SET_KINDS[] = {"SetP", "SetR", "SetF", "SetAP", "SetRelP"};

/* set_measure(kind, rel, condensed, beta, offsets, pos, grade, R, out): trec_eval's measures of
 * the whole retrieved set (m_set_P.c, m_set_recall.c, m_set_F.c, m_set_map.c, m_set_rel_P.c)
 * from each query's retrieved and relevant-retrieved counts; R as binary_measure's. */
static PyObject *set_measure(PyObject *self, PyObject *args)
{
    Py_buffer b[5];  /* offsets, pos, grade, R, out */
    int kind, condensed;
    double rel, beta;
    if (!PyArg_ParseTuple(args, "idpdy*y*y*y*w*", &kind, &rel, &condensed, &beta, &b[0], &b[1], &b[2], &b[3], &b[4]))
        return NULL;
    const int64_t *off = b[0].buf;
    const double *grade = b[2].buf, *R = b[3].buf;
    double *o = b[4].buf;
    Py_ssize_t nq = b[4].len / 8;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < nq; q++) {
        int64_t ret = 0, relret = 0;
        for (int64_t i = off[q]; i < off[q + 1]; i++) {
            const double g = grade[i];
            if (condensed && !(g >= 0)) continue;
            ret++;
            if (g >= rel) relret++;
        }
        const double r = (double)relret, n = (double)ret, Rq = R[q];
        double v = 0.0, den;
        switch (kind) {
        case S_SETP: v = n > 0 ? r / n : 0.0; break;
        case S_SETR: v = Rq > 0 ? r / Rq : 0.0; break;
        case S_SETAP: den = n * Rq; v = den > 0 ? r * r / den : 0.0; break;
        case S_SETRELP: den = Rq > 0 ? (n < Rq ? n : Rq) : 0.0; v = den > 0 ? r / den : 0.0; break;
        case S_SETF:
            if (relret > 0) {
                const double P = r / n, Rc = r / Rq;
                v = (beta + 1.0) * P * Rc / (beta * P + Rc);
            }
            break;
        }
        o[q] = v;
    }
    Py_END_ALLOW_THREADS
    release_all(b, 5);
    Py_RETURN_NONE;
}

/* iprec(rel, condensed, add, levels, offsets, pos, grade, R, out): interpolated precision
 * (m_iprec_at_recall.c) at every recall level x of ``levels``, out[q * nlevels + l]: the best
 * precision at or after the c-th relevant document retrieved, c = floor(x * R + add) (add 0.5:
 * trec_eval 10's lround; 0.9: trec_eval 9), the first for c = 0, 0 when fewer than c (or
 * none) are retrieved. */
static PyObject *iprec(PyObject *self, PyObject *args)
{
    Py_buffer b[6];  /* levels, offsets, pos, grade, R, out */
    int condensed;
    double rel, add;
    if (!PyArg_ParseTuple(args, "dpdy*y*y*y*y*w*", &rel, &condensed, &add, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]))
        return NULL;
    const int64_t *off = b[1].buf, *pos = b[2].buf;
    const double *levels = b[0].buf, *grade = b[3].buf, *R = b[4].buf;
    const Py_ssize_t nl = b[0].len / 8;
    double *o = b[5].buf, *best = NULL;
    Py_ssize_t nq = nl ? b[5].len / 8 / nl : 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    best = block_scratch(off, nq);
    if (!best) failed = 1;
    for (Py_ssize_t q = 0; q < nq && !failed; q++) {
        int64_t kept = 0, m = 0;
        for (int64_t i = off[q]; i < off[q + 1]; i++) {
            const double g = grade[i];
            const int64_t p = rank_of(condensed, g, pos, i, &kept);
            if (p < 0 || !(g >= rel)) continue;
            m++;
            best[m - 1] = (double)m / ((double)p + 1.0);
        }
        double b = 0.0;  /* the best precision at or after each relevant document */
        for (int64_t j = m - 1; j >= 0; j--) {
            if (best[j] > b) b = best[j];
            best[j] = b;
        }
        for (Py_ssize_t l = 0; l < nl; l++) {
            const int64_t cut = (int64_t)floor(levels[l] * R[q] + add);
            o[q * nl + l] = (cut <= m && m > 0) ? best[(cut > 1 ? cut : 1) - 1] : 0.0;
        }
    }
    free(best);
    Py_END_ALLOW_THREADS
    release_all(b, 6);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* err_measure(k, condensed, offsets, pos, grade, chance, out) -> bool: ERR@k (Chapelle et al.
 * 2009), the sum over the top k of chance_i * decay / i, decay the product of (1 - chance_j)
 * above; chance_i = chance[grade_i], the caller's table (2^g - 1) / 2^max_rel by integer grade
 * (0 for unjudged and negative grades). False, ``out`` partly written, when a grade is not an
 * integer the table holds: the caller then takes the numpy path. */
static PyObject *err_measure(PyObject *self, PyObject *args)
{
    Py_buffer b[5];  /* offsets, pos, grade, chance, out */
    int condensed;
    long long k;
    if (!PyArg_ParseTuple(args, "Lpy*y*y*y*w*", &k, &condensed, &b[0], &b[1], &b[2], &b[3], &b[4])) return NULL;
    const int64_t *off = b[0].buf, *pos = b[1].buf;
    const double *grade = b[2].buf, *chance = b[3].buf;
    const Py_ssize_t nchance = b[3].len / 8;
    double *o = b[4].buf;
    Py_ssize_t nq = b[4].len / 8;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < nq && ok; q++) {
        int64_t kept = 0, j = 0;
        double decay = 1.0, score = 0.0;
        for (int64_t i = off[q]; i < off[q + 1]; i++) {
            const double g = grade[i];
            const int64_t p = rank_of(condensed, g, pos, i, &kept);
            if (p < 0) continue;
            if (k >= 0 && p >= k) break;
            double r = chance[0];
            if (g > 0) {
                if (!(g < (double)nchance) || (double)(int64_t)g != g) { ok = 0; break; }
                r = chance[(int64_t)g];
            }
            score += r * decay / (double)(++j);
            decay *= 1.0 - r;
        }
        o[q] = score;
    }
    Py_END_ALLOW_THREADS
    release_all(b, 5);
    return PyBool_FromLong(ok);
}

/* ideal_err(k, offsets, grade, chance, out) -> bool: ERR@k of every query's ideal ranking,
 * its judgments (int64 grades) by grade, highest first: err_measure's sum over the grades
 * counted, not sorted (documents of one grade have one chance). False when a grade is past
 * the chance table. */
static PyObject *ideal_err(PyObject *self, PyObject *args)
{
    Py_buffer b[4];  /* offsets, grade, chance, out */
    long long k;
    if (!PyArg_ParseTuple(args, "Ly*y*y*w*", &k, &b[0], &b[1], &b[2], &b[3])) return NULL;
    const int64_t *off = b[0].buf, *grade = b[1].buf;
    const double *chance = b[2].buf;
    const int64_t nchance = b[2].len / 8;
    double *o = b[3].buf;
    Py_ssize_t nq = b[3].len / 8;
    int ok = 1, failed = 0;
    Py_BEGIN_ALLOW_THREADS
    int64_t *count = calloc(nchance > 0 ? nchance : 1, sizeof(int64_t));
    if (!count) failed = 1;
    for (Py_ssize_t q = 0; q < nq && ok && !failed; q++) {
        int64_t top = 0, zero = 0, j = 0;
        for (int64_t i = off[q]; i < off[q + 1]; i++) {
            const int64_t g = grade[i];
            if (g <= 0) { zero++; continue; }
            if (g >= nchance) { ok = 0; break; }
            count[g]++;
            if (g > top) top = g;
        }
        double decay = 1.0, score = 0.0;
        for (int64_t g = top; g >= 0; g--) {  /* grade 0 stands for every judgment without gain */
            int64_t c = g > 0 ? count[g] : zero;
            if (g > 0) count[g] = 0;
            const double r = chance[g];
            for (; c > 0 && ok && (k < 0 || j < k); c--) {
                score += r * decay / (double)(++j);
                decay *= 1.0 - r;
            }
        }
        o[q] = score;
    }
    free(count);
    Py_END_ALLOW_THREADS
    release_all(b, 4);
    if (failed) return PyErr_NoMemory();
    return PyBool_FromLong(ok);
}

/* rbp_measure(residual, k, rel, condensed, offsets, pos, grade, weights, powers, out) -> bool:
 * RBP@k (Moffat & Zobel 2008), the sum of weights[rank] = (1 - p) p^rank over the relevant
 * rows of the top k; with ``residual``, the sum over the unjudged (NaN or negative) rows of
 * the whole ranking plus powers[retrieved] = p^retrieved. False when a rank or a count is past
 * the tables. */
static PyObject *rbp_measure(PyObject *self, PyObject *args)
{
    Py_buffer b[6];  /* offsets, pos, grade, weights, powers, out */
    int residual, condensed;
    long long k;
    double rel;
    if (!PyArg_ParseTuple(args, "pLdpy*y*y*y*y*w*", &residual, &k, &rel, &condensed, &b[0], &b[1], &b[2], &b[3], &b[4],
                          &b[5]))
        return NULL;
    const int64_t *off = b[0].buf, *pos = b[1].buf;
    const double *grade = b[2].buf, *weights = b[3].buf, *powers = b[4].buf;
    const int64_t nw = b[3].len / 8, nx = b[4].len / 8;
    double *o = b[5].buf;
    Py_ssize_t nq = b[5].len / 8;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < nq && ok; q++) {
        int64_t kept = 0, ret = 0;
        double s = 0.0;
        for (int64_t i = off[q]; i < off[q + 1]; i++) {
            const double g = grade[i];
            const int64_t p = rank_of(condensed, g, pos, i, &kept);
            if (p < 0) continue;
            if (k >= 0 && p >= k) break;
            if (p >= nw) { ok = 0; break; }
            ret++;
            if (residual ? !(g >= 0) : g >= rel) s += weights[p];
        }
        if (residual) {
            if (ret >= nx) { ok = 0; break; }
            s += powers[ret];
        }
        o[q] = s;
    }
    Py_END_ALLOW_THREADS
    release_all(b, 6);
    return PyBool_FromLong(ok);
}

/* ---- trec_rank ------------------------------------------------------------------------ */

typedef struct {
    const double *score;
    const int32_t *off;
    const unsigned char *data;
} RankKey;

/* <0 when run row ra ranks before run row rb: score descending, then docid descending
 * (strcmp, as trec_eval 10), then input order. */
static inline int rank_cmp_rows(const RankKey *k, int64_t ra, int64_t rb)
{
    double sa = k->score[ra], sb = k->score[rb];
    if (sa > sb) return -1;
    if (sa < sb) return 1;
    int32_t la = k->off[ra + 1] - k->off[ra], lb = k->off[rb + 1] - k->off[rb];
    int c = memcmp(k->data + k->off[ra], k->data + k->off[rb], la < lb ? la : lb);
    if (c == 0) c = (la > lb) - (la < lb);
    if (c) return -c;
    return (ra > rb) - (ra < rb);
}

static void merge_sort_rows(const RankKey *k, int64_t *v, int64_t *tmp, Py_ssize_t n)
{
    if (n < 16) {
        for (Py_ssize_t i = 1; i < n; i++) {
            int64_t x = v[i];
            Py_ssize_t j = i;
            while (j > 0 && rank_cmp_rows(k, x, v[j - 1]) < 0) { v[j] = v[j - 1]; j--; }
            v[j] = x;
        }
        return;
    }
    Py_ssize_t h = n / 2;
    merge_sort_rows(k, v, tmp, h);
    merge_sort_rows(k, v + h, tmp, n - h);
    if (rank_cmp_rows(k, v[h - 1], v[h]) < 0) return;
    memcpy(tmp, v, h * sizeof(int64_t));
    Py_ssize_t i = 0, j = h, o = 0;
    while (i < h && j < n) v[o++] = rank_cmp_rows(k, v[j], tmp[i]) < 0 ? v[j++] : tmp[i++];
    while (i < h) v[o++] = tmp[i++];
}

/* A query's rows out of order are sorted as (key, row) pairs in one contiguous array
 * rather than through score[row]: the key is a uint64 whose unsigned order is the score's
 * descending order (the IEEE 754 bits, sign-flipped so that they sort as integers, then
 * complemented), with -0.0 read as 0.0 since the two compare equal; +-inf sort as numbers.
 * Equal keys are exactly equal scores, left to sort_equal_score for docid and row order. */
typedef struct {
    uint64_t key;
    int64_t row;
} KeyRow;

static inline uint64_t rank_key(double s)
{
    uint64_t b;
    s += 0.0;  /* -0.0 + 0.0 is 0.0: one key for the two zeros, which compare equal */
    memcpy(&b, &s, sizeof b);
    return b >> 63 ? b : ~(b | (UINT64_C(1) << 63));
}

#define KEY_SMALL 16     /* at most this many pairs: left to the final insertion pass */
#define KEY_BITS_MAX 11  /* at most 2048 buckets per pass */
#define KEY_LEVELS 16    /* passes nested at most: each one narrows the range >= 16 times */

static inline int bit_length(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return x ? 64 - __builtin_clzll(x) : 0;
#else
    int n = 0;
    while (x) { n++; x >>= 1; }
    return n;
#endif
}

/* Buckets of one key_buckets pass over n pairs: the power of two >= n, at most 2048. */
static inline Py_ssize_t key_bucket_count(Py_ssize_t n)
{
    int bits = bit_length((uint64_t)(n - 1));
    return (Py_ssize_t)1 << (bits < KEY_BITS_MAX ? bits : KEY_BITS_MAX);
}

/* Groups a[0..n) by key: a most-significant-digit bucket pass that spreads the keys'
 * range [lo, hi] evenly over about one bucket per pair (bucket ((key - lo) >> shift) *
 * mul >> 32, where (hi - lo) >> shift < 2^32), repeated inside every bucket of more than
 * KEY_SMALL pairs, at most `levels` passes deep. The buckets come out in key order for
 * key_insertion to finish. A pass is stable; tmp and count (levels *
 * key_bucket_count(n) entries) are scratch. */
static void key_buckets(KeyRow *a, KeyRow *tmp, Py_ssize_t n, uint32_t *count, int levels)
{
    uint64_t lo = a[0].key, hi = lo;
    for (Py_ssize_t i = 1; i < n; i++) {
        uint64_t x = a[i].key;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    if (lo == hi) return;
    Py_ssize_t nb = key_bucket_count(n);
    int shift = bit_length(hi - lo) - 32;
    if (shift < 0) shift = 0;
    const uint64_t mul = ((uint64_t)nb << 32) / (((hi - lo) >> shift) + 1);  /* bucket(hi) < nb */
    memset(count, 0, nb * sizeof(uint32_t));
    for (Py_ssize_t i = 0; i < n; i++) count[((a[i].key - lo) >> shift) * mul >> 32]++;
    uint32_t sum = 0, largest = 0;
    for (Py_ssize_t d = 0; d < nb; d++) {  /* count[d]: where bucket d starts */
        uint32_t c = count[d];
        count[d] = sum;
        sum += c;
        largest = c > largest ? c : largest;
    }
    for (Py_ssize_t i = 0; i < n; i++) tmp[count[((a[i].key - lo) >> shift) * mul >> 32]++] = a[i];
    memcpy(a, tmp, n * sizeof(KeyRow));
    if (largest <= KEY_SMALL || levels <= 1) return;
    for (Py_ssize_t d = 0, s = 0; s < n; s = count[d++])  /* now count[d]: where bucket d ends */
        if (count[d] - s > KEY_SMALL) key_buckets(a + s, tmp, count[d] - s, count + nb, levels - 1);
}

/* Stable insertion sort by key; cheap once key_buckets has grouped the pairs. */
static void key_insertion(KeyRow *a, Py_ssize_t n)
{
    for (Py_ssize_t i = 1; i < n; i++) {
        KeyRow x = a[i];
        Py_ssize_t j = i;
        while (j > 0 && a[j - 1].key > x.key) { a[j] = a[j - 1]; j--; }
        a[j] = x;
    }
}

/* Docids as keys: 8 bytes from byte `skip` on, big-endian and zero-padded, complemented:
 * their unsigned order is the docids' descending byte order, except that docids whose 8
 * bytes agree (or differ only by trailing NUL bytes against padding) share a key. */
static inline uint64_t docid_key(const RankKey *k, int64_t row, int32_t skip)
{
    const unsigned char *p = k->data + k->off[row] + skip;
    int32_t len = k->off[row + 1] - k->off[row] - skip;
    uint64_t x = 0;
    for (int b = 0; b < 8; b++) x = x << 8 | (b < len ? p[b] : 0);
    return ~x;
}

#define TIES_BY_KEY 32  /* equal scores: fewer rows than this are merge-sorted directly */

/* v[0..n): rows of one score, into docid descending, then row order. Many rows are
 * sorted as (docid key, row) pairs in a[0..n) (tmp, count: key_buckets' scratch) after
 * the bytes they all share, and only rows with equal keys are compared in full. */
static void sort_equal_score(const RankKey *k, int64_t *v, Py_ssize_t n, KeyRow *a, KeyRow *tmp,
                             uint32_t *count, int64_t *row_tmp)
{
    if (n < TIES_BY_KEY) {
        merge_sort_rows(k, v, row_tmp, n);
        return;
    }
    const unsigned char *first = k->data + k->off[v[0]];
    int32_t shared = k->off[v[0] + 1] - k->off[v[0]];
    for (Py_ssize_t i = 1; i < n && shared > 0; i++) {
        const unsigned char *p = k->data + k->off[v[i]];
        int32_t len = k->off[v[i] + 1] - k->off[v[i]], j = 0;
        if (len < shared) shared = len;
        while (j < shared && p[j] == first[j]) j++;
        shared = j;
    }
    for (Py_ssize_t i = 0; i < n; i++) { a[i].key = docid_key(k, v[i], shared); a[i].row = v[i]; }
    key_buckets(a, tmp, n, count, KEY_LEVELS);
    key_insertion(a, n);
    for (Py_ssize_t i = 0; i < n; i++) v[i] = a[i].row;
    for (Py_ssize_t i = 1, s = 0; i <= n; i++)
        if (i == n || a[i].key != a[s].key) {
            if (i - s > 1) merge_sort_rows(k, v + s, row_tmp, i - s);
            s = i;
        }
}

/* v[0..n): one query's rows in score order, into rank order: each run of equal scores
 * by sort_equal_score. Equal scores are told by their keys a[0..n) when `keyed` (read
 * in order, not through v), else by score[v[i]]; a run's pairs are free once it ends, and
 * become its scratch. */
static void sort_equal_scores(const RankKey *k, int64_t *v, Py_ssize_t n, int keyed, KeyRow *a, KeyRow *tmp,
                              uint32_t *count, int64_t *row_tmp)
{
    for (Py_ssize_t i = 1, s = 0; i <= n; i++)
        if (i == n || (keyed ? a[i].key != a[s].key : k->score[v[i]] != k->score[v[s]])) {
            if (i - s > 1) sort_equal_score(k, v + s, i - s, a + s, tmp + s, count, row_tmp);
            s = i;
        }
}

/* v[0..n): one query's rows (ascending), into rank order, given that v[0..from) is in
 * it and v[from - 1], v[from] are not. Scores already descending (only equal scores out
 * of docid order, as in a file sorted by score alone) keep their places, and the equal
 * scores from the run holding v[from - 1] on are ordered; otherwise the rows are sorted
 * as (key, row) pairs. */
static void sort_query_rows(const RankKey *k, int64_t *v, Py_ssize_t n, Py_ssize_t from, KeyRow *a,
                            KeyRow *tmp, uint32_t *count, int64_t *row_tmp)
{
    Py_ssize_t i = from;
    while (i < n && k->score[v[i - 1]] >= k->score[v[i]]) i++;
    if (i == n) {
        i = from - 1;
        while (i > 0 && k->score[v[i - 1]] == k->score[v[from - 1]]) i--;
        sort_equal_scores(k, v + i, n - i, 0, a, tmp, count, row_tmp);
        return;
    }
    for (i = 0; i < n; i++) { a[i].key = rank_key(k->score[v[i]]); a[i].row = v[i]; }
    if (n > KEY_SMALL) key_buckets(a, tmp, n, count, KEY_LEVELS);
    key_insertion(a, n);
    for (i = 0; i < n; i++) v[i] = a[i].row;
    sort_equal_scores(k, v, n, 1, a, tmp, count, row_tmp);
}

/* align's ranking in one pass, for ties='trec': the run rows whose query index qe[row]
 * is >= 0, in (query index, score descending, docid descending, row) order, with each
 * one's query index and 0-based rank, and the per-query offsets. Queries whose rows are
 * already in order (as run files list them) are checked, not sorted; scratch memory is
 * sized by the longest query. Returns (rows, q, pos, offsets) as int64 bytearrays, or
 * None when a kept score is NaN. */
static PyObject *trec_rank(PyObject *self, PyObject *args)
{
    Py_buffer qb, sb, ob, db;
    Py_ssize_t nq;
    if (!PyArg_ParseTuple(args, "y*ny*y*y*", &qb, &nq, &sb, &ob, &db)) return NULL;
    Py_ssize_t n = qb.len / 8;
    const int64_t *qe = qb.buf;
    const double *score = sb.buf;
    Out offs_b = {0}, rows_b = {0}, q_b = {0}, pos_b = {0};
    PyObject *offs = out_new(&offs_b, (nq + 1) * 8) ? NULL : offs_b.obj, *rows_o = NULL, *q_o = NULL, *pos_o = NULL;
    PyObject *result = NULL;
    int has_nan = 0, failed = 0;
    if (!offs) goto done;
    int64_t *start = (int64_t *)offs_b.p;
    Py_BEGIN_ALLOW_THREADS
    query_starts(qe, n, nq, start);
    for (Py_ssize_t i = 0; i < n && !has_nan; i++) has_nan = qe[i] >= 0 && isnan(score[i]);
    Py_END_ALLOW_THREADS
    if (has_nan) { result = Py_None; Py_INCREF(result); goto done; }
    Py_ssize_t m = start[nq];
    if (out_new(&rows_b, m * 8) || out_new(&q_b, m * 8) || out_new(&pos_b, m * 8)) {
        rows_o = rows_b.obj; q_o = q_b.obj; pos_o = pos_b.obj;
        goto done;
    }
    rows_o = rows_b.obj; q_o = q_b.obj; pos_o = pos_b.obj;
    int64_t *rows = (int64_t *)rows_b.p, *q = (int64_t *)q_b.p, *pos = (int64_t *)pos_b.p;
    Py_BEGIN_ALLOW_THREADS
    KeyRow *pairs = NULL;  /* scratch, allocated at the first query out of order */
    uint32_t *count = NULL;
    int64_t *row_tmp = NULL;
    Py_ssize_t longest = 0;
    for (Py_ssize_t k = 0; k < nq; k++)
        if (start[k + 1] - start[k] > longest) longest = start[k + 1] - start[k];
    if (rows_by_query(qe, n, nq, start, rows)) failed = 1;
    else {  /* each query's rows, already by query, into rank order */
        RankKey key = {score, ob.buf, db.buf};
        for (Py_ssize_t k = 0; k < nq && !failed; k++) {
            int64_t *v = rows + start[k];
            Py_ssize_t len = start[k + 1] - start[k], i = 1;
            while (i < len && rank_cmp_rows(&key, v[i - 1], v[i]) < 0) i++;
            if (i < len) {
                if (!pairs) {
                    pairs = malloc(2 * longest * sizeof(KeyRow));
                    count = malloc(KEY_LEVELS * key_bucket_count(longest) * sizeof(uint32_t));
                    row_tmp = malloc((longest / 2 + 1) * sizeof(int64_t));
                    if (!pairs || !count || !row_tmp) { failed = 1; break; }
                }
                sort_query_rows(&key, v, len, i, pairs, pairs + longest, count, row_tmp);
            }
            for (Py_ssize_t j = 0; j < len; j++) { q[start[k] + j] = k; pos[start[k] + j] = j; }
        }
    }
    free(pairs); free(count); free(row_tmp);
    Py_END_ALLOW_THREADS
    if (failed) { PyErr_NoMemory(); goto done; }
    out_fit(&rows_b, m * 8); out_fit(&q_b, m * 8); out_fit(&pos_b, m * 8);
    result = Py_BuildValue("(OOOO)", rows_o, q_o, pos_o, offs);
done:
    Py_XDECREF(offs); Py_XDECREF(rows_o); Py_XDECREF(q_o); Py_XDECREF(pos_o);
    PyBuffer_Release(&qb); PyBuffer_Release(&sb); PyBuffer_Release(&ob); PyBuffer_Release(&db);
    return result;
}

/* ap_extremes(offsets, grade, rel, R, extras, can_rel, can_non, lo, hi): AP's minimum and
 * maximum per query over the labels of its holes (NaN grades), as
 * judged.core.kernels.bound_kernels.ap_extremes computes them, operation for operation: sums in rank
 * order, s newly relevant holes the s shallowest (max) or, after the extras, the s
 * deepest (min). */
static PyObject *ap_extremes(PyObject *self, PyObject *args)
{
    Py_buffer ob, gb, rb, eb, lb, hb;
    double rel;
    int can_rel, can_non;
    if (!PyArg_ParseTuple(args, "y*y*dy*y*ppw*w*", &ob, &gb, &rel, &rb, &eb, &can_rel, &can_non, &lb, &hb))
        return NULL;
    const int64_t *off = ob.buf, *extras = eb.buf;
    const double *grade = gb.buf, *R = rb.buf;
    double *lo = lb.buf, *hi = hb.buf;
    Py_ssize_t nq = lb.len / 8, longest = 0;
    for (Py_ssize_t q = 0; q < nq; q++)
        if (off[q + 1] - off[q] > longest) longest = off[q + 1] - off[q];
    /* per hole (rank order): rank, fixed relevant above it, sum of 1/rank of fixed relevant up to it */
    double *h_rank = malloc((longest + 1) * sizeof(double)), *h_inv = malloc((longest + 1) * sizeof(double));
    int64_t *h_above = malloc((longest + 1) * sizeof(int64_t));
    int failed = !h_rank || !h_inv || !h_above;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < nq && !failed; q++) {
        const double *g = grade + off[q];
        const int64_t len = off[q + 1] - off[q], E = extras[q];
        int64_t nfixed = 0, nh = 0;
        double inv = 0.0, base = 0.0;
        for (int64_t i = 0; i < len; i++) {
            const double rank = (double)(i + 1);
            if (g[i] >= rel) {
                inv += 1.0 / rank;
                base += (double)(nfixed + 1) / rank;
                nfixed++;
            } else if (isnan(g[i])) {
                h_rank[nh] = rank; h_above[nh] = nfixed; h_inv[nh] = inv; nh++;
            }
        }
        const int64_t last = nh + E;
        double vmin = 0.0, vmax = 0.0;
        for (int family = 0; family < 2; family++) {  /* 0: min, 1: max */
            double acc = 0.0, earlier = 0.0, best = 0.0;
            int64_t deep = nh;
            for (int64_t c = 0; c <= last; c++) {
                if (c > 0) {
                    double gain = 0.0;
                    if (family == 1 && c <= nh) {
                        const int64_t h = c - 1;
                        gain = (double)(h_above[h] + c) / h_rank[h] + (inv - h_inv[h]);
                    } else if (family == 0 && c > E) {
                        const int64_t h = --deep;
                        gain = (double)(h_above[h] + 1) / h_rank[h] + (inv - h_inv[h]) + earlier;
                        earlier += 1.0 / h_rank[h];
                    }
                    acc += gain;
                }
                const double denom = R[q] + (double)c;
                const double v = denom > 0 ? (base + acc) / denom : 0.0;
                const int take = !can_rel ? c == 0 : !can_non ? c == last : 1;
                if (!take) continue;
                if (c == 0 || (!can_rel || !can_non)) best = v;
                else if (family == 0 ? v < best : v > best) best = v;
            }
            if (family == 0) vmin = best; else vmax = best;
        }
        lo[q] = vmin; hi[q] = vmax;
    }
    Py_END_ALLOW_THREADS
    free(h_rank); free(h_inv); free(h_above);
    PyBuffer_Release(&ob); PyBuffer_Release(&gb); PyBuffer_Release(&rb); PyBuffer_Release(&eb);
    PyBuffer_Release(&lb); PyBuffer_Release(&hb);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* dinkelbach(W, D, dfix, levels, allowed, above, count, sign, iterations, lam): for each
 * problem (a row of W: prefix sums of its sorted hole weights), lambda* = max of
 * (sign * DCG) / IDCG over the holes' gains by Dinkelbach's method, the inner maximum of
 * sign * DCG - lambda * IDCG by the dynamic programme over the gain levels of
 * judged.core.kernels.bound_kernels.dinkelbach, operation for operation. */
typedef struct {
    const double *W, *D, *levels;
    const int8_t *allowed;
    const int64_t *above, *count;
    double sign, dfix;
    Py_ssize_t nh, nl;
    double *best;
    int64_t *arg;  /* nl x (nh + 1) */
} DinkelbachProblem;

static void dinkelbach_solve(DinkelbachProblem *p, double lam, double *F, double *f, double *g)
{
    const Py_ssize_t nh = p->nh, w = nh + 1;
    double *best = p->best;
    for (Py_ssize_t t = 0; t < w; t++) best[t] = -INFINITY;
    best[0] = p->sign * p->dfix;
    for (Py_ssize_t i = 0; i < p->nl; i++) {
        const double u = p->levels[i], lu = lam * u, su = p->sign * u;
        const int64_t a = p->above[i], c = p->count[i];
        int64_t *arg = p->arg + i * w;
        if (!p->allowed[i]) {
            for (Py_ssize_t t = 0; t < w; t++) {
                best[t] = best[t] - (lu * p->D[a + t + c] - lu * p->D[a + t]);
                arg[t] = t;
            }
            continue;
        }
        double pref = -INFINITY;
        int64_t at = 0;
        for (Py_ssize_t t = 0; t < w; t++) {
            const double B = best[t] - su * p->W[t] + lu * p->D[a + t];
            if (t == 0 || B > pref) pref = B;
            if (B >= pref) at = t;
            arg[t] = at;
            best[t] = pref + su * p->W[t] - lu * p->D[a + t + c];
        }
    }
    double fv = p->dfix, gv = 0.0;
    int64_t t2 = nh;
    for (Py_ssize_t i = p->nl - 1; i >= 0; i--) {
        const double u = p->levels[i];
        const int64_t t1 = p->arg[i * w + t2], a = p->above[i], c = p->count[i];
        fv += u * (p->W[t2] - p->W[t1]);
        gv += u * (p->D[a + t2 + c] - p->D[a + t1]);
        t2 = t1;
    }
    *F = best[nh]; *f = fv; *g = gv;
}

static PyObject *dinkelbach(PyObject *self, PyObject *args)
{
    Py_buffer Wb, Db, fb, lb, ab, ub, cb, out;
    double sign;
    int iterations;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*diw*", &Wb, &Db, &fb, &lb, &ab, &ub, &cb, &sign, &iterations, &out))
        return NULL;
    const Py_ssize_t nb = out.len / 8, nl = lb.len / 8;
    const Py_ssize_t w = nb ? Wb.len / 8 / nb : 1;
    double *lam = out.buf;
    double *best = malloc(w * sizeof(double));
    int64_t *arg = malloc((nl ? nl : 1) * w * sizeof(int64_t));
    int failed = !best || !arg;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t b = 0; b < nb && !failed; b++) {
        DinkelbachProblem p = {(const double *)Wb.buf + b * w, Db.buf, lb.buf, ab.buf,
                               (const int64_t *)ub.buf + b * nl, (const int64_t *)cb.buf + b * nl,
                               sign, ((const double *)fb.buf)[b], w - 1, nl, best, arg};
        double F, f, g, l = 0.0;
        dinkelbach_solve(&p, 0.0, &F, &f, &g);
        if (g > 0) l = sign * f / g;
        for (int it = 0; it < iterations; it++) {
            dinkelbach_solve(&p, l, &F, &f, &g);
            const double scale = fabs(l) * g + fabs(f);  /* np.maximum(1.0, scale): NaN stays NaN */
            const double floor = isnan(scale) ? scale : 1.0 >= scale ? 1.0 : scale;
            if (F <= 1e-12 * floor || g <= 0) break;
            l = sign * f / g;
        }
        lam[b] = l;
    }
    Py_END_ALLOW_THREADS
    free(best); free(arg);
    PyBuffer_Release(&Wb); PyBuffer_Release(&Db); PyBuffer_Release(&fb); PyBuffer_Release(&lb);
    PyBuffer_Release(&ab); PyBuffer_Release(&ub); PyBuffer_Release(&cb); PyBuffer_Release(&out);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* ---- drawn_sums ------------------------------------------------------------------------ */

/* drawn_sums(u, cum, levels, q, sums, weights, out): the hole estimate's draws summed per
 * draw and query (judged.analyses.estimate), c draws of nh holes. Hole h's level in draw s
 * is the number of its first levels - 1 cumulative probabilities cum[h] that u[s, h]
 * exceeds; out[s, t, q[h]] (sums per draw and query, the caller checks q[h] < nq) adds
 * weights[t, h, level] over the holes in order, from 0.0. The numpy reference is
 * judged.core.kernels.draws.drawn_sums (the levels by comparisons, each sum by np.bincount:
 * the same additions in the same order, so the same bits). */
static PyObject *drawn_sums(PyObject *self, PyObject *args)
{
    Py_buffer ub, cb, qb, wb, ob;
    Py_ssize_t L, T;
    if (!PyArg_ParseTuple(args, "y*y*ny*ny*w*", &ub, &cb, &L, &qb, &T, &wb, &ob)) return NULL;
    const double *u = ub.buf, *cum = cb.buf, *w = wb.buf;
    const int64_t *q = qb.buf;
    double *out = ob.buf;
    const Py_ssize_t nh = qb.len / 8, c = nh ? ub.len / 8 / nh : 0, nq = c && T ? ob.len / 8 / c / T : 0;
    Py_BEGIN_ALLOW_THREADS
    memset(out, 0, ob.len);
    for (Py_ssize_t s = 0; s < c; s++) {
        const double *us = u + s * nh;
        double *os = out + s * T * nq;
        for (Py_ssize_t h = 0; h < nh; h++) {
            const double *ch = cum + h * L;
            Py_ssize_t level = 0;
            for (Py_ssize_t l = 0; l < L - 1; l++) level += us[h] > ch[l];
            for (Py_ssize_t t = 0; t < T; t++) os[t * nq + q[h]] += w[(t * nh + h) * L + level];
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ub); PyBuffer_Release(&cb); PyBuffer_Release(&qb); PyBuffer_Release(&wb);
    PyBuffer_Release(&ob);
    Py_RETURN_NONE;
}

static PyMethodDef METHODS[] = {
    {"tokenize", tokenize, METH_VARARGS,
     "tokenize(data, nfields, string_fields, number_field, number_kind, hash_field, first_line, extra)"},
    {"binary_measure", binary_measure, METH_VARARGS,
     "binary_measure(kind, k, rel, condensed, offsets, pos, grade, R, N, out)"},
    {"dcg_measure", dcg_measure, METH_VARARGS, "dcg_measure(k, condensed, offsets, pos, grade, gains, denominators, out) -> bool"},
    {"ideal_dcg", ideal_dcg, METH_VARARGS, "ideal_dcg(k, offsets, grade, gains, denominators, out) -> bool"},
    {"string_hash", string_hash, METH_VARARGS, "string_hash(offsets_int32, data, out_uint64)"},
    {"dict_pairs", dict_pairs, METH_VARARGS,
     "dict_pairs(d, integer, mappings, number) -> None or (rows, qid, docid, values, hashes, starts, block qids, all_str)"},
    {"gather_strings", gather_strings, METH_VARARGS,
     "gather_strings(offsets_int32, data, rows_int64, out_offsets_int32) -> bytes or None"},
    {"equal_at", equal_at, METH_VARARGS, "equal_at(a_offsets, a_data, a_rows, b_offsets, b_data, b_rows, out_bool)"},
    {"repeated_rows", repeated_rows, METH_VARARGS, "repeated_rows(qcode, nq, hash, offsets, data) -> int64 rows"},
    {"string_codes", string_codes, METH_VARARGS,
     "string_codes(group, n_groups, offsets, data, code_out, first_out) -> number of codes"},
    {"lookup_blocks", lookup_blocks, METH_VARARGS,
     "lookup_blocks(qcode, hash, run_rows, run_offsets, run_data, j_start, j_hash, j_offsets, j_data, j_grade, out)"},
    {"pool_trim", pool_trim, METH_NOARGS, "pool_trim() -> bytes freed: the pool of column blocks, emptied"},
    {"bounded_indices", bounded_indices, METH_VARARGS, "bounded_indices(draws_uint32, n, out_int64) -> (filled, used)"},
    {"drawn_sums", drawn_sums, METH_VARARGS, "drawn_sums(u, cum, levels, q, sums, weights, out): per draw and query"},
    {"holes_only_in", holes_only_in, METH_VARARGS,
     "holes_only_in(a_start, a_grade, a_row, a_hash, a_offsets, a_data, b_start, b_grade, b_row, b_hash, b_offsets, "
     "b_data, only_a, only_b)"},
    {"trec_rank", trec_rank, METH_VARARGS, "trec_rank(query_index, n_queries, score, offsets, data) -> (rows, q, pos, offsets)"},
    {"ap_extremes", ap_extremes, METH_VARARGS, "ap_extremes(offsets, grade, rel, R, extras, can_rel, can_non, lo, hi)"},
    {"dinkelbach", dinkelbach, METH_VARARGS,
     "dinkelbach(W, D, dfix, levels, allowed, above, count, sign, iterations, lam)"},
    {"set_measure", set_measure, METH_VARARGS, "set_measure(kind, rel, condensed, beta, offsets, pos, grade, R, out)"},
    {"iprec", iprec, METH_VARARGS, "iprec(rel, condensed, add, levels, offsets, pos, grade, R, out)"},
    {"err_measure", err_measure, METH_VARARGS, "err_measure(k, condensed, offsets, pos, grade, chance, out) -> bool"},
    {"ideal_err", ideal_err, METH_VARARGS, "ideal_err(k, offsets, grade, chance, out) -> bool"},
    {"rbp_measure", rbp_measure, METH_VARARGS,
     "rbp_measure(residual, k, rel, condensed, offsets, pos, grade, weights, powers, out) -> bool"},
{NULL, NULL, 0, NULL}};

extern PyMethodDef judged_pooling_methods[];  /* src/judged/analyses/pooling/_native_pooling.c */

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_native", "judged's compiled fast path", -1, METHODS};

/* module.attr = the tuple of ``names``: the measure names of a kernel's kinds */
static int add_names(PyObject *module, const char *attr, const char **names, Py_ssize_t n)
{
    PyObject *kinds = PyTuple_New(n);
    if (kinds == NULL) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyUnicode_FromString(names[i]);
        if (name == NULL) { Py_DECREF(kinds); return -1; }
        PyTuple_SET_ITEM(kinds, i, name);
    }
    if (PyModule_AddObject(module, attr, kinds) < 0) { Py_DECREF(kinds); return -1; }
    return 0;
}

PyMODINIT_FUNC PyInit__native(void)
{
    const char *ws = " \t\n\r\v\f";
    for (const char *c = ws; *c; c++) WS[(unsigned char)*c] = 1;
    if (PyType_Ready(&BlockType) < 0) return NULL;
    PyObject *module = PyModule_Create(&MODULE);
    if (module == NULL) return NULL;
    if (PyModule_AddFunctions(module, judged_pooling_methods) < 0 ||
        add_names(module, "BINARY_KINDS", BINARY_KINDS, sizeof(BINARY_KINDS) / sizeof(BINARY_KINDS[0])) < 0 ||
        add_names(module, "SET_KINDS", SET_KINDS, sizeof(SET_KINDS) / sizeof(SET_KINDS[0])) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
