/* Fix-ups of torch's float8 casts in one pass over the codes, for arraylayer/lowp/cpu_codes.py: an
 * optional C extension.
 *
 * It holds no rule of arraylayer's: cpu_codes.py decides which codes, bounds and NaN bits a cast
 * needs, and computes the same bits with torch's own ops where this is not built. Every function
 * works on the memory of contiguous CPU tensors that the caller checked (dtype, device, layout,
 * length) and keeps alive, passed as addresses (``tensor.data_ptr()``) with their length n. A code's
 * magnitude is its low 7 bits; its sign, bit 7, is always kept.
 *
 *   respell(codes, n, old, new)      a code of magnitude `old` gets magnitude `new`, in place
 *   beyond(codes, x, n, suspect, new, bound, inclusive)
 *                                    a code of magnitude `suspect` whose float32 source x[i] has
 *                                    |x[i]| > bound (>= where inclusive) gets magnitude `new`, in place
 *   nans(codes, out, n, lowest, itemsize, positive, negative)
 *                                    out[i] (items of 2, 4 or 8 bytes) = the bits `positive` or
 *                                    `negative` (by the code's sign) where the code's magnitude is
 *                                    `lowest` or more
 *
 * Each scans the codes BLOCK at a time, read only (vectorized), and touches a block only where one
 * of its codes may be the one sought: the codes that need a fix are rare. The GIL is released meanwhile. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

#define BLOCK 256

/* Whether a code of c[0..count) has a magnitude of `low` or more: bit 7 of (magnitude + 0x80 - low),
 * or-ed over the codes (three vector operations per 16 codes). A full block's loop has a constant
 * count, so that the compiler unrolls its vector loop (no scalar prologue or epilogue per block). */
static inline int found(const uint8_t *c, Py_ssize_t count, uint8_t low) {
    const uint8_t shift = (uint8_t)(0x80 - low);
    uint8_t any = 0;
    if (count == BLOCK) {
        for (int i = 0; i < BLOCK; i++) any |= (uint8_t)((c[i] & 0x7F) + shift);
    } else {
        for (Py_ssize_t i = 0; i < count; i++) any |= (uint8_t)((c[i] & 0x7F) + shift);
    }
    return any & 0x80;
}

static PyObject *respell(PyObject *self, PyObject *args) {
    unsigned long long address;
    Py_ssize_t length;
    unsigned int old, new;
    if (!PyArg_ParseTuple(args, "KnII:respell", &address, &length, &old, &new)) return NULL;
    const Py_ssize_t n = length;  /* a copy: a byte store may alias a local whose address escaped */
    uint8_t *codes = (uint8_t *)(uintptr_t)address;
    const uint8_t from = (uint8_t)(old & 0x7F), flip = (uint8_t)((old ^ new) & 0x7F);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t start = 0; start < n; start += BLOCK) {
        Py_ssize_t count = n - start < BLOCK ? n - start : BLOCK;
        uint8_t *c = codes + start;
        if (!found(c, count, from)) continue;
        for (Py_ssize_t i = 0; i < count; i++) c[i] ^= (c[i] & 0x7F) == from ? flip : 0;
    }
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *beyond(PyObject *self, PyObject *args) {
    unsigned long long codes_address, x_address;
    Py_ssize_t length;
    unsigned int suspect, new;
    double bound;
    int inclusive;
    if (!PyArg_ParseTuple(args, "KKnIIdp:beyond", &codes_address, &x_address, &length, &suspect, &new, &bound,
                          &inclusive)) return NULL;
    const Py_ssize_t n = length;
    uint8_t *codes = (uint8_t *)(uintptr_t)codes_address;
    const float *x = (const float *)(uintptr_t)x_address;
    const uint8_t sought = (uint8_t)(suspect & 0x7F), spelled = (uint8_t)(new & 0x7F);
    const float limit = (float)bound;  /* the bounds are exact in float32 */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t start = 0; start < n; start += BLOCK) {
        Py_ssize_t stop = n - start < BLOCK ? n : start + BLOCK;
        if (!found(codes + start, stop - start, sought)) continue;  /* NaN codes too */
        for (Py_ssize_t i = start; i < stop; i++) {
            if ((codes[i] & 0x7F) != sought) continue;
            float a = fabsf(x[i]);  /* NaN: neither comparison holds, the code is kept */
            if (inclusive ? a >= limit : a > limit) codes[i] = (uint8_t)((codes[i] & 0x80) | spelled);
        }
    }
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

#define WRITE_NANS(type)                                                                   \
    do {                                                                                   \
        type *o = (type *)out;                                                             \
        for (Py_ssize_t i = start; i < stop; i++)                                          \
            if ((codes[i] & 0x7F) >= lowest) o[i] = (type)(codes[i] & 0x80 ? negative : positive); \
    } while (0)

static PyObject *nans(PyObject *self, PyObject *args) {
    unsigned long long codes_address, out_address, positive, negative;
    Py_ssize_t length;
    unsigned int low;
    int itemsize;
    if (!PyArg_ParseTuple(args, "KKnIiKK:nans", &codes_address, &out_address, &length, &low, &itemsize, &positive,
                          &negative)) return NULL;
    if (itemsize != 2 && itemsize != 4 && itemsize != 8) {
        PyErr_Format(PyExc_ValueError, "nans: itemsize=%d; items of 2, 4 or 8 bytes", itemsize);
        return NULL;
    }
    const Py_ssize_t n = length;
    const uint8_t *codes = (const uint8_t *)(uintptr_t)codes_address;
    void *out = (void *)(uintptr_t)out_address;
    const uint8_t lowest = (uint8_t)(low & 0x7F);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t start = 0; start < n; start += BLOCK) {
        Py_ssize_t stop = n - start < BLOCK ? n : start + BLOCK;
        if (!found(codes + start, stop - start, lowest)) continue;
        if (itemsize == 2) WRITE_NANS(uint16_t);
        else if (itemsize == 4) WRITE_NANS(uint32_t);
        else WRITE_NANS(uint64_t);
    }
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"respell", respell, METH_VARARGS, "respell(codes, n, old, new): codes of magnitude old get magnitude new"},
    {"beyond", beyond, METH_VARARGS,
     "beyond(codes, x, n, suspect, new, bound, inclusive): codes of magnitude suspect with |x| past bound get new"},
    {"nans", nans, METH_VARARGS,
     "nans(codes, out, n, lowest, itemsize, positive, negative): out[i] = NaN bits where a code's magnitude >= lowest"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_codes",
                                    "Fix-ups of torch's float8 casts (arraylayer/lowp/cpu_codes.py).", -1, methods};

PyMODINIT_FUNC PyInit__codes(void) { return PyModule_Create(&module); }
