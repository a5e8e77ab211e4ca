/* threefry-2x32 (20 rounds) blocks for arraylayer/models/dropout_masks.py: an optional C extension.
 *
 * It holds no rule of arraylayer's. dropout_masks.py decides which key, counters and threshold
 * a mask or a split needs, and its NumPy path computes the same bits where this is not built.
 * Both functions write into a writable contiguous buffer the caller allocated (a NumPy array):
 *
 *   keep(out, k0, k1, first, threshold)   out[i] = (y0 ^ y1) < threshold, one byte each (bool)
 *   blocks(out, k0, k1, first)            out[2i] = y0, out[2i + 1] = y1 (uint32 pairs)
 *
 * where (y0, y1) = threefry2x32((k0, k1), (0, first + i)): the high counter word is 0, the low
 * one counts from `first` (modulo 2**32), as the NumPy path and jax.random count. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define ROTL(x, r) (((x) << (r)) | ((x) >> (32 - (r))))
#define ROUND(r) (x0 += x1, x1 = ROTL(x1, r) ^ x0)
#define INJECT(a, b, g) (x0 += ks[a], x1 += ks[b] + (g))

/* One block: the words (y0, y1) for the counter (0, counter) under the key words ks[0..2]. The
 * rounds are written out (constant rotations), so that the compiler vectorizes the loops below. */
static inline void block(const uint32_t ks[3], uint32_t counter, uint32_t *y0, uint32_t *y1) {
    uint32_t x0 = ks[0], x1 = counter + ks[1];
    ROUND(13); ROUND(15); ROUND(26); ROUND(6);  INJECT(1, 2, 1u);
    ROUND(17); ROUND(29); ROUND(16); ROUND(24); INJECT(2, 0, 2u);
    ROUND(13); ROUND(15); ROUND(26); ROUND(6);  INJECT(0, 1, 3u);
    ROUND(17); ROUND(29); ROUND(16); ROUND(24); INJECT(1, 2, 4u);
    ROUND(13); ROUND(15); ROUND(26); ROUND(6);  INJECT(2, 0, 5u);
    *y0 = x0;
    *y1 = x1;
}

/* The key schedule from two Python ints (taken modulo 2**32, as the Python side masks them). */
static void schedule(unsigned long long k0, unsigned long long k1, uint32_t ks[3]) {
    ks[0] = (uint32_t)k0;
    ks[1] = (uint32_t)k1;
    ks[2] = ks[0] ^ ks[1] ^ 0x1BD11BDAu;
}

/* Whether `out` (parsed, so held) is what the caller needs; if not, it is released and a
 * ValueError with `message` is set. */
static int usable(Py_buffer *out, int fits, const char *message) {
    if (PyBuffer_IsContiguous(out, 'C') && fits) return 1;
    PyBuffer_Release(out);
    PyErr_SetString(PyExc_ValueError, message);
    return 0;
}

static PyObject *keep(PyObject *self, PyObject *args) {
    Py_buffer out;
    unsigned long long k0, k1, first, threshold;
    if (!PyArg_ParseTuple(args, "w*KKKK:keep", &out, &k0, &k1, &first, &threshold)) return NULL;
    if (!usable(&out, out.itemsize == 1, "keep writes into a contiguous buffer of 1-byte items")) return NULL;
    uint32_t ks[3], start = (uint32_t)first, limit = (uint32_t)threshold;
    schedule(k0, k1, ks);
    uint8_t *mask = (uint8_t *)out.buf;
    Py_ssize_t n = out.len;  /* a local: a byte store may alias out.len, which would stop vectorizing */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t y0, y1;
        block(ks, start + (uint32_t)i, &y0, &y1);
        mask[i] = (uint8_t)((y0 ^ y1) < limit);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static PyObject *blocks(PyObject *self, PyObject *args) {
    Py_buffer out;
    unsigned long long k0, k1, first;
    if (!PyArg_ParseTuple(args, "w*KKK:blocks", &out, &k0, &k1, &first)) return NULL;
    if (!usable(&out, out.len % 8 == 0, "blocks writes into a contiguous buffer of uint32 pairs")) return NULL;
    uint32_t ks[3], start = (uint32_t)first, *words = (uint32_t *)out.buf;
    Py_ssize_t n = out.len / 8;
    schedule(k0, k1, ks);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) block(ks, start + (uint32_t)i, &words[2 * i], &words[2 * i + 1]);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static PyMethodDef METHODS[] = {
    {"keep", keep, METH_VARARGS, "keep(out, k0, k1, first, threshold): out[i] = (y0 ^ y1) < threshold."},
    {"blocks", blocks, METH_VARARGS, "blocks(out, k0, k1, first): out[2i], out[2i + 1] = y0, y1."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "arraylayer._threefry",
    "threefry-2x32 blocks for arraylayer/models/dropout_masks.py (optional; NumPy computes the same bits).", -1, METHODS,
};

PyMODINIT_FUNC PyInit__threefry(void) { return PyModule_Create(&MODULE); }
