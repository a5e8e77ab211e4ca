/* arraylayer._dispatch: what its C files share (see _dispatch.c). */
#ifndef ARRAYLAYER_DISPATCH_H
#define ARRAYLAYER_DISPATCH_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The functions below are the extension's own: hidden, so that the compiler calls them directly (or
 * inlines them) instead of through the shared library's PLT, as it must for an exported symbol that
 * another library could interpose. PyInit__dispatch stays exported (PyMODINIT_FUNC says so). */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* hot: the replay path, placed together (.text.hot) so that a call touches few cache lines of code;
 * cold: the ways out of it (the Python function, CPython's protocol), placed apart */
#if defined(__GNUC__)
#define AL_HOT __attribute__((hot))
#define AL_COLD __attribute__((cold))
#else
#define AL_HOT
#define AL_COLD
#endif

#define SLOTS 16

enum { GUARD_NONE = 0, GUARD_ALL_WEAK = 1, GUARD_ANY_WEAK = 2 };

typedef struct {
    PyObject *t1, *d1, *t2, *d2; /* d NULL: a Python scalar (no dtype) */
    PyObject *policy;            /* NULL: any policy */
    PyObject *run, *cast1, *cast2;
    int guard;
} Entry;

typedef struct Dispatcher {
    PyObject_HEAD
    PyObject *dict;
    PyObject *fallback; /* the Python function: every case this object does not replay */
    PyObject *public;   /* the builtin function handed to users */
    PyObject *doc;      /* bytes holding def.ml_doc */
    PyObject *name;     /* str holding def.ml_name */
    int arity;
    int count, next;
    Entry entries[SLOTS];
    PyMethodDef def;
    struct Dispatcher *plans_of; /* whose plans this one replays (itself when NULL) */
    int wraps;                   /* 1: arraylayer.Array in (unwrapped), Array out */
} Dispatcher;

extern PyTypeObject al_DispatcherType;
extern PyTypeObject *al_array_type; /* arraylayer.Array, set with its first compiled operator */
extern PyObject *al_zero_d;         /* the post-step for a result of another class than the operand's */
extern PyObject *al_s_native;       /* "_native" */
extern Py_ssize_t al_native_offset; /* the offset of Array's ``_native`` slot (0: read it by name) */

/* an Array's native (new reference; ``array`` of class al_array_type exactly), or NULL, no exception */
PyObject *al_get_native(PyObject *array);
static inline int
is_scalar_type(PyTypeObject *t)
{
    return t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type || t == &PyComplex_Type;
}
/* other's native form (new reference) for the fast path: an Array's, a Python scalar itself; or NULL */
PyObject *al_operator_operand(PyObject *other);
/* a plan replayed on unwrapped operands, its result in a new Array; NULL with *fell: the Python path */
PyObject *al_replay_wrapped(Dispatcher *d, PyObject *const *natives, PyObject *like, int *fell);
/* a new Array holding ``native`` (new reference), or NULL with an exception set (_dispatch.c) */
PyObject *al_wrap(PyObject *native);
/* a new, empty Array (its slots NULL), from the released ones where there are any (_operators.c) */
PyObject *al_new_array(void);
/* operator_method(array_class, name, function, python_method, form, doc, zero_d) (_operators.c) */
PyObject *al_operator_method(PyObject *module, PyObject *args);
/* fill_slots(array_class): its number slots take the compiled operators directly (_operators.c) */
PyObject *al_fill_slots(PyObject *module, PyObject *cls);

/* _getitem.c: Array.__getitem__ for plain keys on the native classes the Python method planned */
PyObject *al_getitem_method(PyObject *module, PyObject *args); /* getitem_method(array_class, python_method, doc) */
PyObject *al_fill_getitem(PyObject *module, PyObject *cls);    /* fill_getitem(array_class): its mapping slot */
PyObject *al_getitem_plan(PyObject *module, PyObject *args);   /* getitem_plan(native_class, plan) */
PyObject *al_getitem_planned(PyObject *module, PyObject *cls); /* getitem_planned(native_class): its plan */
PyObject *al_getitem_clear(PyObject *module, PyObject *ignored); /* getitem_clear(): every plan forgotten */

/* _plan_keys.c: what a plan is keyed and guarded by */
int al_keys_init(void);                                      /* intern the attribute names; -1 on error */
PyObject *al_configure(PyObject *module, PyObject *args);    /* configure(policy_var, policy_setting) */
PyObject *al_current_policy(void);                           /* the policy's name (new ref) or NULL, error set */
void al_forget_policy(void);                                 /* clear(): the cached policy read is forgotten */
/* what lookup() read of each argument (new references): its dtype (NULL: a Python scalar), and the
 * holder it was read from where its class has one (see hold()) */
typedef struct {
    PyObject *dtype[2], *holder[2];
} Read;
int al_weak_guard(int guard, PyObject *const *args, const Read *read, int n); /* -1, 0 pass, 1 fall */

/* How x.dtype is read for a class (_plan_keys.c): its C getter called directly (NumPy, torch), from
 * the attribute that holds it (JAX's aval), or by name. A reader holds for one version of its class
 * (tp_version_tag, which CPython changes whenever the class or a base is modified); ``get`` is set
 * only with a valid version. */
#define AL_READERS 8
typedef struct {
    PyTypeObject *type; /* a strong reference */
    unsigned int version;
    getter get;         /* NULL: read from the holder or by name */
    void *closure;
    PyObject *holder;   /* the attribute that holds dtype and weak_type (see hold()), or NULL */
} DtypeReader;
extern DtypeReader al_readers[AL_READERS];
PyObject *al_read_dtype_slow(PyObject *x, PyObject **holder);

/* x.dtype (new reference) or NULL with an exception set; *holder: the holder it was read from (new
 * reference, for the weak-type guard), or left NULL. Inline: the C getter's case costs no call. */
static inline PyObject *
al_read_dtype(PyObject *x, PyObject **holder)
{
    PyTypeObject *t = Py_TYPE(x);
    for (int k = 0; k < AL_READERS; k++) {
        DtypeReader *r = &al_readers[k];
        if (r->type == t && r->version == t->tp_version_tag && r->get != NULL)
            return r->get(x, r->closure);
    }
    return al_read_dtype_slow(x, holder);
}
PyObject *al_hold(PyObject *module, PyObject *args);         /* hold(cls, name): cls's dtype is x.name.dtype */

/* _promotion.c: promotion(fallback, dtype_class, policy_class, known_policies, doc): the compiled promote_types */
PyObject *al_promotion(PyObject *module, PyObject *args);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
