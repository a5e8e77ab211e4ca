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

AL_COLD static PyObject *
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

/* The compiled path of ``op`` on ``self`` and ``other_arg`` (NULL for a unary operator): a new Array;
 * NULL with *fell set: take the Python method; NULL without: an exception. */
AL_HOT static PyObject *
operate_fast(Operator *op, PyObject *self, PyObject *other_arg, int *fell)
{
    PyObject *native = NULL, *other = NULL, *array = NULL, *operands[2] = {NULL, NULL};
    *fell = 1;
    if (op->dispatcher->count == 0 || Py_TYPE(self) != al_array_type || (native = al_get_native(self)) == NULL)
        return NULL;
    operands[0] = native;
    if (op->form != 2) {
        if ((other = al_operator_operand(other_arg)) == NULL)
            goto done;
        operands[op->form == 0 ? 1 : 0] = other;
        operands[op->form == 0 ? 0 : 1] = native;
    }
    array = al_replay_wrapped(op->dispatcher, operands, native, fell);
done:
    Py_XDECREF(native);
    Py_XDECREF(other);
    return array;
}

AL_HOT static PyObject *
operate(int index, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Operator *op = &operators[index];
    PyObject *array = NULL;
    int fell = 1;
    if (kwnames == NULL && nargs == (op->form == 2 ? 0 : 1))
        array = operate_fast(op, self, nargs == 1 ? args[0] : NULL, &fell);
    if (array == NULL && fell)
        array = operator_fallback(op, self, args, nargs, kwnames);
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


/* ---- the class's number slots ------------------------------------------------------------------
 * ``A + B`` reaches a method through the class's generic slot (a look-up of ``__add__``, then the
 * call); fill_slots() sets the Array class's number slots to functions that take the compiled path
 * directly and hand everything else to the generic slot they replace, which runs the methods as
 * before. Setting an operator on the class (compiled_dispatch.prepare_for_dynamo does) makes
 * CPython put the generic slot back. Subclasses keep the generic slots. */

typedef struct {
    const char *name, *reflected; /* reflected NULL: a unary operator */
    size_t offset;                /* in PyNumberMethods */
    Operator *op, *rop;
    void *original;               /* the generic slot, shared by every class with these methods */
    PyObject *name_obj, *reflected_obj;
} NumberSlot;

#define SLOT(n, r, field) {n, r, offsetof(PyNumberMethods, field), NULL, NULL, NULL, NULL, NULL}
static NumberSlot number_slots[] = {
    SLOT("__add__", "__radd__", nb_add),
    SLOT("__sub__", "__rsub__", nb_subtract),
    SLOT("__mul__", "__rmul__", nb_multiply),
    SLOT("__truediv__", "__rtruediv__", nb_true_divide),
    SLOT("__floordiv__", "__rfloordiv__", nb_floor_divide),
    SLOT("__mod__", "__rmod__", nb_remainder),
    SLOT("__and__", "__rand__", nb_and),
    SLOT("__or__", "__ror__", nb_or),
    SLOT("__xor__", "__rxor__", nb_xor),
    SLOT("__lshift__", "__rlshift__", nb_lshift),
    SLOT("__rshift__", "__rrshift__", nb_rshift),
    SLOT("__neg__", NULL, nb_negative),
    SLOT("__pos__", NULL, nb_positive),
    SLOT("__abs__", NULL, nb_absolute),
    SLOT("__invert__", NULL, nb_invert),
    SLOT("__pow__", "__rpow__", nb_power), /* ternary: the compiled path when the modulo is None */
};
#define POWER 15
#define NUMBER_SLOTS ((int)(sizeof(number_slots) / sizeof(number_slots[0])))
static void *slot_functions[NUMBER_SLOTS];

/* whether class ``t`` answers slot ``k`` by its methods (the generic slot, or this file's) */
static int
by_methods(PyTypeObject *t, int k)
{
    if (t->tp_as_number == NULL)
        return 0;
    void *f = *(void **)((char *)t->tp_as_number + number_slots[k].offset);
    return f == number_slots[k].original || f == slot_functions[k];
}

/* type(self).<name>(self, *rest) (``self`` = stack[0], n arguments in all), or NotImplemented where
 * the class has no such method */
static PyObject *
call_method_n(PyObject *const *stack, Py_ssize_t n, PyObject *name)
{
    PyObject *self = stack[0], *f = _PyType_Lookup(Py_TYPE(self), name), *result;
    if (f == NULL)
        Py_RETURN_NOTIMPLEMENTED;
    Py_INCREF(f);
    if (PyType_HasFeature(Py_TYPE(f), Py_TPFLAGS_METHOD_DESCRIPTOR)) {
        result = PyObject_Vectorcall(f, stack, n, NULL);
    } else {
        descrgetfunc get = Py_TYPE(f)->tp_descr_get;
        PyObject *bound = get == NULL ? Py_NewRef(f) : get(f, self, (PyObject *)Py_TYPE(self));
        result = bound == NULL ? NULL : PyObject_Vectorcall(bound, stack + 1, n - 1, NULL);
        Py_XDECREF(bound);
    }
    Py_DECREF(f);
    return result;
}

static PyObject *
call_method(PyObject *self, PyObject *other, PyObject *name)
{
    PyObject *stack[2] = {self, other};
    return call_method_n(stack, 2, name);
}

/* CPython's protocol for a binary slot answered by methods (typeobject.c's SLOT1BINFULL), with this
 * file's slot counted as such a slot: the left method, else the right operand's reflected one (first
 * when its class is a subclass that overrides it). */
AL_COLD static PyObject *
by_protocol(int k, PyObject *left, PyObject *right)
{
    NumberSlot *s = &number_slots[k];
    PyObject *result;
    int other = !Py_IS_TYPE(left, Py_TYPE(right)) && by_methods(Py_TYPE(right), k);
    if (by_methods(Py_TYPE(left), k)) {
        if (other && PyType_IsSubtype(Py_TYPE(right), Py_TYPE(left))) {
            PyObject *mine = _PyType_Lookup(Py_TYPE(left), s->reflected_obj);
            PyObject *theirs = _PyType_Lookup(Py_TYPE(right), s->reflected_obj);
            if (theirs != NULL && theirs != mine) {
                if ((result = call_method(right, left, s->reflected_obj)) != Py_NotImplemented)
                    return result;
                Py_DECREF(result);
                other = 0;
            }
        }
        result = call_method(left, right, s->name_obj);
        if (result != Py_NotImplemented || Py_IS_TYPE(right, Py_TYPE(left)))
            return result;
        Py_DECREF(result);
    }
    if (other)
        return call_method(right, left, s->reflected_obj);
    Py_RETURN_NOTIMPLEMENTED;
}

AL_HOT static PyObject *
binary_slot(int k, PyObject *left, PyObject *right)
{
    NumberSlot *s = &number_slots[k];
    PyObject *array = NULL;
    int fell = 1;
    if (Py_TYPE(left) == al_array_type)
        array = operate_fast(s->op, left, right, &fell);
    else if (Py_TYPE(right) == al_array_type)
        array = operate_fast(s->rop, right, left, &fell);
    return array == NULL && fell ? by_protocol(k, left, right) : array;
}

AL_HOT static PyObject *
unary_slot(int k, PyObject *self)
{
    NumberSlot *s = &number_slots[k];
    PyObject *array = NULL;
    int fell = 1;
    if (Py_TYPE(self) == al_array_type)
        array = operate_fast(s->op, self, NULL, &fell);
    return array == NULL && fell ? ((unaryfunc)s->original)(self) : array; /* the generic one: the method */
}

AL_HOT static PyObject *
power_slot(PyObject *left, PyObject *right, PyObject *modulo)
{
    if (modulo != Py_None) { /* pow(A, B, m): as CPython's generic slot, left.__pow__ (no reflected form) */
        PyObject *stack[3] = {left, right, modulo};
        if (!by_methods(Py_TYPE(left), POWER))
            Py_RETURN_NOTIMPLEMENTED;
        return call_method_n(stack, 3, number_slots[POWER].name_obj);
    }
    return binary_slot(POWER, left, right);
}

#define B(k) AL_HOT static PyObject *slot_##k(PyObject *l, PyObject *r) { return binary_slot(k, l, r); }
#define U(k) AL_HOT static PyObject *slot_##k(PyObject *x) { return unary_slot(k, x); }
B(0) B(1) B(2) B(3) B(4) B(5) B(6) B(7) B(8) B(9) B(10) U(11) U(12) U(13) U(14)
static void *slot_functions[NUMBER_SLOTS] = {slot_0, slot_1, slot_2, slot_3, slot_4, slot_5, slot_6, slot_7,
                                             slot_8, slot_9, slot_10, slot_11, slot_12, slot_13, slot_14,
                                             power_slot};

/* ---- comparisons -------------------------------------------------------------------------------
 * ``A < B`` reaches the class's tp_richcompare; CPython's generic one looks ``__lt__`` up and calls
 * it. This one takes the compiled operator directly (indexed by Py_LT ... Py_GE) and hands
 * everything else to the generic one; CPython's do_richcompare keeps the reflected protocol. */

static const char *compare_names[6] = {"__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"};
static Operator *compare_ops[6];
static richcmpfunc generic_richcompare;

AL_HOT static PyObject *
richcompare_slot(PyObject *self, PyObject *other, int op)
{
    PyObject *array = NULL;
    int fell = 1;
    if (Py_TYPE(self) == al_array_type && op >= Py_LT && op <= Py_GE)
        array = operate_fast(compare_ops[op], self, other, &fell);
    return array == NULL && fell ? generic_richcompare(self, other, op) : array;
}

/* the compiled operator ``name`` as the class holds it now, or NULL */
static Operator *
installed(PyTypeObject *cls, const char *name)
{
    if (name == NULL)
        return NULL;
    PyObject *held = PyDict_GetItemString(cls->tp_dict, name); /* borrowed */
    for (int k = 0; k < operator_count; k++) {
        if (held != NULL && Py_IS_TYPE(held, &PyMethodDescr_Type) &&
            ((PyMethodDescrObject *)held)->d_method == &operator_defs[k])
            return &operators[k];
    }
    return NULL;
}

/* ---- the Array's deallocation ----------------------------------------------------------------------
 * CPython's deallocator of a class defined in Python weighs finalizers, weak references, a __dict__
 * and every base; an Array (``__slots__`` only, none of those) is its object slots cleared and its
 * memory freed. A subclass's own deallocator does its part, then calls this one, as its base's.
 * Up to FREE_ARRAYS released Arrays (of the class exactly, their slots empty, untracked) are kept for
 * al_new_array(), as CPython keeps floats: an operator's result then costs no allocator call. */

#define FREE_ARRAYS 16
static PyObject *free_arrays[FREE_ARRAYS];
static int free_count;
#define OBJECT_SLOTS 8
static Py_ssize_t slot_offsets[OBJECT_SLOTS]; /* where the class's object slots are (fill_dealloc) */
static int slot_count;

AL_HOT static void
array_dealloc(PyObject *self)
{
    PyTypeObject *cls = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_TRASHCAN_BEGIN(self, array_dealloc)
    for (int k = 0; k < slot_count; k++)
        Py_CLEAR(*(PyObject **)((char *)self + slot_offsets[k]));
    if (cls == al_array_type && free_count < FREE_ARRAYS)
        free_arrays[free_count++] = self;
    else
        cls->tp_free(self);
    Py_DECREF(cls); /* a kept Array holds no reference to its class; al_new_array() takes one */
    Py_TRASHCAN_END
}

AL_HOT PyObject *
al_new_array(void)
{
    if (free_count == 0)
        return al_array_type->tp_alloc(al_array_type, 0);
    PyObject *array = free_arrays[--free_count];
    _Py_NewReference(array);
    Py_INCREF(al_array_type);
    PyObject_GC_Track(array);
    return array;
}

/* array_dealloc in place of CPython's, where the class has nothing else for it to do */
static void
fill_dealloc(PyTypeObject *cls)
{
    if (cls->tp_dealloc == array_dealloc || cls->tp_finalize != NULL || cls->tp_del != NULL ||
        cls->tp_dictoffset != 0 || cls->tp_weaklistoffset != 0 || cls->tp_base != &PyBaseObject_Type ||
        !PyType_IS_GC(cls) || cls->tp_free != PyObject_GC_Del)
        return;
    int count = 0;
    for (PyMemberDef *m = cls->tp_members; m != NULL && m->name != NULL; m++) {
        if (m->type == T_OBJECT_EX && count == OBJECT_SLOTS)
            return; /* more object slots than this file keeps: CPython's deallocator stays */
        if (m->type == T_OBJECT_EX)
            slot_offsets[count++] = m->offset;
    }
    slot_count = count;
    cls->tp_dealloc = array_dealloc;
}

/* richcompare_slot in place of the generic one, where every comparison is a compiled operator: 1, else 0 */
static int
fill_richcompare(PyTypeObject *cls)
{
    Operator *ops[6];
    if (cls->tp_richcompare == NULL || cls->tp_richcompare == richcompare_slot)
        return 0;
    for (int k = 0; k < 6; k++) {
        if ((ops[k] = installed(cls, compare_names[k])) == NULL)
            return 0;
    }
    for (int k = 0; k < 6; k++)
        compare_ops[k] = ops[k];
    generic_richcompare = cls->tp_richcompare;
    cls->tp_richcompare = richcompare_slot;
    return 1;
}

PyObject *
al_fill_slots(PyObject *Py_UNUSED(module), PyObject *cls)
{
    int filled = 0;
    if ((PyTypeObject *)cls != al_array_type || al_array_type->tp_as_number == NULL)
        return PyLong_FromLong(0);
    fill_dealloc(al_array_type);
    filled += fill_richcompare(al_array_type);
    for (int k = 0; k < NUMBER_SLOTS; k++) {
        NumberSlot *s = &number_slots[k];
        void **slot = (void **)((char *)al_array_type->tp_as_number + s->offset);
        Operator *op = installed(al_array_type, s->name), *rop = installed(al_array_type, s->reflected);
        if (*slot == NULL || *slot == slot_functions[k] || op == NULL || (s->reflected != NULL && rop == NULL))
            continue;
        if (s->name_obj == NULL && ((s->name_obj = PyUnicode_InternFromString(s->name)) == NULL ||
                                    (s->reflected != NULL &&
                                     (s->reflected_obj = PyUnicode_InternFromString(s->reflected)) == NULL)))
            return NULL;
        s->op = op;
        s->rop = rop;
        s->original = *slot;
        *slot = slot_functions[k];
        filled++;
    }
    return PyLong_FromLong(filled);
}
