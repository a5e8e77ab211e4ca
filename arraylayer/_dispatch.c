/* arraylayer._dispatch: the compiled replay of the element-wise plans.
 *
 * It holds no semantics. A Dispatcher belongs to one element-wise function; the Python planner
 * (arraylayer/api/elementwise.py) stores its plans here as data, keyed by the identity of the
 * arguments' classes and native dtypes (and, for mixed cases, the name of the promotion policy in
 * force). A call that matches a stored plan runs it: optional weak-type guard, optional casts,
 * the native callable. Anything else, and any exception on the way, goes to the Python function,
 * which decides (and raises) as it would without this module. clear() forgets every plan.
 *
 * Plain C against CPython's API: no build tool beyond a C compiler, no other dependency.
 */
#include "_dispatch.h"
#include <structmember.h>

PyObject *al_s_native;
Py_ssize_t al_native_offset; /* the offset of Array's ``_native`` slot (0: read it by name) */
PyTypeObject *al_array_type; /* arraylayer.Array, set with its first compiled operator */
PyObject *al_zero_d;         /* the post-step for a result of another class than the operand's */

static void
entry_clear(Entry *e)
{
    Py_CLEAR(e->t1); Py_CLEAR(e->d1); Py_CLEAR(e->t2); Py_CLEAR(e->d2); Py_CLEAR(e->policy);
    Py_CLEAR(e->run); Py_CLEAR(e->cast1); Py_CLEAR(e->cast2);
    e->guard = GUARD_NONE;
}

AL_COLD static PyObject *
call_fallback(Dispatcher *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return PyObject_Vectorcall(self->fallback, args, nargs, kwnames);
}

static inline void
read_clear(Read *read)
{
    Py_XDECREF(read->dtype[0]);
    Py_XDECREF(read->dtype[1]);
    Py_XDECREF(read->holder[0]);
    Py_XDECREF(read->holder[1]);
}

/* The plan for these arguments, or NULL (nothing planned, or an error: cleared). */
AL_HOT static Entry *
lookup(Dispatcher *self, PyObject *const *args, Read *read)
{
    int n = self->arity;
    PyObject *types[2] = {NULL, NULL};
    PyObject *policy = NULL;
    Entry *found = NULL;
    for (int i = 0; i < n; i++) {
        PyTypeObject *t = Py_TYPE(args[i]);
        types[i] = (PyObject *)t;
        if (is_scalar_type(t))
            continue;
        if ((read->dtype[i] = al_read_dtype(args[i], &read->holder[i])) == NULL) {
            PyErr_Clear();
            return NULL;
        }
    }
    for (int k = 0; k < self->count; k++) {
        Entry *e = &self->entries[k];
        if (e->t1 != types[0] || e->d1 != read->dtype[0] || e->t2 != types[1] || e->d2 != read->dtype[1])
            continue;
        if (e->policy != NULL) {
            if (policy == NULL && (policy = al_current_policy()) == NULL) {
                PyErr_Clear();
                return NULL;
            }
            if (policy != e->policy)
                continue;
        }
        found = e;
        break;
    }
    Py_XDECREF(policy);
    return found;
}

/* The plan's result; NULL with an exception set, or NULL with *declined set when its guard
 * sends the call to the Python function. */
AL_HOT static PyObject *
replay(Dispatcher *self, Entry *e, PyObject *const *args, const Read *read, int *declined)
{
    if (e->guard == GUARD_NONE && e->cast1 == NULL && e->cast2 == NULL) { /* the callable on the arguments */
        PyObject *run = Py_NewRef(e->run), *result = PyObject_Vectorcall(run, args, self->arity, NULL);
        Py_DECREF(run);
        return result;
    }
    /* the plan's own references: Python code run below (a guard, a cast) may clear the entry */
    PyObject *run = Py_NewRef(e->run), *casts[2] = {Py_XNewRef(e->cast1), Py_XNewRef(e->cast2)};
    PyObject *operands[2] = {NULL, NULL}, *result = NULL;
    int n = self->arity, guard = e->guard;
    if (guard != GUARD_NONE) {
        int fall = al_weak_guard(guard, args, read, n);
        if (fall != 0) {
            *declined = fall > 0;
            goto done;
        }
    }
    for (int i = 0; i < n; i++) {
        if (casts[i] == NULL) {
            operands[i] = Py_NewRef(args[i]);
        } else if (PyTuple_CheckExact(casts[i])) { /* (name, argument): args[i].name(argument) */
            PyObject *stack[2] = {args[i], PyTuple_GET_ITEM(casts[i], 1)};
            operands[i] = PyObject_VectorcallMethod(PyTuple_GET_ITEM(casts[i], 0), stack, 2, NULL);
        } else {
            operands[i] = PyObject_CallOneArg(casts[i], args[i]);
        }
        if (operands[i] == NULL)
            goto done;
    }
    result = PyObject_Vectorcall(run, operands, n, NULL);
done:
    Py_XDECREF(operands[0]);
    Py_XDECREF(operands[1]);
    Py_DECREF(run);
    Py_XDECREF(casts[0]);
    Py_XDECREF(casts[1]);
    return result;
}

/* an Array's native (new reference), or NULL with no exception set */
AL_HOT PyObject *
al_get_native(PyObject *array)
{
    if (al_native_offset > 0) {
        PyObject *native = *(PyObject **)((char *)array + al_native_offset);
        return native == NULL ? NULL : Py_NewRef(native);
    }
    PyObject *native = PyObject_GetAttr(array, al_s_native);
    if (native == NULL)
        PyErr_Clear();
    return native;
}

/* other's native form (new reference) for the fast path, or NULL (no exception) for the Python method */
AL_HOT PyObject *
al_operator_operand(PyObject *other)
{
    if (Py_TYPE(other) == al_array_type) {
        return al_get_native(other);
    }
    return is_scalar_type(Py_TYPE(other)) ? Py_NewRef(other) : NULL;
}

/* a new Array holding ``native`` (a new reference to it), or NULL with an exception set */
AL_HOT PyObject *
al_wrap(PyObject *native)
{
    PyObject *array = al_new_array();
    if (array == NULL)
        return NULL;
    if (al_native_offset > 0) /* the slot of a new object is empty: the reference goes there */
        *(PyObject **)((char *)array + al_native_offset) = Py_NewRef(native);
    else if (PyObject_SetAttr(array, al_s_native, native) < 0)
        Py_CLEAR(array);
    return array;
}

/* The plan of ``d`` for the unwrapped ``natives`` replayed, its result wrapped in a new Array (``like``:
 * the native whose class the result should have). NULL with *fell set: take the Python function. */
AL_HOT PyObject *
al_replay_wrapped(Dispatcher *d, PyObject *const *natives, PyObject *like, int *fell)
{
    Read read = {{NULL, NULL}, {NULL, NULL}};
    PyObject *result = NULL, *array = NULL;
    int declined = 0;
    *fell = 1;
    Entry *e = lookup(d, natives, &read);
    if (e == NULL)
        goto done;
    if ((result = replay(d, e, natives, &read, &declined)) == NULL) {
        if (!declined && !PyErr_ExceptionMatches(PyExc_Exception))
            *fell = 0;
        else
            PyErr_Clear();
        goto done;
    }
    *fell = 0;
    if (Py_TYPE(result) != Py_TYPE(like)) {
        Py_SETREF(result, PyObject_CallOneArg(al_zero_d, result));
        if (result == NULL)
            goto done;
    }
    array = al_wrap(result);
done:
    Py_XDECREF(result);
    read_clear(&read);
    return array;
}

/* A dispatcher with ``wraps``: Arrays and Python scalars unwrapped, the plan replayed, an Array out. */
AL_HOT static PyObject *
dispatch_wrapped(Dispatcher *self, Dispatcher *source, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *natives[2] = {NULL, NULL}, *like = NULL, *array = NULL;
    int fell = 1;
    if (al_array_type == NULL)
        goto fallback;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if ((natives[i] = al_operator_operand(args[i])) == NULL)
            goto fallback;
        if (like == NULL && Py_TYPE(args[i]) == al_array_type)
            like = natives[i];
    }
    if (like != NULL)
        array = al_replay_wrapped(source, natives, like, &fell);
fallback:
    if (array == NULL && fell)
        array = call_fallback(self, args, nargs, NULL);
    Py_XDECREF(natives[0]);
    Py_XDECREF(natives[1]);
    return array;
}

/* METH_FASTCALL | METH_KEYWORDS body of the public function. */
AL_HOT static PyObject *
dispatch(PyObject *obj, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Dispatcher *self = (Dispatcher *)obj, *source = self->plans_of == NULL ? self : self->plans_of;
    Read read = {{NULL, NULL}, {NULL, NULL}};
    PyObject *result = NULL;
    if (nargs != self->arity || kwnames != NULL || source->count == 0)
        return call_fallback(self, args, nargs, kwnames);
    if (self->wraps || (al_array_type != NULL && (Py_TYPE(args[0]) == al_array_type ||
                                               (nargs == 2 && Py_TYPE(args[1]) == al_array_type))))
        return dispatch_wrapped(self, source, args, nargs); /* Arrays in, an Array out */
    Entry *e = lookup(self, args, &read);
    if (e != NULL) {
        int declined = 0; /* a guard sent the call to the Python function */
        result = replay(self, e, args, &read, &declined);
        if (result == NULL && !declined) {
            if (!PyErr_ExceptionMatches(PyExc_Exception))
                goto done;
            PyErr_Clear(); /* the Python function raises arraylayer's error for the same call */
        }
    }
    if (result == NULL)
        result = call_fallback(self, args, nargs, NULL);
done:
    read_clear(&read);
    return result;
}

static PyObject *
none_to_null(PyObject *x)
{
    return x == Py_None ? NULL : x;
}

PyDoc_STRVAR(store_doc,
"store(type1, dtype1, type2, dtype2, policy, run, cast1, cast2, guard)\n--\n\n"
"Store one plan. dtypeN None: argument N is a Python scalar of class typeN. policy None: any\n"
"policy. castN None: no cast; a (name, argument) tuple: the method call x.name(argument). guard: 0 none, 1 decline when every array argument is weak-typed,\n"
"2 when any is. For one-argument functions type2, dtype2 and cast2 are None. When full, the\n"
"oldest plan is replaced.");

static PyObject *
Dispatcher_store(Dispatcher *self, PyObject *args)
{
    PyObject *t1, *d1, *t2, *d2, *policy, *run, *cast1, *cast2;
    int guard;
    if (!PyArg_ParseTuple(args, "OOOOOOOOi:store", &t1, &d1, &t2, &d2, &policy, &run, &cast1, &cast2, &guard))
        return NULL;
    if (!PyType_Check(t1) || (self->arity == 2 && !PyType_Check(t2)) || !PyCallable_Check(run)) {
        PyErr_SetString(PyExc_TypeError, "store: type1/type2 must be classes and run callable");
        return NULL;
    }
    PyObject *casts[2] = {cast1, cast2};
    for (int i = 0; i < 2; i++) {
        if (PyTuple_CheckExact(casts[i]) && (PyTuple_GET_SIZE(casts[i]) != 2 ||
                                             !PyUnicode_CheckExact(PyTuple_GET_ITEM(casts[i], 0)))) {
            PyErr_SetString(PyExc_TypeError, "store: a cast tuple must be (method name, argument)");
            return NULL;
        }
    }
    Entry *e = &self->entries[self->next];
    entry_clear(e);
    e->t1 = Py_NewRef(t1);
    e->d1 = Py_XNewRef(none_to_null(d1));
    e->t2 = Py_XNewRef(none_to_null(t2));
    e->d2 = Py_XNewRef(none_to_null(d2));
    e->policy = Py_XNewRef(none_to_null(policy));
    e->run = Py_NewRef(run);
    e->cast1 = Py_XNewRef(none_to_null(cast1));
    e->cast2 = Py_XNewRef(none_to_null(cast2));
    e->guard = guard;
    self->next = (self->next + 1) % SLOTS;
    if (self->count < SLOTS)
        self->count++;
    Py_RETURN_NONE;
}

static PyObject *
Dispatcher_clear_plans(Dispatcher *self, PyObject *Py_UNUSED(ignored))
{
    for (int k = 0; k < SLOTS; k++)
        entry_clear(&self->entries[k]);
    self->count = self->next = 0;
    al_forget_policy();
    Py_RETURN_NONE;
}

static PyObject *
Dispatcher_size(Dispatcher *self, PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromLong(self->count);
}

static int
Dispatcher_init(Dispatcher *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"fallback", "name", "doc", "arity", "module", "plans_of", "wraps", NULL};
    PyObject *fallback, *name, *doc, *module, *plans_of = Py_None;
    int arity, wraps = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OUUiU|Op:Dispatcher", keywords, &fallback, &name, &doc, &arity,
                                     &module, &plans_of, &wraps))
        return -1;
    if (plans_of != Py_None && (Py_TYPE(plans_of) != Py_TYPE(self) || ((Dispatcher *)plans_of)->arity != arity)) {
        PyErr_SetString(PyExc_TypeError, "Dispatcher: plans_of must be a Dispatcher of the same arity");
        return -1;
    }
    if (arity != 1 && arity != 2) {
        PyErr_SetString(PyExc_ValueError, "Dispatcher: arity must be 1 or 2");
        return -1;
    }
    if (self->public != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Dispatcher: already initialised");
        return -1;
    }
    Py_XSETREF(self->fallback, Py_NewRef(fallback));
    Py_XSETREF(self->name, Py_NewRef(name));
    Py_XSETREF(self->doc, PyUnicode_AsUTF8String(doc));
    if (self->doc == NULL)
        return -1;
    self->arity = arity;
    self->wraps = wraps;
    if (plans_of != Py_None)
        self->plans_of = (Dispatcher *)Py_NewRef(plans_of);
    self->def.ml_name = PyUnicode_AsUTF8(self->name);
    if (self->def.ml_name == NULL)
        return -1;
    self->def.ml_meth = (PyCFunction)(void (*)(void))dispatch;
    self->def.ml_flags = METH_FASTCALL | METH_KEYWORDS;
    self->def.ml_doc = PyBytes_AS_STRING(self->doc);
    self->public = PyCFunction_NewEx(&self->def, (PyObject *)self, module);
    return self->public == NULL ? -1 : 0;
}

static int
Dispatcher_traverse(Dispatcher *self, visitproc visit, void *arg)
{
    Py_VISIT(self->dict);
    Py_VISIT(self->fallback);
    Py_VISIT(self->public);
    Py_VISIT((PyObject *)self->plans_of);
    for (int k = 0; k < SLOTS; k++) {
        Entry *e = &self->entries[k];
        Py_VISIT(e->t1); Py_VISIT(e->d1); Py_VISIT(e->t2); Py_VISIT(e->d2); Py_VISIT(e->policy);
        Py_VISIT(e->run); Py_VISIT(e->cast1); Py_VISIT(e->cast2);
    }
    return 0;
}

static int
Dispatcher_clear(Dispatcher *self)
{
    Py_CLEAR(self->dict);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->public);
    Py_CLEAR(self->plans_of);
    for (int k = 0; k < SLOTS; k++)
        entry_clear(&self->entries[k]);
    self->count = self->next = 0;
    return 0;
}

static void
Dispatcher_dealloc(Dispatcher *self)
{
    PyObject_GC_UnTrack(self);
    Dispatcher_clear(self);
    Py_CLEAR(self->doc);
    Py_CLEAR(self->name);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Dispatcher_methods[] = {
    {"store", (PyCFunction)Dispatcher_store, METH_VARARGS, store_doc},
    {"clear", (PyCFunction)Dispatcher_clear_plans, METH_NOARGS, "Forget every stored plan."},
    {"size", (PyCFunction)Dispatcher_size, METH_NOARGS, "How many plans are stored."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Dispatcher_members[] = {
    {"public", T_OBJECT, offsetof(Dispatcher, public), READONLY, "the function users call"},
    {"fallback", T_OBJECT, offsetof(Dispatcher, fallback), READONLY, "the Python function"},
    {"arity", T_INT, offsetof(Dispatcher, arity), READONLY, "how many arguments the function takes"},
    {"__dictoffset__", T_PYSSIZET, offsetof(Dispatcher, dict), READONLY},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject al_DispatcherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "arraylayer._dispatch.Dispatcher",
    .tp_doc = PyDoc_STR("Dispatcher(fallback, name, doc, arity, module): the compiled plans of one "
                        "element-wise function; .public is the function users call."),
    .tp_basicsize = sizeof(Dispatcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Dispatcher_init,
    .tp_dealloc = (destructor)Dispatcher_dealloc,
    .tp_traverse = (traverseproc)Dispatcher_traverse,
    .tp_clear = (inquiry)Dispatcher_clear,
    .tp_methods = Dispatcher_methods,
    .tp_members = Dispatcher_members,
    .tp_dictoffset = offsetof(Dispatcher, dict),
};


static PyMethodDef module_methods[] = {
    {"configure", al_configure, METH_VARARGS,
     "configure(policy_var, policy_setting): where the policy in force is read (its .name)."},
    {"hold", al_hold, METH_VARARGS,
     "hold(cls, name): instances of cls hold their dtype and weak_type in attribute name (read x.name.dtype)."},
    {"operator_method", al_operator_method, METH_VARARGS,
     "operator_method(array_class, name, function, python_method, form, doc, zero_d): the compiled method "
     "(form 0: function(self, other), 1: function(other, self), 2: function(self)), or None when function "
     "is not compiled."},
    {"promotion", al_promotion, METH_VARARGS,
     "promotion(fallback, dtype_class, policy_class, known_policies, doc): promote_types of two Dtypes read "
     "from the active policy's table, fallback for everything else (None when the classes have no such slots)."},
    {"fill_slots", al_fill_slots, METH_O,
     "fill_slots(array_class): set its number and comparison slots to the compiled operators (how many were set)."},
#ifndef AL_WITHOUT_GETITEM /* defined: a build as before _getitem.c (tests/test_getitem_paths.py makes one) */
    {"getitem_method", al_getitem_method, METH_VARARGS,
     "getitem_method(array_class, python_method, doc): the compiled __getitem__ (plain keys on planned native "
     "classes; python_method for everything else), or None when no compiled operator made the class known."},
    {"fill_getitem", al_fill_getitem, METH_O,
     "fill_getitem(array_class): its mapping slot takes the compiled __getitem__ directly (whether it was set)."},
    {"getitem_plan", al_getitem_plan, METH_VARARGS,
     "getitem_plan(native_class, plan): plain keys on native_class take the compiled path (plan 1: NumPy, "
     "2: torch; 0: the Python method). False when the table is full."},
    {"getitem_planned", al_getitem_planned, METH_O,
     "getitem_planned(native_class): its plan (0: the Python method, 1: NumPy, 2: torch)."},
    {"getitem_clear", al_getitem_clear, METH_NOARGS, "getitem_clear(): forget every getitem plan."},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef dispatch_module = {
    PyModuleDef_HEAD_INIT, "arraylayer._dispatch",
    "The compiled replay of arraylayer's element-wise plans (no semantics: see arraylayer/dispatch_loader.py).",
    -1, module_methods,
};

PyMODINIT_FUNC
PyInit__dispatch(void)
{
    if (PyType_Ready(&al_DispatcherType) < 0)
        return NULL;
    al_s_native = PyUnicode_InternFromString("_native");
    if (al_keys_init() < 0 || !al_s_native)
        return NULL;
    PyObject *m = PyModule_Create(&dispatch_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Dispatcher", (PyObject *)&al_DispatcherType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
