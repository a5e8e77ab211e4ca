/* float32 -> float8 codes with ml_dtypes' bits, and float8 codes -> wider floats by a table, for
 * arraylayer/lowp/cpu_codes.py: an optional C extension.
 *
 * It holds no rule of arraylayer's: cpu_codes.py passes each format's fields and out-of-range codes
 * (and casts.py the table of a format's values), and the same bits come from torch's own ops where
 * this is not built. Every function works on the memory of contiguous CPU tensors (and NumPy tables)
 * that the caller checked (dtype, device, layout, length) and keeps alive, passed as addresses
 * (``tensor.data_ptr()``) with their length n, and splits the work over up to `threads` threads (the
 * caller passes torch's count) as torch splits its own casts (at::parallel_for: more than 32,768
 * elements, contiguous chunks, here each but the last a multiple of 64), on the calling thread's OpenMP
 * team where torch's libgomp is loaded (the workers that torch's own operations use and leave spinning;
 * encode only), else on pthreads started for the call (1,048,576 elements a thread at least); one
 * thread on Windows.
 * The GIL is released meanwhile; the bits do not depend on the split.
 *
 *   encode(x, codes, n, mantissa, bias, largest, over, nan, threads)
 *       codes[i] = float32 x[i] in the format with `mantissa` bits and exponent `bias`, rounded to
 *       nearest even; a magnitude beyond `largest` (inf too) gets `over`, NaN gets `nan`; the sign
 *       is always kept (formats whose NaN and zero carry a sign: float8_e4m3fn, float8_e5m2)
 *   decode(codes, table, out, n, itemsize, threads)
 *       out[i] = table[codes[i]] (items of 2, 4 or 8 bytes; the table has 256)
 *   f16c(on=None)
 *       whether float8_e4m3fn and float8_e5m2 are encoded, and float8_e5m2 decoded, by the F16C
 *       kernels (x86-64 CPUs with AVX2 and F16C); on=False: by the generic loops (tests compare both
 *       paths), on=True undoes that
 *   openmp(on=None)
 *       whether the threads are the OpenMP team's (GOMP_parallel found in the process); on=False:
 *       pthreads started for the call (tests drive both), on=True undoes that */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if !defined(_WIN32) && defined(__GNUC__) && defined(__has_include)
#if __has_include(<pthread.h>) && __has_include(<dlfcn.h>)
#include <dlfcn.h>
#include <pthread.h>
#define HAVE_THREADS 1
#endif
#endif

/* More elements than MIN_CHUNK run on torch's OpenMP team (its grain size: at::parallel_for's split
 * and its split from there on); started for the call, a pthread takes MIN_STARTED or
 * more (one costs 30 to 60 us on a loaded 2-core machine; right after torch's own operation its
 * OpenMP workers still spin on the cores: at 1e6 values, 2 pthreads 1.1 ms against 1 thread's 0.5). */
#define MIN_CHUNK 32768
#define MIN_STARTED 1048576
#define BLOCK 64 /* chunks start at multiples of it: whole steps of the F16C loops, whole cache lines of codes */
#define MAX_THREADS 64

typedef void (*Work)(const void *task, Py_ssize_t start, Py_ssize_t stop);

/* work over [0, n) in `count` chunks of `size` (the last shorter), each taken by the next thread free. */
typedef struct {
    Work work;
    const void *task;
    Py_ssize_t n, size, count, next;
} Split;

static void *run_chunks(void *split) {
    Split *s = split;
#ifdef HAVE_THREADS
    for (Py_ssize_t t; (t = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED)) < s->count;)
#else
    for (Py_ssize_t t = 0; t < s->count; t++)
#endif
        s->work(s->task, t * s->size, t * s->size + s->size < s->n ? t * s->size + s->size : s->n);
    return NULL;
}

#ifdef HAVE_THREADS
typedef void (*Team)(void (*fn)(void *), void *data, unsigned threads, unsigned flags);

static Team team = NULL;           /* libgomp's GOMP_parallel, where the process has it (torch's OpenMP) */
static int looked_up = 0, use_team = 1;

static void look_up(void) {
    if (!looked_up) team = (Team)dlsym(RTLD_DEFAULT, "GOMP_parallel");
    looked_up = 1;
}

static void run_team(void *split) { run_chunks(split); }

/* `threads` threads, the calling one among them: the calling thread's OpenMP team (whose workers,
 * which torch's own operations leave spinning for a while, take chunks at once) or pthreads. */
static void run_threads(Split *s, Py_ssize_t threads, int by_team) {
    if (by_team) {
        team(run_team, s, (unsigned)threads, 0);
        return;
    }
    pthread_t ids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (Py_ssize_t t = 1; t < threads; t++) started[t] = pthread_create(&ids[t], NULL, run_chunks, s) == 0;
    run_chunks(s); /* a thread that did not start leaves its chunks to the others */
    for (Py_ssize_t t = 1; t < threads; t++)
        if (started[t]) pthread_join(ids[t], NULL);
}
#endif

/* work over [0, n) on up to `threads` threads, in chunks as at::parallel_for splits its work, each but
 * the last a multiple of BLOCK; on the OpenMP team where `team_too`. Called holding the GIL (the first
 * threaded call looks libgomp up); the work runs with it released. */
static void parallel(Work work, const void *task, Py_ssize_t n, Py_ssize_t threads, int team_too) {
    Split s = {work, task, n, n, 1, 0};
#ifdef HAVE_THREADS
    if (threads > 1 && n > MIN_CHUNK) {
        look_up();
        const int by_team = team_too && use_team && team != NULL;
        const Py_ssize_t most = by_team ? (n + MIN_CHUNK - 1) / MIN_CHUNK : n / MIN_STARTED;
        if (threads > most) threads = most;
        if (threads > MAX_THREADS) threads = MAX_THREADS;
        if (threads > 1) {
            s.size = ((n + threads - 1) / threads + BLOCK - 1) / BLOCK * BLOCK;
            s.count = (n + s.size - 1) / s.size;
            Py_BEGIN_ALLOW_THREADS
            run_threads(&s, s.count, by_team);
            Py_END_ALLOW_THREADS
            return;
        }
    }
#endif
    Py_BEGIN_ALLOW_THREADS
    run_chunks(&s);
    Py_END_ALLOW_THREADS
}

static PyObject *openmp(PyObject *self, PyObject *args) {
    int on = -1;
    if (!PyArg_ParseTuple(args, "|p:openmp", &on)) return NULL;
#ifdef HAVE_THREADS
    look_up();
    if (on >= 0) use_team = on;
    return PyBool_FromLong(use_team && team != NULL);
#else
    return PyBool_FromLong(0);
#endif
}

typedef struct {
    const float *x;
    uint8_t *codes;
    uint32_t shift, rebias, magic, smallest_normal, largest, over, nan;
    float scale; /* 2**(bias - 15): the F16C kernel's */
} Encoding;

static inline uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* `yes` where `take`, else `no`, by masks: gcc vectorizes no loop where a float sum is chosen by `?:`. */
static inline int32_t pick(int take, int32_t yes, int32_t no) {
    const int32_t mask = -(int32_t)take;
    return (yes & mask) | (no & ~mask);
}

/* x86-64: an AVX2 copy too (eight lanes), chosen at load time where the CPU has it. */
#if defined(__x86_64__) && defined(__has_attribute) && !defined(VECTOR_CLONES)
#if __has_attribute(target_clones)
#define VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef VECTOR_CLONES
#define VECTOR_CLONES
#endif

/* Branch-free, so that the compiler vectorizes it; signed 32-bit lanes (every value compared is
 * below 2**31). A normal result: the float32 bits re-biased and shifted right, adding half an ulp
 * less one plus the kept bit's parity (ties to even; a carry goes into the exponent). A subnormal
 * one: |x| + 2**k, whose float32 ulp is the format's smallest subnormal, rounds in the FPU's own
 * round-to-nearest-even; its bits less 2**k's are the code. */
VECTOR_CLONES static void encode_chunk(const void *task, Py_ssize_t start, Py_ssize_t stop) {
    const Encoding *e = task;
    const float *x = e->x;
    uint8_t *codes = e->codes;
    const uint32_t shift = e->shift, rebias = e->rebias, half = (1u << (shift - 1)) - 1;
    const int32_t magic = (int32_t)e->magic, smallest_normal = (int32_t)e->smallest_normal;
    const int32_t largest = (int32_t)e->largest, over = (int32_t)e->over, nan = (int32_t)e->nan;
    const float magic_f = float_of(e->magic);
    for (Py_ssize_t i = start; i < stop; i++) {
        uint32_t u = bits_of(x[i]), a = u & 0x7FFFFFFFu;
        int32_t normal = (int32_t)((a + rebias + half + ((a >> shift) & 1)) >> shift);
        int32_t subnormal = (int32_t)bits_of(float_of(a) + magic_f) - magic;
        int32_t code = pick((int32_t)a < smallest_normal, subnormal, normal);
        code = pick(code > largest, over, code);
        code = pick((int32_t)a > 0x7F800000, nan, code);
        codes[i] = (uint8_t)((uint32_t)code | ((u >> 24) & 0x80));
    }
}

/* float8_e5m2 and float8_e4m3fn on x86-64 with F16C. The float32 values times 2**(bias - 15) (exact: a
 * power of two scaling down; what underflows in float32 lies far below half the format's smallest
 * subnormal) have float16's biased exponent equal to the format's, float16's subnormals on the
 * format's, and 10 - mantissa more mantissa bits than the format at every exponent (8 for e5m2, which
 * is float16's top byte, scale 1; 7 for e4m3fn). Converted to float16 toward zero, the lowest bit set
 * where that was inexact ("round to odd"), and its low 10 - mantissa bits then rounded off to nearest
 * even, the float32 is rounded once. Beyond float16's range toward zero gives 65504 (odd), a code past
 * the format's largest; below its smallest subnormal, 0 or 1, which round to 0. A code beyond `largest`
 * takes `over`, NaN takes `nan`; the sign is the float32's. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target)
#include <immintrin.h>
#define HAVE_F16C 1

#define F16C __attribute__((target("avx2,f16c")))

/* Sixteen float32, two registers, in float16 toward zero and rounded to odd, in order: rounded up
 * and down, the two bit patterns are equal where exact, else neighbours of one sign, the smaller one
 * toward zero; with the lowest bit set where they differ, that is the odd one of the two. */
F16C static inline __m256i odd_halves(__m256 a, __m256 b) {
    const int up = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC, down = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
    const __m256i u = _mm256_set_m128i(_mm256_cvtps_ph(b, up), _mm256_cvtps_ph(a, up));
    const __m256i d = _mm256_set_m128i(_mm256_cvtps_ph(b, down), _mm256_cvtps_ph(a, down));
    const __m256i inexact = _mm256_andnot_si256(_mm256_cmpeq_epi16(u, d), _mm256_set1_epi16(1));
    return _mm256_or_si256(_mm256_min_epu16(u, d), inexact);
}

typedef struct {
    __m256 scale;
    __m256i over, nan;
} Halves;

/* Sixteen float16 (rounded to odd) -> their codes, in 16-bit lanes: the magnitude's low `shift` bits
 * rounded off to nearest even (at most 0x7C3F + 1 before the shift: no lane overflows), at most `over`
 * (the largest, or the code past it: the codes past the largest), `nan` for NaN, and the sign bit. */
F16C static inline __m256i codes_of(__m256i h, const Halves *k, const int shift) {
    const __m256i a = _mm256_and_si256(h, _mm256_set1_epi16(0x7FFF));
    const __m256i even = _mm256_and_si256(_mm256_srli_epi16(a, shift), _mm256_set1_epi16(1));
    const __m256i round = _mm256_set1_epi16((short)((1 << (shift - 1)) - 1));
    __m256i code = _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(a, round), even), shift);
    code = _mm256_min_epi16(code, k->over);
    code = _mm256_blendv_epi8(code, k->nan, _mm256_cmpgt_epi16(a, _mm256_set1_epi16(0x7C00)));
    return _mm256_or_si256(code, _mm256_and_si256(_mm256_srli_epi16(h, 8), _mm256_set1_epi16(0x80)));
}

/* Sixteen float32 -> their codes; scaled: times k->scale first (e5m2's scale is 1: none). */
F16C static inline __m256i codes_of16(const float *x, const Halves *k, const int shift, const int scaled) {
    __m256 a = _mm256_loadu_ps(x), b = _mm256_loadu_ps(x + 8);
    if (scaled) a = _mm256_mul_ps(a, k->scale), b = _mm256_mul_ps(b, k->scale);
    return codes_of(odd_halves(a, b), k, shift);
}

/* 32 values a step; the tail by the generic loop. Called with constant shift and scaled, so that the
 * compiler makes one loop per format (shifts by an immediate, no multiply for e5m2). */
F16C static inline void encode_f16c(const Encoding *e, Py_ssize_t start, Py_ssize_t stop, const int shift,
                                    const int scaled) {
    const Halves k = {_mm256_set1_ps(e->scale), _mm256_set1_epi16((short)e->over), _mm256_set1_epi16((short)e->nan)};
    Py_ssize_t i = start;
    for (; i + 32 <= stop; i += 32) {
        const float *x = e->x + i;
        __m256i bytes = _mm256_packus_epi16(codes_of16(x, &k, shift, scaled), codes_of16(x + 16, &k, shift, scaled));
        _mm256_storeu_si256((__m256i *)(e->codes + i), _mm256_permute4x64_epi64(bytes, 0xD8));
    }
    encode_chunk(e, i, stop);
}

/* float8_e5m2 (mantissa 2: shift 8, scale 1) or float8_e4m3fn (mantissa 3: shift 7, scale 2**-8). */
F16C static void encode_f16c_chunk(const void *task, Py_ssize_t start, Py_ssize_t stop) {
    const Encoding *e = task;
    if (e->shift == 23 - 2) encode_f16c(e, start, stop, 8, 0); /* Encoding's shift: 23 - mantissa */
    else encode_f16c(e, start, stop, 7, 1);
}
#endif
#endif

static int use_f16c = 0; /* set at import where the CPU has AVX2 and F16C */

static PyObject *f16c(PyObject *self, PyObject *args) {
    int on = -1;
    if (!PyArg_ParseTuple(args, "|p:f16c", &on)) return NULL;
#ifdef HAVE_F16C
    if (on >= 0) use_f16c = on && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#endif
    return PyBool_FromLong(use_f16c);
}

static PyObject *encode(PyObject *self, PyObject *args) {
    unsigned long long x_address, codes_address;
    Py_ssize_t n, threads;
    unsigned int mantissa, largest, over, nan;
    int bias;
    if (!PyArg_ParseTuple(args, "KKnIiIIIn:encode", &x_address, &codes_address, &n, &mantissa, &bias, &largest,
                          &over, &nan, &threads)) return NULL;
    if (mantissa < 1 || mantissa > 6 || bias < 1 || bias > 30) {
        PyErr_Format(PyExc_ValueError, "encode: mantissa=%u, bias=%d; a float8 format's (1-6 bits, bias 1-30)",
                     mantissa, bias);
        return NULL;
    }
    Encoding e = {(const float *)(uintptr_t)x_address, (uint8_t *)(uintptr_t)codes_address, 23 - mantissa,
                  (uint32_t)(bias - 127) << 23,                       /* exponent 127 -> bias (mod 2**32) */
                  (uint32_t)(127 + 24 - bias - mantissa) << 23,       /* 2**(24 - bias - mantissa) */
                  (uint32_t)(127 + 1 - bias) << 23,                   /* 2**(1 - bias) */
                  largest & 0x7F, over & 0x7F, nan & 0x7F, float_of((uint32_t)(112 + bias) << 23)};
    Work work = encode_chunk;
#ifdef HAVE_F16C
    if (use_f16c && ((mantissa == 2 && bias == 15) || (mantissa == 3 && bias == 7)) && e.over - e.largest <= 1)
        work = encode_f16c_chunk; /* past the largest: it, or the code after it (inf's, e4m3fn's NaN) */
#endif
    parallel(work, &e, n, threads, 1);
    Py_RETURN_NONE;
}

typedef struct {
    const uint8_t *codes;
    const void *table;
    void *out;
    int itemsize;
} Decoding;

#define GATHER(type)                                                                     \
    do {                                                                                 \
        const type *t = d->table;                                                        \
        type *o = d->out;                                                                \
        for (Py_ssize_t i = start; i < stop; i++) o[i] = t[codes[i]];                    \
    } while (0)

/* No AVX2 copy: its vector gathers ran 2x slower than this scalar loop on an AMD EPYC. */
static void decode_chunk(const void *task, Py_ssize_t start, Py_ssize_t stop) {
    const Decoding *d = task;
    const uint8_t *codes = d->codes;
    if (d->itemsize == 2) GATHER(uint16_t);
    else if (d->itemsize == 4) GATHER(uint32_t);
    else GATHER(uint64_t);
}

#ifdef HAVE_F16C
/* float8_e5m2 codes are float16's top byte. Where the table holds exactly that for every code but
 * NaN's (float16 items, or float32 ones as F16C widens them: float8_e5m2's tables), `code << 8`,
 * widened, is table[code] without a gather; a block of 16 with a NaN code gathers from the table. */
F16C static int halves_table(const void *table, int itemsize) {
    for (int c = 0; c < 256; c++) {
        const uint16_t h = (uint16_t)(c << 8);
        if ((h & 0x7FFF) > 0x7C00) continue;
        if (itemsize == 2 ? ((const uint16_t *)table)[c] != h
                          : ((const uint32_t *)table)[c] != bits_of(_cvtsh_ss(h))) return 0;
    }
    return 1;
}

F16C static void decode_halves_chunk(const void *task, Py_ssize_t start, Py_ssize_t stop) {
    const Decoding *d = task;
    const __m128i magnitude = _mm_set1_epi8(0x7F), inf = _mm_set1_epi8(0x7C);
    Py_ssize_t i = start;
    for (; i + 16 <= stop; i += 16) {
        const __m128i c = _mm_loadu_si128((const __m128i *)(d->codes + i));
        const __m256i h = _mm256_slli_epi16(_mm256_cvtepu8_epi16(c), 8);
        if (d->itemsize == 2) {
            _mm256_storeu_si256((__m256i *)((uint16_t *)d->out + i), h);
        } else {
            float *out = (float *)d->out + i;
            _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm256_castsi256_si128(h)));
            _mm256_storeu_ps(out + 8, _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)));
        }
        if (_mm_movemask_epi8(_mm_cmpgt_epi8(_mm_and_si128(c, magnitude), inf))) decode_chunk(task, i, i + 16);
    }
    decode_chunk(task, i, stop);
}
#endif

static PyObject *decode(PyObject *self, PyObject *args) {
    unsigned long long codes_address, table_address, out_address;
    Py_ssize_t n, threads;
    int itemsize;
    if (!PyArg_ParseTuple(args, "KKKnin:decode", &codes_address, &table_address, &out_address, &n, &itemsize,
                          &threads)) return NULL;
    if (itemsize != 2 && itemsize != 4 && itemsize != 8) {
        PyErr_Format(PyExc_ValueError, "decode: itemsize=%d; items of 2, 4 or 8 bytes", itemsize);
        return NULL;
    }
    Decoding d = {(const uint8_t *)(uintptr_t)codes_address, (const void *)(uintptr_t)table_address,
                  (void *)(uintptr_t)out_address, itemsize};
    Work work = decode_chunk;
#ifdef HAVE_F16C /* checking the table's 256 items pays where there are more codes */
    if (use_f16c && itemsize != 8 && n > 256 && halves_table(d.table, itemsize)) work = decode_halves_chunk;
#endif
    /* Not on the team: per call no faster there (back from float8_e5m2 0.58-0.73x torch's cast against
     * 0.58-0.60), and where torch's sum follows, two OpenMP regions can stall on a descheduled worker. */
    parallel(work, &d, n, threads, 0);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"encode", encode, METH_VARARGS,
     "encode(x, codes, n, mantissa, bias, largest, over, nan, threads): float32 -> float8 codes, nearest even"},
    {"decode", decode, METH_VARARGS,
     "decode(codes, table, out, n, itemsize, threads): out[i] = table[codes[i]], items of 2, 4 or 8 bytes"},
    {"f16c", f16c, METH_VARARGS,
     "f16c(on=None): whether the F16C kernels encode float8_e4m3fn and float8_e5m2 and decode float8_e5m2; "
     "on=False: the generic loops"},
    {"openmp", openmp, METH_VARARGS,
     "openmp(on=None): whether threads are the OpenMP team's (torch's libgomp); on=False: pthreads per call"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_codes",
                                    "float32 -> float8 codes and float8 codes -> wider floats (arraylayer/lowp/cpu_codes.py).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__codes(void) {
#ifdef HAVE_F16C
    __builtin_cpu_init();
    use_f16c = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#endif
    return PyModule_Create(&module);
}
