/* The pooling wing's compiled kernels (judged.analyses.pooling.replay_kernels), a compilation
 * unit of judged.core._native: setup.py builds it with src/judged/core/_native.c into the one
 * extension, whose module init adds these functions (judged_pooling_methods). Each repeats its
 * numpy reference operation for operation, so both give the same bits; each works on buffers.
 *
 *   turn_picks      a pooling replay's picks per query: move-to-front or the bandit MM
 *   hedge_picks     a pooling replay's picks per query under Hedge
 *   ts_replay       a pooling replay's order under Thompson sampling (numpy draws by a callback)
 *   bounds_picks    a pooling replay's order under the `bounds` strategy (exact nDCG bounds)
 *   pair_gaps       per row, |a - b| summed over every pair of columns (pooling's impact)
 *   replay_dcg      a pooling replay's DCG@k / nDCG@k per query at each checkpoint, the
 *                   queries that gained a label scored again
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <math.h>

/* turn_picks(query_offsets, list_offsets, lists, label, truth, rel, rule, discount, picks, counts):
 * per query, its unlabelled pairs in the order move-to-front (rule 0) or the bandit MM
 * (rule 1, its evidence discounted by `discount` per outcome) draws them when each label
 * (`truth`) arrives as soon as its pair is drawn, as judged.analyses.pooling.replay_kernels.turn_picks
 * computes them, operation for operation. `label` (the labels known, NaN: none) is written
 * to as pairs are drawn; query q's picks go from picks[query_offsets[q]], counts[q] of them. */
static inline void turn_outcome(int relevant, int rule, double discount, double *a, double *b, int64_t *prio)
{
    if (rule == 0) {
        if (!relevant) *prio -= 1;
        return;
    }
    const double x = discount * *a, y = discount * *b;
    *a = x + (relevant ? 1.0 : 0.0);
    *b = y + (relevant ? 0.0 : 1.0);
}

/* run r's next unlabelled pair (-1: none left); the labelled ones passed are its outcomes */
static int64_t turn_head(const int64_t *lst, int64_t len, int64_t *ptr, const double *label, double rel,
                         int rule, double discount, double *a, double *b, int64_t *prio)
{
    int64_t p = *ptr;
    for (; p < len; p++) {
        const double g = label[lst[p]];
        if (isnan(g)) {
            *ptr = p;
            return lst[p];
        }
        turn_outcome(g >= rel, rule, discount, a, b, prio);
    }
    *ptr = p;
    return -1;
}

static PyObject *turn_picks(PyObject *self, PyObject *args)
{
    Py_buffer qb, lob, lb, labb, tb, pb, cb;
    double rel, discount;
    int rule;
    if (!PyArg_ParseTuple(args, "y*y*y*w*y*didw*w*", &qb, &lob, &lb, &labb, &tb, &rel, &rule, &discount, &pb, &cb))
        return NULL;
    const int64_t *qoff = qb.buf, *loff = lob.buf, *lists = lb.buf;
    const double *truth = tb.buf;
    double *label = labb.buf;
    int64_t *picks = pb.buf, *counts = cb.buf;
    const Py_ssize_t nq = cb.len / 8;
    const Py_ssize_t R = nq ? (lob.len / 8 - 1) / nq : 0;
    int64_t *ptr = malloc((R + 1) * sizeof(int64_t)), *heads = malloc((R + 1) * sizeof(int64_t));
    int64_t *prio = malloc((R + 1) * sizeof(int64_t));
    double *a = malloc((R + 1) * sizeof(double)), *b = malloc((R + 1) * sizeof(double));
    int failed = !ptr || !heads || !prio || !a || !b;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < nq && !failed; q++) {
        int64_t n = 0, *out = picks + qoff[q];
        for (Py_ssize_t r = 0; r < R; r++) {
            ptr[r] = 0; prio[r] = 0; a[r] = 0.0; b[r] = 0.0;
        }
        for (Py_ssize_t r = 0; r < R; r++) {
            const int64_t *lst = lists + loff[q * R + r];
            heads[r] = turn_head(lst, loff[q * R + r + 1] - loff[q * R + r], ptr + r, label, rel, rule, discount,
                                 a + r, b + r, prio + r);
        }
        for (;;) {
            Py_ssize_t arm = -1;
            double best = 0.0;
            int64_t top = 0;
            for (Py_ssize_t r = 0; r < R; r++) {
                if (heads[r] < 0) continue;
                if (!isnan(label[heads[r]])) {  /* labelled meanwhile (drawn by another run): walk on */
                    const int64_t *lst = lists + loff[q * R + r];
                    heads[r] = turn_head(lst, loff[q * R + r + 1] - loff[q * R + r], ptr + r, label, rel, rule,
                                         discount, a + r, b + r, prio + r);
                    if (heads[r] < 0) continue;
                }
                if (rule == 0) {
                    if (arm < 0 || prio[r] > top) { arm = r; top = prio[r]; }
                } else {
                    const double alpha = 1.0 + a[r], beta = 1.0 + b[r];
                    const double value = alpha / (alpha + beta);
                    if (arm < 0 || value > best) { arm = r; best = value; }
                }
            }
            if (arm < 0) break;
            const int64_t pid = heads[arm];
            const int64_t *lst = lists + loff[q * R + arm];
            ptr[arm] += 1;
            heads[arm] = turn_head(lst, loff[q * R + arm + 1] - loff[q * R + arm], ptr + arm, label, rel, rule,
                                   discount, a + arm, b + arm, prio + arm);
            label[pid] = truth[pid];
            turn_outcome(truth[pid] >= rel, rule, discount, a + arm, b + arm, prio + arm);
            out[n++] = pid;
        }
        counts[q] = n;
    }
    Py_END_ALLOW_THREADS
    free(ptr); free(heads); free(prio); free(a); free(b);
    PyBuffer_Release(&qb); PyBuffer_Release(&lob); PyBuffer_Release(&lb); PyBuffer_Release(&labb);
    PyBuffer_Release(&tb); PyBuffer_Release(&pb); PyBuffer_Release(&cb);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* ---- pair_gaps --------------------------------------------------------------------- */

/* pair_gaps(values, n_columns, out): per row i of the row-major rows x n_columns values,
 * out[i] = the sum over the column pairs x < y, in order (0,1), (0,2), ..., (1,2), ..., of
 * |values[i][x] - values[i][y]|, added one pair at a time from 0: each row's additions are
 * numpy's in judged.analyses.pooling.replay_kernels.pair_gaps (one column pair at a time over every
 * row), so the same bits. Rows are taken 256 at a time, copied column by column (zeros
 * past the last row), and summed 16 rows at a time, their sums held in registers over
 * every pair. */
static PyObject *pair_gaps(PyObject *self, PyObject *args)
{
    Py_buffer vb, ob;
    Py_ssize_t m;
    if (!PyArg_ParseTuple(args, "y*nw*", &vb, &m, &ob)) return NULL;
    const double *v = vb.buf;
    double *out = ob.buf;
    Py_ssize_t n = ob.len / 8;
    double *block = NULL;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    enum { B = 256, W = 16 };
    block = calloc((m ? m : 1) * B, sizeof(double));
    if (!block) failed = 1;
    for (Py_ssize_t lo = 0; lo < n && !failed; lo += B) {
        const Py_ssize_t b = n - lo < B ? n - lo : B;
        for (Py_ssize_t i = 0; i < b; i++)
            for (Py_ssize_t x = 0; x < m; x++) block[x * B + i] = v[(lo + i) * m + x];
        for (Py_ssize_t i = b; i < B && b < B; i++)
            for (Py_ssize_t x = 0; x < m; x++) block[x * B + i] = 0.0;
        for (Py_ssize_t i0 = 0; i0 < b; i0 += W) {
            double a[W];
            for (int k = 0; k < W; k++) a[k] = 0.0;
            for (Py_ssize_t x = 0; x < m; x++)
                for (Py_ssize_t y = x + 1; y < m; y++) {
                    const double *p = block + x * B + i0, *q = block + y * B + i0;
                    for (int k = 0; k < W; k++) a[k] += fabs(p[k] - q[k]);
                }
            for (Py_ssize_t k = 0; k < W && i0 + k < b; k++) out[lo + i0 + k] = a[k];
        }
    }
    free(block);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vb); PyBuffer_Release(&ob);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* ---- bounds_picks: the `bounds` pooling strategy's replay (judged.analyses.pooling.replay_kernels.bounds_picks) ----
 * Every sum below repeats numpy's order in the reference: np_sum a 1-D (or row) np.sum,
 * pairwise as numpy's add.reduce; col_sum a column of a 2-D .sum(axis=0), rows in turn
 * (pairwise when the array has a single column: numpy then reduces it as a 1-D array). */
static double np_sum(const double *a, Py_ssize_t n, Py_ssize_t stride)
{
    if (n < 8) {
        double res = 0.;
        for (Py_ssize_t i = 0; i < n; i++) res += a[i * stride];
        return res;
    }
    if (n <= 128) {
        double r[8], res;
        Py_ssize_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j * stride];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[(i + j) * stride];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i * stride];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return np_sum(a, n2, stride) + np_sum(a + n2 * stride, n - n2, stride);
}

typedef struct { double neg; int64_t pid, q, v; } BEntry;

static int bentry_less(const BEntry *a, const BEntry *b)
{
    if (a->neg != b->neg) return a->neg < b->neg;
    if (a->pid != b->pid) return a->pid < b->pid;
    if (a->q != b->q) return a->q < b->q;
    return a->v < b->v;
}

typedef struct {
    Py_ssize_t Q, R, k, L, NG, P;  /* L grade levels 0..top; NG grades weighed by the priorities */
    double top, rel;
    const int64_t *qoff, *toff, *tids, *doff, *dids;
    const double *tw, *truth, *disc;
    const unsigned char *member;
    double *label, *dcg, *nlab, *nrel, *lo, *hi, *grade_counts, *cd;
    int64_t *pq, *gcount, *ngains, *version;
    char *dirty, *bdirty, *has_stale, *stale, *key_set, *terms_ok, *U;
    int64_t *dlist, *blist;  /* the queries flagged in dirty / bdirty, each once */
    Py_ssize_t ndl, nbl;
    double *key, *terms_top, *terms_deep;
    int64_t *key_len;
    int64_t *ms_off, *ms_rows, *ms;  /* multisets of n grades: rows ms_off[n].., ms_rows[n] of them, L counts each */
    BEntry *heap;
    Py_ssize_t nheap, capheap;
    /* scratch */
    double *d, *dd, *acc, *tmp, *move_top, *iplus, *own, *wcum, *gbuf, *base, *share;
    char *open_;
    int64_t *ri, *si, *rorder, *rpos;  /* the runs by share, largest first, and each run's place there (b_update) */
    uint64_t *runs_of;  /* per pair, the runs having it as bits (up to 64 runs; else NULL) */
    /* with runs_of: each query's deep pairs grouped by their runs (pairs of a group share their chance of
     * relevance): groups goff[q]..goff[q+1], group g's deep places gplace[gstart[g]..gstart[g+1]] ascending,
     * gnext[g] the first of them maybe unlabelled (labels only come: it only moves on) */
    int64_t *goff, *gstart, *gplace, *gnext;
    Py_ssize_t npairs;
    int bad;  /* a run with more than k holes in its top k: the reference decides */
} BState;

static int heap_push(BState *st, BEntry e)
{
    if (st->nheap == st->capheap) {
        Py_ssize_t cap = st->capheap ? 2 * st->capheap : 1024;
        BEntry *h = realloc(st->heap, cap * sizeof(BEntry));
        if (!h) return -1;
        st->heap = h; st->capheap = cap;
    }
    Py_ssize_t i = st->nheap++;
    while (i > 0) {  /* heapq's siftdown */
        Py_ssize_t p = (i - 1) / 2;
        if (!bentry_less(&e, &st->heap[p])) break;
        st->heap[i] = st->heap[p];
        i = p;
    }
    st->heap[i] = e;
    return 0;
}

static BEntry heap_pop(BState *st)
{
    BEntry top = st->heap[0], last = st->heap[--st->nheap];
    Py_ssize_t n = st->nheap, i = 0;
    if (n) {
        for (;;) {
            Py_ssize_t c = 2 * i + 1;
            if (c >= n) break;
            if (c + 1 < n && bentry_less(&st->heap[c + 1], &st->heap[c])) c++;
            if (!bentry_less(&st->heap[c], &last)) break;
            st->heap[i] = st->heap[c];
            i = c;
        }
        st->heap[i] = last;
    }
    return top;
}

/* query q's labelled gains sorted descending, with one more of value `extra` (< 0: none), the first k: gbuf */
static Py_ssize_t b_sorted_gains(BState *st, Py_ssize_t q, double extra)
{
    Py_ssize_t n = 0;
    int placed = extra < 0;
    for (Py_ssize_t v = st->L - 1; v >= 1 && n < st->k; v--) {
        if (!placed && extra >= (double)v) { st->gbuf[n++] = extra; placed = 1; if (n >= st->k) break; }
        for (int64_t c = st->gcount[q * st->L + v]; c > 0 && n < st->k; c--) st->gbuf[n++] = (double)v;
    }
    if (!placed && n < st->k) st->gbuf[n++] = extra;
    return n;
}

static double b_ideal(BState *st, Py_ssize_t q, double extra)
{
    Py_ssize_t n = b_sorted_gains(st, q, extra);
    for (Py_ssize_t i = 0; i < n; i++) st->tmp[i] = st->gbuf[i] * st->disc[i];
    return np_sum(st->tmp, n, 1);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the exact bounds of every run's nDCG@k on query q (the reference's query_bounds) */
static void b_query_bounds(BState *st, Py_ssize_t q)
{
    const Py_ssize_t R = st->R, k = st->k, L = st->L, a = st->toff[q], nt = st->toff[q + 1] - a;
    const int64_t *ids = st->tids + a;
    const double *W = st->tw + R * a, top = st->top, *disc = st->disc, *cd = st->cd;
    double *lo = st->lo + q * R, *hi = st->hi + q * R, *dcg = st->dcg + q * R;
    Py_ssize_t n_open = 0;
    for (Py_ssize_t j = 0; j < nt; j++) n_open += (st->open_[j] = isnan(st->label[ids[j]]) ? 1 : 0);
    const double ideal = b_ideal(st, q, -1.0);
    if (!n_open) {
        for (Py_ssize_t r = 0; r < R; r++) lo[r] = hi[r] = ideal > 0 ? dcg[r] / ideal : 0.0;
        return;
    }
    /* the minimum: ideal with j more documents of the top grade leading the judged */
    Py_ssize_t ng = b_sorted_gains(st, q, -1.0);
    for (Py_ssize_t j = 0; j <= n_open; j++) {
        for (Py_ssize_t i = 0; i < k; i++)
            st->tmp[i] = (j + i < k ? disc[j + i] : 0.0) * (i < ng ? st->gbuf[i] : 0.0);
        st->iplus[j] = top * cd[j < k ? j : k] + np_sum(st->tmp, k, 1);
    }
    const Py_ssize_t cols = n_open < k ? n_open : k;
    /* the maximum's runs: those whose own holes changed, or every one when the k largest gains did */
    int all = !st->has_stale[q] || !st->key_set[q] || st->key_len[q] != ng;
    for (Py_ssize_t i = 0; !all && i < ng; i++) all = st->key[q * k + i] != st->gbuf[i];
    st->has_stale[q] = 0;
    st->key_set[q] = 1;
    st->key_len[q] = ng;
    for (Py_ssize_t i = 0; i < ng; i++) st->key[q * k + i] = st->gbuf[i];
    int64_t jcount[64];
    for (Py_ssize_t l = 0; l < L; l++) jcount[l] = st->gcount[q * L + (L - 1 - l)];  /* level l: grade top - l */
    jcount[L - 1] = 0;
    for (Py_ssize_t r = 0; r < R; r++) {
        Py_ssize_t n_own = 0;
        for (Py_ssize_t j = 0; j < nt; j++)
            if (st->open_[j] && W[r * nt + j] > 0) st->own[n_own++] = W[r * nt + j];
        if (n_own > k) { st->bad = 1; return; }
        qsort(st->own, n_own, sizeof(double), cmp_double);  /* ascending */
        double cum = 0.0, best = INFINITY;
        for (Py_ssize_t s = 0; s <= cols; s++) {
            if (s > 0) cum = cum + (s - 1 < n_own ? st->own[s - 1] : 0.0);
            if (s > n_own) continue;
            const double num = dcg[r] + top * cum, den = st->iplus[n_open - n_own + s];
            const double ratio = den > 0 ? num / den : 0.0;
            if (ratio < best) best = ratio;
        }
        lo[r] = best;
        if (!all && !st->stale[q * R + r]) continue;
        st->stale[q * R + r] = 0;
        if (!n_own) {
            hi[r] = ideal > 0 ? dcg[r] / ideal : 0.0;
            continue;
        }
        /* every multiset of grades of the n_own holes, the largest grades on the largest discounts */
        st->wcum[0] = 0.0;
        for (Py_ssize_t t = 0; t < n_own; t++) st->wcum[t + 1] = st->wcum[t] + st->own[n_own - 1 - t];
        const int64_t *rows = st->ms + st->ms_off[n_own] * L;
        double most = -INFINITY;
        double terms[64];
        for (int64_t m = 0; m < st->ms_rows[n_own]; m++) {
            const int64_t *C = rows + m * L;
            int64_t end = 0, cend = 0;
            for (Py_ssize_t l = 0; l < L; l++) {
                const int64_t start = end;
                end += C[l];
                terms[l] = (st->wcum[end] - st->wcum[start]) * (top - (double)l);
            }
            const double add = np_sum(terms, L, 1);
            for (Py_ssize_t l = 0; l < L; l++) {
                const int64_t c = C[l] + jcount[l], cstart = cend;
                cend += c;
                terms[l] = (top - (double)l) * (cd[cend < k ? cend : k] - cd[cstart < k ? cstart : k]);
            }
            const double idl = np_sum(terms, L, 1);
            const double value = idl > 0 ? (dcg[r] + add) / idl : 0.0;
            if (value > most) most = value;
        }
        hi[r] = most;
    }
    if (!all) for (Py_ssize_t r = 0; r < R; r++) st->stale[q * R + r] = 0;
}

/* sum over axis 0 of an m x n C-ordered array, column j, as numpy has it */
static double col_sum(const double *A, Py_ssize_t m, Py_ssize_t n, Py_ssize_t j)
{
    if (n == 1) return np_sum(A, m, 1);
    if (m == 0) return 0.0;
    double acc = A[j];
    for (Py_ssize_t i = 1; i < m; i++) acc = acc + A[i * n + j];
    return acc;
}

/* query q's best free pair and its priority pushed on the heap (the reference's update) */
/* pair j's (of a query's nq, from pair s) largest share over the runs having it (member M, runs x pairs),
 * runs taken in ord (by share, largest first): the first run having it; 0 if none. With the pairs' run
 * bits (runs_of), the run of smallest place (rpos) among its bits. */
static inline double b_prel(const BState *st, const unsigned char *M, Py_ssize_t nq, Py_ssize_t s, Py_ssize_t j)
{
    const int64_t *ord = st->rorder;
    const Py_ssize_t R = st->R;
    if (st->runs_of) {
        uint64_t bits = st->runs_of[s + j];
        int64_t first = R;
        while (bits) {
            const int64_t place = st->rpos[__builtin_ctzll(bits)];
            if (place < first) first = place;
            bits &= bits - 1;
        }
        return first < R ? st->share[ord[first]] : 0.0;
    }
    for (Py_ssize_t t = 0; t < R; t++)
        if (M[ord[t] * nq + j]) return st->share[ord[t]];
    return 0.0;
}

static int b_update(BState *st, Py_ssize_t q, const double *grades, const double *weights)
{
    const Py_ssize_t R = st->R, a = st->toff[q], nt = st->toff[q + 1] - a, NG = st->NG, np_ = st->npairs;
    const Py_ssize_t s = st->qoff[q], nq = st->qoff[q + 1] - s;
    const int64_t *ids = st->tids + a;
    const double *W = st->tw + R * a, *D = st->dcg + q * R;
    st->version[q] += 1;
    const double I0 = b_ideal(st, q, -1.0);
    for (Py_ssize_t r = 0; r < R; r++) st->base[r] = I0 > 0 ? D[r] / I0 : 0.0;
    for (Py_ssize_t j = 0; j < nt; j++) st->move_top[j] = 0.0;
    double move_deep = 0.0;
    for (Py_ssize_t gi = 0; gi < NG; gi++) {
        const double g = grades[gi], pg = weights[gi];
        double *tt = st->terms_top + NG * a + gi * nt;
        if (!st->terms_ok[q * NG + gi]) {
            const double I1 = b_ideal(st, q, g);
            for (Py_ssize_t r = 0; r < R; r++) {
                for (Py_ssize_t j = 0; j < nt; j++) st->d[r * nt + j] = (D[r] + g * W[r * nt + j]) / I1 - st->base[r];
                st->dd[r] = D[r] / I1 - st->base[r];
            }
            for (Py_ssize_t p = 0; p < np_; p++)
                for (Py_ssize_t j = 0; j < nt; j++)
                    st->acc[p * nt + j] = fabs(st->d[st->ri[p] * nt + j] - st->d[st->si[p] * nt + j]);
            for (Py_ssize_t r = 0; r < R * nt; r++) st->tmp[r] = fabs(st->d[r]);
            for (Py_ssize_t j = 0; j < nt; j++)
                tt[j] = col_sum(st->acc, np_, nt, j) + col_sum(st->tmp, R, nt, j) / (double)R;
            for (Py_ssize_t p = 0; p < np_; p++) st->acc[p] = fabs(st->dd[st->ri[p]] - st->dd[st->si[p]]);
            for (Py_ssize_t r = 0; r < R; r++) st->tmp[r] = fabs(st->dd[r]);
            st->terms_deep[q * NG + gi] = np_sum(st->acc, np_, 1) + np_sum(st->tmp, R, 1) / (double)R;
            st->terms_ok[q * NG + gi] = 1;
        }
        for (Py_ssize_t j = 0; j < nt; j++) st->move_top[j] += pg * tt[j];
        move_deep += pg * st->terms_deep[q * NG + gi];
    }
    for (Py_ssize_t r = 0; r < R; r++) st->share[r] = (1.0 + st->nrel[q * R + r]) / (2.0 + st->nlab[q * R + r]);
    /* a free pair's chance of being relevant: the largest share among the runs that have it (0 if none),
     * found as the first run having it in the runs sorted by share, largest first (a max: the same value
     * whatever the order among equal shares) */
    const unsigned char *M = st->member + R * s;  /* runs x pairs */
    int64_t *ord = st->rorder;
    for (Py_ssize_t r = 0; r < R; r++) {
        Py_ssize_t i = r;
        while (i > 0 && st->share[ord[i - 1]] < st->share[r]) { ord[i] = ord[i - 1]; i--; }
        ord[i] = r;
    }
    for (Py_ssize_t t = 0; t < R; t++) st->rpos[ord[t]] = t;
#define B_PREL(j) b_prel(st, M, nq, s, (j))
    double best = -1.0;
    int64_t arg = -1;
    if (nt) {
        double top_v = 0.0;
        Py_ssize_t jb = -1;
        for (Py_ssize_t j = 0; j < nt; j++) {
            const double v = isnan(st->label[ids[j]]) ? B_PREL(ids[j] - s) * st->move_top[j] : -1.0;
            if (jb < 0 || v > top_v) { jb = j; top_v = v; }
        }
        if (top_v >= 0) { best = top_v; arg = ids[jb]; }
    }
    const int64_t *deep = st->dids + st->doff[q];
    const Py_ssize_t ndeep = st->doff[q + 1] - st->doff[q];
    double top_d = 0.0;
    Py_ssize_t jd = -1;
    if (st->goff) {  /* the first free pair of each group of equal runs: the scan's first of the largest */
        for (int64_t g = st->goff[q]; g < st->goff[q + 1]; g++) {
            int64_t at = st->gnext[g];
            while (at < st->gstart[g + 1] && !isnan(st->label[deep[st->gplace[at]]])) at++;
            st->gnext[g] = at;
            if (at == st->gstart[g + 1]) continue;
            const Py_ssize_t j = st->gplace[at];
            const double v = B_PREL(deep[j] - s);
            if (jd < 0 || v > top_d || (v == top_d && j < jd)) { jd = j; top_d = v; }
        }
    } else {
        for (Py_ssize_t j = 0; j < ndeep; j++) {
            if (!isnan(st->label[deep[j]])) continue;
            const double v = B_PREL(deep[j] - s);
            if (jd < 0 || v > top_d) { jd = j; top_d = v; }
        }
    }
#undef B_PREL
    if (jd >= 0 && top_d * move_deep > best) { best = top_d * move_deep; arg = deep[jd]; }
    if (arg >= 0) {
        BEntry e = {-best, arg, q, st->version[q]};
        return heap_push(st, e);
    }
    return 0;
}

static void b_observe(BState *st, int64_t pid, double grade)
{
    const Py_ssize_t R = st->R, q = st->pq[pid], s = st->qoff[q], nq = st->qoff[q + 1] - s;
    const double g = grade > 0.0 ? grade : 0.0;
    st->label[pid] = grade;
    st->grade_counts[(int64_t)g] += 1;
    const unsigned char *M = st->member + R * s;
    for (Py_ssize_t r = 0; r < R; r++) {
        if (!M[r * nq + pid - s]) continue;
        st->nlab[q * R + r] += 1;
        if (grade >= st->rel) st->nrel[q * R + r] += 1;
    }
    const Py_ssize_t a = st->toff[q], nt = st->toff[q + 1] - a;
    const int64_t *ids = st->tids + a;
    Py_ssize_t lo = 0, hi = nt;
    while (lo < hi) {
        const Py_ssize_t mid = (lo + hi) / 2;
        if (ids[mid] < pid) lo = mid + 1; else hi = mid;
    }
    const int in_top = lo < nt && ids[lo] == pid;
    if (in_top) {
        const double *W = st->tw + R * a;
        st->has_stale[q] = 1;
        for (Py_ssize_t r = 0; r < R; r++) {
            if (W[r * nt + lo] > 0) st->stale[q * R + r] = 1;
            if (g > 0) st->dcg[q * R + r] += g * W[r * nt + lo];
        }
    }
    if (g > 0) {
        st->gcount[q * st->L + (int64_t)g] += 1;
        for (Py_ssize_t gi = 0; gi < st->NG; gi++) st->terms_ok[q * st->NG + gi] = 0;
    }
    if (!st->dirty[q]) { st->dirty[q] = 1; st->dlist[st->ndl++] = q; }
    if ((in_top || g > 0) && !st->bdirty[q]) { st->bdirty[q] = 1; st->blist[st->nbl++] = q; }
}

/* the compositions of n into L counts, appended to ms (level 0 first) */
static int64_t b_compositions(int64_t *out, Py_ssize_t L, int64_t n, int64_t *row, Py_ssize_t l)
{
    if (l == L - 1) {
        row[l] = n;
        if (out) memcpy(out, row, L * sizeof(int64_t));
        return 1;
    }
    int64_t total = 0;
    for (int64_t c = n; c >= 0; c--) {
        row[l] = c;
        total += b_compositions(out ? out + total * L : NULL, L, n - c, row, l + 1);
    }
    return total;
}

/* bounds_picks(query_offsets, top_offsets, top_ids, top_w, deep_offsets, deep_ids, member, truth, disc,
 *              n_runs, maxgrade, rel, limit, out) -> the number of pairs written to out (-1: a run with
 * more than k holes in its top k, which the reference takes). As the reference, step for step: every
 * float operation in numpy's order (np_sum, col_sum), the heap ordered as heapq orders its tuples. */
typedef struct { uint64_t bits; int64_t place; } BDeep;

static int bdeep_cmp(const void *a, const void *b)
{
    const BDeep *x = a, *y = b;
    if (x->bits != y->bits) return x->bits < y->bits ? -1 : 1;
    return (x->place > y->place) - (x->place < y->place);
}

/* the groups of each query's deep pairs with the same runs (BState.goff ...); -1 when out of memory */
static int b_deep_groups(BState *st)
{
    const Py_ssize_t Q = st->Q, D = Q > 0 ? st->doff[Q] : 0;
    BDeep *tmp = malloc((D + 1) * sizeof(BDeep));
    st->goff = malloc((Q + 1) * sizeof(int64_t)); st->gstart = malloc((D + 1) * sizeof(int64_t));
    st->gplace = malloc((D + 1) * sizeof(int64_t)); st->gnext = malloc((D + 1) * sizeof(int64_t));
    if (!tmp || !st->goff || !st->gstart || !st->gplace || !st->gnext) { free(tmp); return -1; }
    int64_t ng = 0;
    for (Py_ssize_t q = 0; q < Q; q++) {
        const int64_t d0 = st->doff[q], nd = st->doff[q + 1] - d0;
        st->goff[q] = ng;
        for (int64_t j = 0; j < nd; j++) { tmp[j].bits = st->runs_of[st->dids[d0 + j]]; tmp[j].place = j; }
        qsort(tmp, nd, sizeof(BDeep), bdeep_cmp);
        for (int64_t j = 0; j < nd; j++) {
            if (j == 0 || tmp[j].bits != tmp[j - 1].bits) {
                st->gstart[ng] = d0 + j;
                st->gnext[ng] = d0 + j;
                ng++;
            }
            st->gplace[d0 + j] = tmp[j].place;
        }
    }
    st->goff[Q] = ng;
    st->gstart[ng] = D;
    free(tmp);
    return 0;
}

static PyObject *bounds_picks(PyObject *self, PyObject *args)
{
    Py_buffer qb, tob, tib, twb, dob, dib, mb, trb, db, ob;
    Py_ssize_t R, maxgrade, rel, limit;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*nnnnw*", &qb, &tob, &tib, &twb, &dob, &dib, &mb, &trb, &db,
                          &R, &maxgrade, &rel, &limit, &ob))
        return NULL;
    BState st;
    memset(&st, 0, sizeof st);
    st.Q = qb.len / 8 - 1; st.R = R; st.k = db.len / 8; st.L = maxgrade + 1; st.P = trb.len / 8;
    st.top = (double)maxgrade; st.rel = (double)rel;
    st.NG = rel < st.L ? st.L - rel : 1;
    st.qoff = qb.buf; st.toff = tob.buf; st.tids = tib.buf; st.tw = twb.buf; st.doff = dob.buf; st.dids = dib.buf;
    st.member = mb.buf; st.truth = trb.buf; st.disc = db.buf;
    const Py_ssize_t Q = st.Q, k = st.k, L = st.L, NG = st.NG, T = st.Q >= 0 ? st.toff[Q] : 0;
    Py_ssize_t max_nt = 1;
    for (Py_ssize_t q = 0; q < Q; q++) {
        if (st.toff[q + 1] - st.toff[q] > max_nt) max_nt = st.toff[q + 1] - st.toff[q];
    }
    const Py_ssize_t maxp = R * (R - 1) / 2 + 1, big = (maxp > R ? maxp : R) * max_nt + R + k + max_nt + 8;
    int64_t *order = ob.buf, count = 0;
    int failed = 0;
    st.label = malloc((st.P + 1) * sizeof(double)); st.pq = malloc((st.P + 1) * sizeof(int64_t));
    st.dcg = calloc(Q * R + 1, sizeof(double)); st.nlab = calloc(Q * R + 1, sizeof(double));
    st.nrel = calloc(Q * R + 1, sizeof(double)); st.lo = calloc(Q * R + 1, sizeof(double));
    st.hi = calloc(Q * R + 1, sizeof(double)); st.grade_counts = calloc(L + 1, sizeof(double));
    st.cd = malloc((k + 1) * sizeof(double));
    st.gcount = calloc(Q * L + 1, sizeof(int64_t)); st.version = calloc(Q + 1, sizeof(int64_t));
    st.dirty = calloc(Q + 1, 1); st.bdirty = calloc(Q + 1, 1);
    st.dlist = malloc((Q + 1) * sizeof(int64_t)); st.blist = malloc((Q + 1) * sizeof(int64_t)); st.has_stale = calloc(Q + 1, 1);
    st.stale = calloc(Q * R + 1, 1); st.key_set = calloc(Q + 1, 1); st.terms_ok = calloc(Q * NG + 1, 1);
    st.U = calloc(R * R + 1, 1);
    st.key = calloc(Q * k + 1, sizeof(double)); st.key_len = calloc(Q + 1, sizeof(int64_t));
    st.terms_top = malloc((NG * T + 1) * sizeof(double)); st.terms_deep = malloc((Q * NG + 1) * sizeof(double));
    st.d = malloc((R * max_nt + 1) * sizeof(double)); st.dd = malloc((R + 1) * sizeof(double));
    st.acc = malloc(big * sizeof(double)); st.tmp = malloc(big * sizeof(double));
    st.move_top = malloc((max_nt + 1) * sizeof(double));
    st.iplus = malloc((max_nt + 2) * sizeof(double)); st.own = malloc((max_nt + 1) * sizeof(double));
    st.wcum = malloc((max_nt + 2) * sizeof(double)); st.gbuf = malloc((k + 2) * sizeof(double));
    st.base = malloc((R + 1) * sizeof(double)); st.share = malloc((R + 1) * sizeof(double));
    st.open_ = malloc(max_nt + 1);
    st.ri = malloc(maxp * sizeof(int64_t)); st.si = malloc(maxp * sizeof(int64_t));
    st.rorder = malloc((R + 1) * sizeof(int64_t)); st.rpos = malloc((R + 1) * sizeof(int64_t));
    if (R <= 64) st.runs_of = calloc(st.P + 1, sizeof(uint64_t));
    st.ms_off = calloc(k + 2, sizeof(int64_t)); st.ms_rows = calloc(k + 2, sizeof(int64_t));
    double *LO = malloc((R + 1) * sizeof(double)), *HI = malloc((R + 1) * sizeof(double));
    char *Unew = calloc(R * R + 1, 1);
    double *grades = malloc((NG + 1) * sizeof(double)), *weights = malloc((NG + 1) * sizeof(double));
    double *counts = malloc((NG + 1) * sizeof(double));
    failed = !st.label || !st.pq || !st.dcg || !st.nlab || !st.nrel || !st.lo || !st.hi || !st.grade_counts ||
             !st.cd || !st.gcount || !st.version || !st.dirty || !st.bdirty || !st.dlist || !st.blist || !st.has_stale || !st.stale ||
             !st.key_set || !st.terms_ok || !st.U || !st.key || !st.key_len || !st.terms_top || !st.terms_deep ||
             !st.d || !st.dd || !st.acc || !st.tmp || !st.move_top || !st.iplus || !st.own ||
             !st.wcum || !st.gbuf || !st.base || !st.share || !st.open_ || !st.ri || !st.si || !st.ms_off ||
             !st.ms_rows || !st.rorder || !st.rpos || (R <= 64 && !st.runs_of) || !LO || !HI || !Unew || !grades || !weights || !counts || L > 64;
    if (!failed && R > 1) {  /* the multisets of n = 1..k grades */
        int64_t row[64], total = 0;
        for (Py_ssize_t n = 1; n <= k; n++) {
            st.ms_off[n] = total;
            st.ms_rows[n] = b_compositions(NULL, L, n, row, 0);
            total += st.ms_rows[n];
        }
        st.ms = malloc((total * L + 1) * sizeof(int64_t));
        failed = !st.ms;
        for (Py_ssize_t n = 1; !failed && n <= k; n++) b_compositions(st.ms + st.ms_off[n] * L, L, n, row, 0);
    }
    if (!failed) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t p = 0; p < st.P; p++) st.label[p] = NAN;
        for (Py_ssize_t q = 0; q < Q; q++)
            for (int64_t p = st.qoff[q]; p < st.qoff[q + 1]; p++) st.pq[p] = q;
        if (st.runs_of) {  /* each pair's runs as bits, from the runs x pairs membership of its query */
            for (Py_ssize_t q = 0; q < Q; q++) {
                const int64_t s0 = st.qoff[q], nq = st.qoff[q + 1] - s0;
                const unsigned char *M = st.member + R * s0;
                for (Py_ssize_t r = 0; r < R; r++)
                    for (int64_t j = 0; j < nq; j++)
                        if (M[r * nq + j]) st.runs_of[s0 + j] |= (uint64_t)1 << r;
            }
            if (b_deep_groups(&st) < 0) failed = 1;
        }
        st.cd[0] = 0.0;
        for (Py_ssize_t i = 0; i < k; i++) st.cd[i + 1] = st.cd[i] + st.disc[i];
        for (Py_ssize_t q = 0; q < Q; q++) {
            st.dirty[q] = st.bdirty[q] = 1;
            st.dlist[q] = st.blist[q] = q;
        }
        st.ndl = st.nbl = Q;
        for (Py_ssize_t gi = 0; gi < NG; gi++) grades[gi] = (double)(rel < L ? rel + gi : rel);
        int have_U = 0;
        while (!failed && (limit < 0 || count < limit)) {
            const int moved = st.nbl > 0;  /* some query's bounds recomputed: the undecided pairs may change */
            for (Py_ssize_t i = 0; i < st.nbl; i++) {
                if (R > 1 && !st.bad) b_query_bounds(&st, st.blist[i]);
                st.bdirty[st.blist[i]] = 0;
            }
            st.nbl = 0;
            if (st.bad) break;
            int changed = !have_U;
            if (R > 1 && moved) {
                for (Py_ssize_t r = 0; r < R; r++) {
                    double a = Q ? st.lo[r] : 0.0, b = Q ? st.hi[r] : 0.0;
                    for (Py_ssize_t q = 1; q < Q; q++) { a = a + st.lo[q * R + r]; b = b + st.hi[q * R + r]; }
                    LO[r] = a / (double)Q; HI[r] = b / (double)Q;
                }
                for (Py_ssize_t r = 0; r < R; r++)
                    for (Py_ssize_t t = 0; t < R; t++)
                        Unew[r * R + t] = r < t && LO[r] < HI[t] - 1e-12 && LO[t] < HI[r] - 1e-12;
                if (memcmp(Unew, st.U, R * R)) changed = 1;
            }
            if (changed) {
                have_U = 1;
                if (R > 1) memcpy(st.U, Unew, R * R);
                st.npairs = 0;
                for (Py_ssize_t r = 0; r < R; r++)
                    for (Py_ssize_t t = 0; t < R; t++)
                        if (st.U[r * R + t]) { st.ri[st.npairs] = r; st.si[st.npairs] = t; st.npairs++; }
                memset(st.dirty, 1, Q);
                for (Py_ssize_t q = 0; q < Q; q++) st.dlist[q] = q;
                st.ndl = Q;
                memset(st.terms_ok, 0, Q * NG);
                st.nheap = 0;
            }
            for (Py_ssize_t gi = 0; gi < NG; gi++) {
                const int64_t g = rel < L ? rel + gi : rel;
                counts[gi] = (g < L ? st.grade_counts[g] : 0.0) + 1.0;
            }
            const double total = np_sum(counts, NG, 1);
            for (Py_ssize_t gi = 0; gi < NG; gi++) weights[gi] = counts[gi] / total;
            for (Py_ssize_t i = 0; i < st.ndl && !failed; i++) {
                if (b_update(&st, st.dlist[i], grades, weights) < 0) failed = 1;
                st.dirty[st.dlist[i]] = 0;
            }
            st.ndl = 0;
            if (failed) break;
            int64_t pid = -1;
            while (st.nheap) {
                BEntry e = heap_pop(&st);
                if (e.v == st.version[e.q] && isnan(st.label[e.pid])) { pid = e.pid; break; }
            }
            if (pid < 0) break;
            b_observe(&st, pid, st.truth[pid]);
            order[count++] = pid;
        }
        Py_END_ALLOW_THREADS
    }
    free(st.label); free(st.pq); free(st.dcg); free(st.nlab); free(st.nrel); free(st.lo); free(st.hi);
    free(st.grade_counts); free(st.cd); free(st.gcount); free(st.version); free(st.dirty); free(st.bdirty); free(st.dlist); free(st.blist);
    free(st.has_stale); free(st.stale); free(st.key_set); free(st.terms_ok); free(st.U); free(st.key);
    free(st.key_len); free(st.terms_top); free(st.terms_deep); free(st.d); free(st.dd); free(st.acc);
    free(st.tmp); free(st.move_top); free(st.iplus); free(st.own); free(st.wcum); free(st.gbuf);
    free(st.base); free(st.share); free(st.open_); free(st.ri); free(st.si); free(st.rorder); free(st.rpos); free(st.runs_of); free(st.goff); free(st.gstart);
    free(st.gplace); free(st.gnext); free(st.ms_off); free(st.ms_rows);
    free(st.ms); free(st.heap); free(LO); free(HI); free(Unew); free(grades); free(weights); free(counts);
    PyBuffer_Release(&qb); PyBuffer_Release(&tob); PyBuffer_Release(&tib); PyBuffer_Release(&twb);
    PyBuffer_Release(&dob); PyBuffer_Release(&dib); PyBuffer_Release(&mb); PyBuffer_Release(&trb);
    PyBuffer_Release(&db); PyBuffer_Release(&ob);
    if (failed) return PyErr_NoMemory();
    return PyLong_FromLongLong(st.bad ? -1 : count);
}

/* Whether Hedge with one run draws query [s, s + n) in pair order: its one weight stays exactly 1
 * (w * f / (w * f) with every factor finite and > 0), so the mixture is the run's value itself
 * (1 * v, divided by a sum of 1), and pairs of values finite, >= 0 and non-increasing are drawn first
 * to last (the first of the largest open one each time). */
static int hedge_one_run_in_order(const double *V, const double *Fr, const double *Fn, Py_ssize_t n)
{
    for (Py_ssize_t j = 0; j < n; j++) {
        if (!(V[j] >= 0.0) || !isfinite(V[j]) || (j && V[j] > V[j - 1])) return 0;
        if (!(Fr[j] > 0.0) || !isfinite(Fr[j]) || !(Fn[j] > 0.0) || !isfinite(Fn[j])) return 0;
    }
    return 1;
}

/* hedge_picks(query_offsets, values, factor_rel, factor_non, truth, rel, n_runs, picks, counts): per query,
 * its pairs in the order Hedge draws them from no label, as judged.analyses.pooling.replay_kernels.hedge_picks
 * computes them: the mixture's sum over the runs in turn (pairwise, as numpy, for a query of one pair);
 * with one run whose values fall along the pairs, in pair order without the loop
 * (hedge_one_run_in_order: the same picks). */
static PyObject *hedge_picks(PyObject *self, PyObject *args)
{
    Py_buffer qb, vb, frb, fnb, tb, pb, cb;
    double rel;
    Py_ssize_t R;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*dnw*w*", &qb, &vb, &frb, &fnb, &tb, &rel, &R, &pb, &cb)) return NULL;
    const int64_t *qoff = qb.buf;
    const double *values = vb.buf, *fr = frb.buf, *fn = fnb.buf, *truth = tb.buf;
    int64_t *picks = pb.buf, *counts = cb.buf;
    const Py_ssize_t nq = cb.len / 8;
    Py_ssize_t most = 1;
    for (Py_ssize_t q = 0; q < nq; q++)
        if (qoff[q + 1] - qoff[q] > most) most = qoff[q + 1] - qoff[q];
    double *w = malloc((R + 1) * sizeof(double)), *tmp = malloc((R + 1) * sizeof(double));
    double *mix = malloc((most + 1) * sizeof(double));
    char *open_ = malloc(most + 1);
    int failed = !w || !tmp || !open_ || !mix;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < nq && !failed; q++) {
        const Py_ssize_t s = qoff[q], n = qoff[q + 1] - s;
        const double *V = values + R * s, *Fr = fr + R * s, *Fn = fn + R * s;
        if (R == 1 && hedge_one_run_in_order(V, Fr, Fn, n)) {
            for (Py_ssize_t t = 0; t < n; t++) picks[s + t] = s + t;
            counts[q] = n;
            continue;
        }
        for (Py_ssize_t r = 0; r < R; r++) w[r] = 1.0;
        memset(open_, 1, n);
        for (Py_ssize_t t = 0; t < n; t++) {
            const double wsum = np_sum(w, R, 1);
            Py_ssize_t jb = -1;
            double best = 0.0;
            if (n == 1) {
                for (Py_ssize_t r = 0; r < R; r++) tmp[r] = w[r] * V[r];
                mix[0] = np_sum(tmp, R, 1);
            } else {  /* each pair's sum over the runs in turn; the runs outside, the pairs inside */
                for (Py_ssize_t j = 0; j < n; j++) mix[j] = w[0] * V[j];
                for (Py_ssize_t r = 1; r < R; r++) {
                    const double wr = w[r], *Vr = V + r * n;
                    for (Py_ssize_t j = 0; j < n; j++) mix[j] = mix[j] + wr * Vr[j];
                }
            }
            for (Py_ssize_t j = 0; j < n; j++) {
                const double v = open_[j] ? mix[j] / wsum : -1.0;
                if (jb < 0 || v > best) { jb = j; best = v; }
            }
            open_[jb] = 0;
            picks[s + t] = s + jb;
            const double *F = truth[s + jb] >= rel ? Fr : Fn;
            double top = 0.0;
            for (Py_ssize_t r = 0; r < R; r++) {  /* factors in (0, 1]: no NaN */
                w[r] = w[r] * F[r * n + jb];
                if (r == 0 || w[r] > top) top = w[r];
            }
            for (Py_ssize_t r = 0; r < R; r++) w[r] = w[r] / top;
        }
        counts[q] = n;
    }
    Py_END_ALLOW_THREADS
    free(w); free(tmp); free(open_); free(mix);
    PyBuffer_Release(&qb); PyBuffer_Release(&vb); PyBuffer_Release(&frb); PyBuffer_Release(&fnb);
    PyBuffer_Release(&tb); PyBuffer_Release(&pb); PyBuffer_Release(&cb);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* replay_dcg(k, normalised, offsets, pos, pid, joffsets, jpid, pair_query, gain, denominators, order,
 * start, at, values, out): judged.analyses.pooling.replay_kernels.replay_dcg. The pairs order[:start] are
 * labelled and ``values`` are the queries' values then; at each checkpoint c the pairs
 * order[previous:at[c]] are labelled, every query one of them moves (pair_query >= 0, gain != 0)
 * is scored again and the values written to out[c]. A query's DCG sums gain / denominators[rank]
 * over its rows (offsets, pos, pid) in rank order, a row gaining only when its pair is labelled,
 * as dcg_measure; its ideal sums the labelled positive gains of its pairs (joffsets, jpid: by gain
 * descending), as ideal_dcg; nDCG is DCG / ideal, 0 when the ideal is 0. The caller checks every
 * index (pairs, queries, ranks) is in range. */
static PyObject *replay_dcg(PyObject *self, PyObject *args)
{
    Py_buffer ob, pb, ib, job, jb, qb, gb, db, orb, ab, vb, out;
    long long k;
    int normalised;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "Lpy*y*y*y*y*y*y*y*y*ny*y*w*", &k, &normalised, &ob, &pb, &ib, &job, &jb, &qb, &gb,
                          &db, &orb, &start, &ab, &vb, &out))
        return NULL;
    const int64_t *off = ob.buf, *pos = pb.buf, *pid = ib.buf, *joff = job.buf, *jpid = jb.buf, *pq = qb.buf;
    const int64_t *order = orb.buf, *at = ab.buf;
    const double *gain = gb.buf, *denom = db.buf;
    double *o = out.buf;
    const Py_ssize_t P = gb.len / 8, n = vb.len / 8, na = ab.len / 8;
    char *labelled = calloc(P + 1, 1);
    int64_t *stamp = malloc((n + 1) * sizeof(int64_t)), *changed = malloc((n + 1) * sizeof(int64_t));
    double *cur = malloc((n + 1) * sizeof(double));
    const int64_t rows = n ? off[n] : 0, jrows = n ? joff[n] : 0;
    /* each row's and judgment's gain, read in their order (gain[pid] gathered once, not per rescoring) */
    double *tg = malloc((rows + 1) * sizeof(double)), *jg = malloc((jrows + 1) * sizeof(double));
    const int failed = !labelled || !stamp || !changed || !cur || !tg || !jg;
    if (!failed) memcpy(cur, vb.buf, n * sizeof(double));
    Py_BEGIN_ALLOW_THREADS
    if (!failed) {
        for (int64_t i = 0; i < rows; i++) tg[i] = pid[i] < 0 ? 0.0 : gain[pid[i]];
        for (int64_t i = 0; i < jrows; i++) jg[i] = gain[jpid[i]];
        for (Py_ssize_t j = 0; j < start; j++) labelled[order[j]] = 1;
        for (Py_ssize_t q = 0; q < n; q++) stamp[q] = -1;
        Py_ssize_t prev = start;
        for (Py_ssize_t c = 0; c < na; c++) {
            Py_ssize_t m = 0;
            for (Py_ssize_t j = prev; j < at[c]; j++) {
                const int64_t p = order[j], q = pq[p];
                labelled[p] = 1;
                if (q >= 0 && gain[p] != 0.0 && stamp[q] != c) { stamp[q] = c; changed[m++] = q; }
            }
            if (at[c] > prev) prev = at[c];
            for (Py_ssize_t x = 0; x < m; x++) {
                const int64_t q = changed[x];
                double s = 0.0;
                for (int64_t i = off[q]; i < off[q + 1]; i++) {
                    const int64_t r = pos[i];
                    if (k >= 0 && r >= k) break;
                    if (tg[i] == 0.0 || !labelled[pid[i]]) continue;  /* +0.0, a hole (pid < 0: 0.0) */
                    s += tg[i] / denom[r];
                }
                if (normalised) {
                    double ideal = 0.0;
                    int64_t r = 0;
                    for (int64_t i = joff[q]; i < joff[q + 1] && (k < 0 || r < k); i++) {
                        if (!(jg[i] > 0) || !labelled[jpid[i]]) continue;
                        ideal += jg[i] / denom[r++];
                    }
                    s = ideal > 0 ? s / ideal : 0.0;
                }
                cur[q] = s;
            }
            memcpy(o + c * n, cur, n * sizeof(double));
        }
    }
    Py_END_ALLOW_THREADS
    free(labelled); free(stamp); free(changed); free(cur); free(tg); free(jg);
    PyBuffer_Release(&ob); PyBuffer_Release(&pb); PyBuffer_Release(&ib); PyBuffer_Release(&job);
    PyBuffer_Release(&jb); PyBuffer_Release(&qb); PyBuffer_Release(&gb); PyBuffer_Release(&db);
    PyBuffer_Release(&orb); PyBuffer_Release(&ab); PyBuffer_Release(&vb); PyBuffer_Release(&out);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* ts_replay(list_offsets, lists, label, truth, a, b, spent, rel, discount, n_runs, limit, alpha, beta, draw, out)
 * -> count: judged.analyses.pooling.replay_kernels.ts_picks, each turn's Beta draws made by the Python callable
 * draw(m), which returns m doubles drawn for the parameters alpha[:m], beta[:m] (numpy's Generator: the
 * same stream as the reference). Cells (query x run, query-major) are walked one at a time: they share
 * nothing, so this is the reference's whole-array steps cell by cell. label, a, b and spent are updated
 * in place; the picks go to out (every turn whole: the caller cuts at limit). Holds the GIL. */
static void ts_outcome(double *A, double *B, int64_t cell, int relevant, double d)
{
    const double x = d * A[cell], y = d * B[cell];
    A[cell] = x + (relevant ? 1.0 : 0.0);
    B[cell] = y + (relevant ? 0.0 : 1.0);
}

static void ts_walk(int64_t cell, const int64_t *off, const int64_t *lists, const double *label, double *A, double *B,
                    int64_t *pos, int64_t *head, double rel, double d)
{
    for (;;) {
        const int64_t p = pos[cell];
        if (p >= off[cell + 1]) { head[cell] = -1; return; }
        const int64_t pid = lists[p];
        const double g = label[pid];
        if (isnan(g)) { head[cell] = pid; return; }
        ts_outcome(A, B, cell, g >= rel, d);
        pos[cell] = p + 1;
    }
}

static PyObject *ts_replay(PyObject *self, PyObject *args)
{
    Py_buffer ob, lb, gb, tb, ab, bb, sb, alb, beb, out;
    double rel, d;
    Py_ssize_t R, limit;
    PyObject *draw;
    if (!PyArg_ParseTuple(args, "y*y*w*y*w*w*w*ddnnw*w*Ow*", &ob, &lb, &gb, &tb, &ab, &bb, &sb, &rel, &d, &R, &limit,
                          &alb, &beb, &draw, &out))
        return NULL;
    const int64_t *off = ob.buf, *lists = lb.buf;
    double *label = gb.buf, *A = ab.buf, *B = bb.buf, *alpha = alb.buf, *beta = beb.buf;
    const double *truth = tb.buf;
    int64_t *spent = sb.buf, *o = out.buf;
    const Py_ssize_t C = ab.len / 8, Q = R > 0 ? C / R : 0;
    int64_t *pos = malloc((C + 1) * sizeof(int64_t)), *head = malloc((C + 1) * sizeof(int64_t));
    int64_t *act = malloc((Q + 1) * sizeof(int64_t));
    char *done = calloc(Q + 1, 1);
    int failed = !pos || !head || !act || !done, error = 0;
    int64_t count = 0;
    for (Py_ssize_t c = 0; !failed && c < C; c++) { pos[c] = off[c]; head[c] = -2; }
    while (!failed && !error && (limit < 0 || count < limit)) {
        int64_t turn = 0, any = 0;
        for (Py_ssize_t q = 0; q < Q; q++)
            if (!done[q] && (!any || spent[q] < turn)) { turn = spent[q]; any = 1; }
        if (!any) break;
        Py_ssize_t nact = 0, m = 0;
        for (Py_ssize_t q = 0; q < Q; q++) {
            if (done[q] || spent[q] != turn) continue;
            int has = 0;
            for (Py_ssize_t r = 0; r < R; r++) {
                const int64_t cell = q * R + r, h = head[cell];
                if (h == -2 || (h >= 0 && !isnan(label[h]))) ts_walk(cell, off, lists, label, A, B, pos, head, rel, d);
                if (head[cell] >= 0) has = 1;
            }
            if (!has) { done[q] = 1; continue; }
            act[nact++] = q;
            for (Py_ssize_t r = 0; r < R; r++) {
                const int64_t cell = q * R + r;
                if (head[cell] >= 0) { alpha[m] = 1.0 + A[cell]; beta[m] = 1.0 + B[cell]; m++; }
            }
        }
        if (!nact) continue;
        PyObject *drawn = PyObject_CallFunction(draw, "n", m);
        Py_buffer vb;
        if (!drawn || PyObject_GetBuffer(drawn, &vb, PyBUF_C_CONTIGUOUS) < 0) { Py_XDECREF(drawn); error = 1; break; }
        if (vb.len != m * (Py_ssize_t)sizeof(double)) {
            PyBuffer_Release(&vb); Py_DECREF(drawn);
            PyErr_SetString(PyExc_ValueError, "ts_replay: draw(m) must give m doubles");
            error = 1; break;
        }
        const double *v = vb.buf;
        Py_ssize_t k = 0;
        for (Py_ssize_t i = 0; i < nact; i++) {
            const int64_t q = act[i];
            Py_ssize_t arm = 0;
            double best = 0.0;
            for (Py_ssize_t r = 0; r < R; r++) {  /* argmax of the row, -inf where no pair is free */
                const double x = head[q * R + r] >= 0 ? v[k++] : -INFINITY;
                if (r == 0 || x > best) { best = x; arm = r; }
            }
            const int64_t cell = q * R + arm, pid = head[cell];
            pos[cell]++;
            ts_walk(cell, off, lists, label, A, B, pos, head, rel, d);
            label[pid] = truth[pid];
            ts_outcome(A, B, cell, truth[pid] >= rel, d);
            spent[q]++;
            o[count++] = pid;
        }
        PyBuffer_Release(&vb);
        Py_DECREF(drawn);
    }
    free(pos); free(head); free(act); free(done);
    PyBuffer_Release(&ob); PyBuffer_Release(&lb); PyBuffer_Release(&gb); PyBuffer_Release(&tb); PyBuffer_Release(&ab);
    PyBuffer_Release(&bb); PyBuffer_Release(&sb); PyBuffer_Release(&alb); PyBuffer_Release(&beb); PyBuffer_Release(&out);
    if (error) return NULL;
    if (failed) return PyErr_NoMemory();
    return PyLong_FromLongLong(count);
}

/* added to judged.core._native by its module init */
PyMethodDef judged_pooling_methods[] = {
    {"turn_picks", turn_picks, METH_VARARGS,
     "turn_picks(query_offsets, list_offsets, lists, label, truth, rel, rule, discount, picks, counts)"},
    {"hedge_picks", hedge_picks, METH_VARARGS,
     "hedge_picks(query_offsets, values, factor_rel, factor_non, truth, rel, n_runs, picks, counts)"},
    {"ts_replay", ts_replay, METH_VARARGS,
     "ts_replay(list_offsets, lists, label, truth, a, b, spent, rel, discount, n_runs, limit, alpha, beta, draw, out) "
     "-> count"},
    {"bounds_picks", bounds_picks, METH_VARARGS,
     "bounds_picks(query_offsets, top_offsets, top_ids, top_w, deep_offsets, deep_ids, member, truth, disc, "
     "n_runs, maxgrade, rel, limit, out) -> count"},
    {"pair_gaps", pair_gaps, METH_VARARGS, "pair_gaps(values, n_columns, out): per row, |x - y| summed over column pairs"},
    {"replay_dcg", replay_dcg, METH_VARARGS,
     "replay_dcg(k, normalised, offsets, pos, pid, joffsets, jpid, pair_query, gain, denominators, order, start, at, "
     "values, out)"},
        {NULL, NULL, 0, NULL}};
