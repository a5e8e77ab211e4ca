/* arraylayer._dispatch: arraylayer.Array's ``__getitem__`` for plain keys (see _dispatch.c).
 *
 * It holds no rule. The Python method (arraylayer/array/__init__.py) plans each native class once
 * and stores here what its plain keys need (getitem_plan): NumPy's ndarray, whose element is a NumPy
 * scalar that becomes a 0-d view, and torch's Tensor, whose negative slice steps the Python path
 * gathers. A plain key is a Python int (not a bool), a slice of ints and None, None, ``...``, or a
 * tuple of those. Such a key on an Array of a planned class is the native array's own indexing, its
 * result in a new Array; every other key, class or result runs the Python method. */
#include "_dispatch.h"

enum { PLAN_NONE = 0, PLAN_NUMPY = 1, PLAN_TORCH = 2 };

#define GETITEM_PLANS 8
static struct {
    PyTypeObject *type; /* a strong reference */
    int plan;
} plans[GETITEM_PLANS];

static PyObject *python_getitem; /* the Python method */
static PyMethodDef getitem_def;
static binaryfunc generic_subscript; /* CPython's slot, which looks __getitem__ up */

/* what a plain key holds (KEY_PLAIN unset: not a plain key) */
enum { KEY_PLAIN = 1, KEY_ONLY_INTS = 2, KEY_REVERSING = 4 };

static inline int
plain_bound(PyObject *b)
{
    return b == Py_None || PyLong_CheckExact(b);
}

/* the flags of one part of a key */
static inline int
part_flags(PyObject *k)
{
    if (PyLong_CheckExact(k))
        return KEY_PLAIN | KEY_ONLY_INTS;
    if (k == Py_None || k == Py_Ellipsis)
        return KEY_PLAIN;
    if (PySlice_Check(k)) {
        PySliceObject *s = (PySliceObject *)k;
        if (!plain_bound(s->start) || !plain_bound(s->stop) || !plain_bound(s->step))
            return 0;
        if (s->step != Py_None) {
            int overflow = 0;
            long step = PyLong_AsLongAndOverflow(s->step, &overflow);
            if (step < 0 || overflow < 0) /* -1 with an error cannot happen for an exact int */
                return KEY_PLAIN | KEY_REVERSING;
        }
        return KEY_PLAIN;
    }
    return 0;
}

static inline int
key_flags(PyObject *key)
{
    if (!PyTuple_CheckExact(key))
        return part_flags(key);
    int only_ints = 1, reversing = 0; /* () too: NumPy's x[()] of a 0-d array is a scalar */
    for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(key); i < n; i++) {
        int f = part_flags(PyTuple_GET_ITEM(key, i));
        if (!(f & KEY_PLAIN))
            return 0;
        only_ints &= (f & KEY_ONLY_INTS) != 0;
        reversing |= (f & KEY_REVERSING) != 0;
    }
    return KEY_PLAIN | (only_ints ? KEY_ONLY_INTS : 0) | (reversing ? KEY_REVERSING : 0);
}

static inline int
plan_of(PyTypeObject *t)
{
    for (int k = 0; k < GETITEM_PLANS && plans[k].type != NULL; k++) {
        if (plans[k].type == t)
            return plans[k].plan;
    }
    return PLAN_NONE;
}

/* (i, ...) for the small ints i, made on first use: a tuple each call costs as much as the rest */
#define SMALL_LOW (-16)
#define SMALL_HIGH 256
static PyObject *small_keys[SMALL_HIGH - SMALL_LOW];

/* key with ``...`` after its parts (new reference): NumPy's 0-d view where the key alone gives a scalar */
static PyObject *
with_ellipsis(PyObject *key)
{
    if (!PyTuple_CheckExact(key)) {
        int overflow = 0;
        long i = PyLong_AsLongAndOverflow(key, &overflow); /* key is an exact int: no error */
        if (overflow != 0 || i < SMALL_LOW || i >= SMALL_HIGH)
            return PyTuple_Pack(2, key, Py_Ellipsis);
        PyObject **held = &small_keys[i - SMALL_LOW];
        if (*held == NULL && (*held = PyTuple_Pack(2, key, Py_Ellipsis)) == NULL)
            return NULL;
        return Py_NewRef(*held);
    }
    Py_ssize_t n = PyTuple_GET_SIZE(key);
    PyObject *full = PyTuple_New(n + 1);
    if (full == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(full, i, Py_NewRef(PyTuple_GET_ITEM(key, i)));
    PyTuple_SET_ITEM(full, n, Py_NewRef(Py_Ellipsis));
    return full;
}

/* The compiled path: a new Array, NULL with an exception, or NULL with *fell: the Python method. */
AL_HOT static PyObject *
getitem_fast(PyObject *self, PyObject *key, int *fell)
{
    PyObject *native, *result = NULL, *array = NULL;
    binaryfunc subscript;
    *fell = 1;
    if (Py_TYPE(self) != al_array_type || (native = al_get_native(self)) == NULL)
        return NULL;
    int plan = plan_of(Py_TYPE(native)), flags;
    if (plan == PLAN_NONE || !((flags = key_flags(key)) & KEY_PLAIN) ||
        (plan == PLAN_TORCH && (flags & KEY_REVERSING)) || Py_TYPE(native)->tp_as_mapping == NULL ||
        (subscript = Py_TYPE(native)->tp_as_mapping->mp_subscript) == NULL)
        goto done;
    *fell = 0;
    if (plan == PLAN_NUMPY && (flags & KEY_ONLY_INTS)) {
        PyObject *full = with_ellipsis(key);
        if (full == NULL)
            goto done;
        result = subscript(native, full);
        Py_DECREF(full);
    } else {
        result = subscript(native, key);
    }
    if (result == NULL)
        goto done; /* the framework's error: the Python method raises the same one */
    if (Py_TYPE(result) != Py_TYPE(native)) { /* another class (a subclass's result): the Python method */
        *fell = 1;
        goto done;
    }
    array = al_wrap(result);
done:
    Py_XDECREF(result);
    Py_DECREF(native);
    return array;
}

AL_COLD static PyObject *
getitem_python(PyObject *self, PyObject *key)
{
    PyObject *stack[2] = {self, key};
    return PyObject_Vectorcall(python_getitem, stack, 2, NULL);
}

/* Array.__getitem__(self, key), the method descriptor */
AL_HOT static PyObject *
getitem_method(PyObject *self, PyObject *key)
{
    int fell;
    PyObject *array = getitem_fast(self, key, &fell);
    return array == NULL && fell ? getitem_python(self, key) : array;
}

/* ``A[key]``: the class's mapping slot, without CPython's look-up of __getitem__ */
AL_HOT static PyObject *
getitem_slot(PyObject *self, PyObject *key)
{
    int fell;
    PyObject *array = getitem_fast(self, key, &fell);
    return array == NULL && fell ? generic_subscript(self, key) : array;
}

PyObject *
al_getitem_method(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *cls, *python, *doc;
    if (!PyArg_ParseTuple(args, "OOU:getitem_method", &cls, &python, &doc))
        return NULL;
    if (al_array_type == NULL || (PyObject *)al_array_type != cls)
        Py_RETURN_NONE; /* no compiled operator made the Array class known: the Python method stays */
    if (python_getitem != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "getitem_method: made once");
        return NULL;
    }
    PyObject *doc_bytes = PyUnicode_AsUTF8String(doc);
    if (doc_bytes == NULL)
        return NULL;
    python_getitem = Py_NewRef(python);
    getitem_def.ml_name = "__getitem__";
    getitem_def.ml_meth = getitem_method;
    getitem_def.ml_flags = METH_O;
    getitem_def.ml_doc = PyBytes_AS_STRING(doc_bytes); /* kept for the process's life */
    return PyDescr_NewMethod(al_array_type, &getitem_def);
}

PyObject *
al_fill_getitem(PyObject *Py_UNUSED(module), PyObject *cls)
{
    if ((PyTypeObject *)cls != al_array_type || python_getitem == NULL || al_array_type->tp_as_mapping == NULL)
        return PyBool_FromLong(0);
    PyObject *held = PyDict_GetItemString(al_array_type->tp_dict, "__getitem__"); /* borrowed */
    binaryfunc *slot = &al_array_type->tp_as_mapping->mp_subscript;
    if (held == NULL || !Py_IS_TYPE(held, &PyMethodDescr_Type) ||
        ((PyMethodDescrObject *)held)->d_method != &getitem_def || *slot == NULL)
        return PyBool_FromLong(0);
    if (*slot != getitem_slot) {
        generic_subscript = *slot;
        *slot = getitem_slot;
    }
    return PyBool_FromLong(1);
}

PyObject *
al_getitem_plan(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *cls;
    int plan;
    if (!PyArg_ParseTuple(args, "O!i:getitem_plan", &PyType_Type, &cls, &plan))
        return NULL;
    if (plan < PLAN_NONE || plan > PLAN_TORCH) {
        PyErr_SetString(PyExc_ValueError, "getitem_plan: plan 0 (none), 1 (numpy) or 2 (torch)");
        return NULL;
    }
    int k = 0;
    while (k < GETITEM_PLANS && plans[k].type != NULL && plans[k].type != (PyTypeObject *)cls)
        k++;
    if (k == GETITEM_PLANS)
        return PyBool_FromLong(plan == PLAN_NONE); /* full: the class stays on the Python path */
    if (plans[k].type == NULL) {
        if (plan == PLAN_NONE)
            Py_RETURN_TRUE;
        plans[k].type = (PyTypeObject *)Py_NewRef(cls);
    }
    plans[k].plan = plan;
    Py_RETURN_TRUE;
}

PyObject *
al_getitem_planned(PyObject *Py_UNUSED(module), PyObject *cls)
{
    return PyLong_FromLong(PyType_Check(cls) ? plan_of((PyTypeObject *)cls) : PLAN_NONE);
}

PyObject *
al_getitem_clear(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
    for (int k = 0; k < GETITEM_PLANS; k++) {
        Py_CLEAR(plans[k].type);
        plans[k].plan = PLAN_NONE;
    }
    Py_RETURN_NONE;
}
