/* arraylayer._dispatch: arraylayer.Array's operators (see _dispatch.c). */
#include "_dispatch.h"
#include <structmember.h>

/* Where an Array keeps ``_native``: a plain object slot (``__slots__``) is read and set at its offset. */
static void
find_native_slot(PyObject *cls)
{
    PyObject *descr = PyObject_GetAttr(cls, al_s_native);
    if (descr == NULL) {
        PyErr_Clear();
        return;
    }
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY))
            al_native_offset = member->offset;
    }
    Py_DECREF(descr);
}

/* ---- arraylayer.Array's operators ------------------------------------------------------------
 * One method descriptor per operator (a real method_descriptor, so that torch.compile can be told
 * to trace the Python method in its place). A call unwraps the operands (Arrays and Python
 * scalars only), replays the element-wise function's plan, and wraps the result in a new Array;
 * anything else runs the Python method. */

#define MAX_OPERATORS 48

typedef struct {
    Dispatcher *dispatcher;
    PyObject *fallback; /* the Python method */
    PyObject *name;
    int form;           /* 0: function(self, other); 1: function(other, self); 2: function(self) */
} Operator;

static Operator operators[MAX_OPERATORS];
static PyMethodDef operator_defs[MAX_OPERATORS];
static int operator_count;

static PyObject *
operator_fallback(Operator *op, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *stack[4];
    Py_ssize_t total = nargs + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    if (total > 3)
        return PyErr_Format(PyExc_TypeError, "%U takes at most 3 arguments", op->name);
    stack[0] = self;
    for (Py_ssize_t i = 0; i < total; i++)
        stack[i + 1] = args[i];
    return PyObject_Vectorcall(op->fallback, stack, nargs + 1, kwnames);
}

static PyObject *
operate(int index, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Operator *op = &operators[index];
    Dispatcher *d = op->dispatcher;
    PyObject *native = NULL, *other = NULL, *array = NULL, *operands[2] = {NULL, NULL};
    int fell = 1;
    if (kwnames != NULL || nargs != (op->form == 2 ? 0 : 1) || d->count == 0 || Py_TYPE(self) != al_array_type)
        goto fallback;
    if ((native = al_get_native(self)) == NULL)
        goto fallback;
    operands[0] = native;
    if (op->form != 2) {
        if ((other = al_operator_operand(args[0])) == NULL)
            goto fallback;
        operands[op->form == 0 ? 1 : 0] = other;
        operands[op->form == 0 ? 0 : 1] = native;
    }
    array = al_replay_wrapped(d, operands, native, &fell);
fallback:
    if (array == NULL && fell)
        array = operator_fallback(op, self, args, nargs, kwnames);
    Py_XDECREF(native);
    Py_XDECREF(other);
    return array;
}

#define OP(n, k) static PyObject *op_##n##_##k(PyObject *self, PyObject *const *args, Py_ssize_t nargs, \
    PyObject *kw) { return operate(8 * n + k, self, args, nargs, kw); }
#define OP8(n) OP(n, 0) OP(n, 1) OP(n, 2) OP(n, 3) OP(n, 4) OP(n, 5) OP(n, 6) OP(n, 7)
OP8(0) OP8(1) OP8(2) OP8(3) OP8(4) OP8(5)
typedef PyObject *(*operator_fn)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
#define FN8(n) op_##n##_0, op_##n##_1, op_##n##_2, op_##n##_3, op_##n##_4, op_##n##_5, op_##n##_6, op_##n##_7
static operator_fn operator_fns[MAX_OPERATORS] = {FN8(0), FN8(1), FN8(2), FN8(3), FN8(4), FN8(5)};

PyObject *
al_operator_method(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *cls, *name, *function, *fallback, *doc, *post;
    int form;
    if (!PyArg_ParseTuple(args, "OUOOiUO:operator_method", &cls, &name, &function, &fallback, &form, &doc, &post))
        return NULL;
    PyObject *dispatcher = PyCFunction_Check(function) ? PyCFunction_GET_SELF(function) : NULL;
    if (dispatcher == NULL || Py_TYPE(dispatcher) != &al_DispatcherType)
        Py_RETURN_NONE; /* not a compiled function: the Python method stays */
    if (!PyType_Check(cls) || form < 0 || form > 2 || ((Dispatcher *)dispatcher)->arity != (form == 2 ? 1 : 2)) {
        PyErr_SetString(PyExc_ValueError, "operator_method: a class, and a form matching the function");
        return NULL;
    }
    if (al_array_type != NULL && (PyObject *)al_array_type != cls) {
        PyErr_SetString(PyExc_ValueError, "operator_method: one Array class only");
        return NULL;
    }
    if (operator_count == MAX_OPERATORS) {
        PyErr_SetString(PyExc_RuntimeError, "operator_method: too many operators");
        return NULL;
    }
    Operator *op = &operators[operator_count];
    PyObject *doc_bytes = PyUnicode_AsUTF8String(doc);
    if (doc_bytes == NULL)
        return NULL;
    op->dispatcher = (Dispatcher *)Py_NewRef(dispatcher);
    op->fallback = Py_NewRef(fallback);
    op->name = Py_NewRef(name);
    op->form = form;
    operator_defs[operator_count].ml_name = PyUnicode_AsUTF8(name);
    operator_defs[operator_count].ml_meth = (PyCFunction)(void (*)(void))operator_fns[operator_count];
    operator_defs[operator_count].ml_flags = METH_FASTCALL | METH_KEYWORDS;
    operator_defs[operator_count].ml_doc = PyBytes_AS_STRING(doc_bytes); /* kept for the process's life */
    if (al_array_type == NULL)
        find_native_slot(cls);
    al_array_type = (PyTypeObject *)Py_NewRef(cls);
    Py_XSETREF(al_zero_d, Py_NewRef(post));
    return PyDescr_NewMethod(al_array_type, &operator_defs[operator_count++]);
}
