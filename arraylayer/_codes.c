/* float32 -> float8 codes with ml_dtypes' bits, and float8 codes -> wider floats by a table, for
 * arraylayer/lowp/cpu_codes.py: an optional C extension.
 *
 * It holds no rule of arraylayer's: cpu_codes.py passes each format's fields and out-of-range codes
 * (and casts.py the table of a format's values), and the same bits come from torch's own ops where
 * this is not built. Every function works on the memory of contiguous CPU tensors (and NumPy tables)
 * that the caller checked (dtype, device, layout, length) and keeps alive, passed as addresses
 * (``tensor.data_ptr()``) with their length n, and splits the work over `threads` threads (the caller
 * passes torch's count) in torch's contiguous chunks, the calling thread taking the first, where each
 * gets MIN_CHUNK elements or more; one thread without pthreads. The GIL is released meanwhile.
 *
 *   encode(x, codes, n, mantissa, bias, largest, over, nan, threads)
 *       codes[i] = float32 x[i] in the format with `mantissa` bits and exponent `bias`, rounded to
 *       nearest even; a magnitude beyond `largest` (inf too) gets `over`, NaN gets `nan`; the sign
 *       is always kept (formats whose NaN and zero carry a sign: float8_e4m3fn, float8_e5m2)
 *   decode(codes, table, out, n, itemsize, threads)
 *       out[i] = table[codes[i]] (items of 2, 4 or 8 bytes; the table has 256) */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if !defined(_WIN32) && defined(__has_include)
#if __has_include(<pthread.h>)
#include <pthread.h>
#define HAVE_PTHREADS 1
#endif
#endif

/* Fewer elements per thread: starting one (30 to 60 us on a loaded 2-core machine, the time of about
 * 100,000 elements) costs more than it saves, and right after one of torch's own operations its
 * OpenMP workers still spin on the cores (on 2 cores at 1e6 values: 2 threads 1.1 ms, 1 thread 0.5). */
#define MIN_CHUNK 1048576
#define MAX_THREADS 64

typedef void (*Work)(const void *task, Py_ssize_t start, Py_ssize_t stop);

typedef struct {
    Work work;
    const void *task;
    Py_ssize_t start, stop;
} Chunk;

static void *run_chunk(void *chunk) {
    const Chunk *c = chunk;
    c->work(c->task, c->start, c->stop);
    return NULL;
}

/* work(task, start, stop) over [0, n) in `threads` contiguous chunks (at::parallel_for's split). */
static void parallel(Work work, const void *task, Py_ssize_t n, Py_ssize_t threads) {
    if (threads > n / MIN_CHUNK) threads = n / MIN_CHUNK;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
#ifndef HAVE_PTHREADS
    threads = 1;
#endif
    if (threads <= 1) {
        work(task, 0, n);
        return;
    }
#ifdef HAVE_PTHREADS
    const Py_ssize_t size = (n + threads - 1) / threads;
    Chunk chunks[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (Py_ssize_t t = 0; t < threads; t++) {
        Py_ssize_t start = t * size, stop = start + size < n ? start + size : n;
        chunks[t] = (Chunk){work, task, start, stop};
        if (t > 0) started[t] = pthread_create(&ids[t], NULL, run_chunk, &chunks[t]) == 0;
    }
    run_chunk(&chunks[0]);
    for (Py_ssize_t t = 1; t < threads; t++) {
        if (started[t]) pthread_join(ids[t], NULL);
        else run_chunk(&chunks[t]); /* no thread to be had: this one does it */
    }
#endif
}

typedef struct {
    const float *x;
    uint8_t *codes;
    uint32_t shift, rebias, magic, smallest_normal, largest, over, nan;
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
                  largest & 0x7F, over & 0x7F, nan & 0x7F};
    Py_BEGIN_ALLOW_THREADS
    parallel(encode_chunk, &e, n, threads);
    Py_END_ALLOW_THREADS
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
    Py_BEGIN_ALLOW_THREADS
    parallel(decode_chunk, &d, n, threads);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"encode", encode, METH_VARARGS,
     "encode(x, codes, n, mantissa, bias, largest, over, nan, threads): float32 -> float8 codes, nearest even"},
    {"decode", decode, METH_VARARGS,
     "decode(codes, table, out, n, itemsize, threads): out[i] = table[codes[i]], items of 2, 4 or 8 bytes"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_codes",
                                    "float32 -> float8 codes and float8 codes -> wider floats (arraylayer/lowp/cpu_codes.py).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__codes(void) { return PyModule_Create(&module); }
