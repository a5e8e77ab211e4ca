/* arraylayer._dispatch: what a plan is keyed and guarded by (see _dispatch.c).
 *
 * The name of the promotion policy in force (a mixed plan holds only under the policy that made it),
 * an argument's native dtype (read through its class's C getter where it has one, or through the
 * attribute that holds it where the backend declares one), and JAX's weak-type guard. Every function
 * reads; none decides anything.
 */
#include "_dispatch.h"
#include <structmember.h>

static PyObject *policy_var;     /* ContextVar of the policy in force (arraylayer.dtypes.promotion) */
static PyObject *policy_setting; /* its Setting: .process when the variable is unset */
static PyObject *s_dtype, *s_weak_type, *s_name, *s_process;
static Py_ssize_t process_offset;  /* the offset of the Setting's ``process`` slot (0: read it by name) */
static PyTypeObject *setting_type; /* the class that offset belongs to */

int
al_keys_init(void)
{
    s_dtype = PyUnicode_InternFromString("dtype");
    s_weak_type = PyUnicode_InternFromString("weak_type");
    s_name = PyUnicode_InternFromString("name");
    s_process = PyUnicode_InternFromString("process");
    return (s_dtype && s_weak_type && s_name && s_process) ? 0 : -1;
}

PyObject *
al_configure(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *var, *setting;
    if (!PyArg_ParseTuple(args, "OO:configure", &var, &setting))
        return NULL;
    if (!PyContextVar_CheckExact(var)) {
        PyErr_SetString(PyExc_TypeError, "configure: the first argument must be a ContextVar");
        return NULL;
    }
    Py_XSETREF(policy_var, Py_NewRef(var));
    Py_XSETREF(policy_setting, Py_NewRef(setting));
    process_offset = 0; /* the setting's ``process`` slot, read directly where it is one */
    PyObject *descr = _PyType_Lookup(Py_TYPE(setting), s_process);
    if (descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
        ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX) {
        process_offset = ((PyMemberDescrObject *)descr)->d_member->offset;
        setting_type = Py_TYPE(setting);
    }
    Py_RETURN_NONE;
}

/* the last policy read and its name (forgotten by clear(), as a registry change calls it) */
static PyObject *last_policy, *last_policy_name;

void
al_forget_policy(void)
{
    Py_CLEAR(last_policy);
    Py_CLEAR(last_policy_name);
}

/* The name of the policy in force (new reference), or NULL with an exception set. */
PyObject *
al_current_policy(void)
{
    PyObject *value = NULL, *name;
    if (policy_var == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "arraylayer._dispatch is not configured");
        return NULL;
    }
    if (PyContextVar_Get(policy_var, NULL, &value) < 0)
        return NULL;
    if (value == NULL && process_offset > 0 && Py_TYPE(policy_setting) == setting_type)
        value = Py_XNewRef(*(PyObject **)((char *)policy_setting + process_offset));
    if (value == NULL && (value = PyObject_GetAttr(policy_setting, s_process)) == NULL)
        return NULL;
    if (value == last_policy) {
        Py_DECREF(value);
        return Py_NewRef(last_policy_name);
    }
    if ((name = PyObject_GetAttr(value, s_name)) != NULL) {
        Py_XSETREF(last_policy_name, Py_NewRef(name));
        Py_XSETREF(last_policy, value);
        return name;
    }
    Py_DECREF(value);
    return NULL;
}

/* -1: error; 1: the guard sends this call to the Python function; 0: it passes. Each array's
 * ``weak_type`` is read until the answer is known (a strong one passes GUARD_ALL_WEAK, a weak one
 * fails GUARD_ANY_WEAK): on JAX it is a Python property, ~0.15 us a read, and read from its holder (``aval``) where lookup() read the dtype there. */
int
al_weak_guard(int guard, PyObject *const *args, const Read *read, int n)
{
    int weak = 0;
    for (int i = 0; i < n; i++) {
        if (read->dtype[i] == NULL)
            continue; /* a Python scalar */
        PyObject *from = read->holder[i] == NULL ? args[i] : read->holder[i];
        PyObject *flag = PyObject_GetAttr(from, s_weak_type);
        if (flag == NULL)
            return -1;
        int truth = PyObject_IsTrue(flag);
        Py_DECREF(flag);
        if (truth < 0)
            return -1;
        if (truth && guard != GUARD_ALL_WEAK)
            return 1;
        if (!truth && guard == GUARD_ALL_WEAK)
            return 0;
        weak += truth;
    }
    return weak > 0; /* GUARD_ALL_WEAK: every array weak (and at least one array) */
}

/* ---- reading ``dtype`` --------------------------------------------------------------------------
 * Where a class reads its ``dtype`` with a C getter (NumPy's ndarray, torch's Tensor) and keeps the
 * generic attribute look-up, the getter is called directly: the same function the look-up would end
 * in, without the look-up (half of what this module adds to a call on NumPy). Where the backend
 * declared a holder for the class (hold(): JAX's ArrayImpl, whose ``dtype`` and ``weak_type`` are
 * Python properties returning ``self.aval.dtype`` / ``self.aval.weak_type``), the attribute is read
 * from the holder: the properties' own reads without their Python frames. A class is looked up once
 * per version of it (tp_version_tag changes whenever the class or a base is modified); other classes
 * (a Python property: TensorFlow) are read by name. */

DtypeReader al_readers[AL_READERS]; /* read by al_read_dtype() (_dispatch.h) */
static int reader_next;

#define HOLDERS 32 /* JAX alone has one array class and several tracer classes */
static PyObject *holders[HOLDERS][2]; /* (class, attribute name): see hold() */

PyObject *
al_hold(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *cls, *name;
    if (!PyArg_ParseTuple(args, "O!U:hold", &PyType_Type, &cls, &name))
        return NULL;
    int k = 0;
    while (k < HOLDERS && holders[k][0] != NULL && holders[k][0] != cls)
        k++;
    if (k == HOLDERS) /* full: the caller keeps this class's plans in Python only */
        Py_RETURN_FALSE;
    Py_INCREF(name);
    PyUnicode_InternInPlace(&name);
    Py_XSETREF(holders[k][0], Py_NewRef(cls));
    Py_XSETREF(holders[k][1], name);
    for (int r = 0; r < AL_READERS; r++) /* readers made before: made again on their next use */
        if (al_readers[r].type == (PyTypeObject *)cls) {
            al_readers[r].version = 0;
            al_readers[r].get = NULL;
        }
    Py_RETURN_TRUE;
}

AL_COLD static DtypeReader *
reader_for(PyTypeObject *t)
{
    DtypeReader *r = &al_readers[reader_next];
    PyObject *descr = _PyType_Lookup(t, s_dtype); /* what x.dtype's look-up finds on the class */
    if (descr == NULL) {
        PyErr_Clear();
        return NULL;
    }
    Py_INCREF(descr);
    Py_XSETREF(r->type, (PyTypeObject *)Py_NewRef(t));
    r->version = t->tp_version_tag; /* set by the look-up above; 0: none, never matched */
    r->get = NULL;
    r->holder = NULL;
    for (int k = 0; k < HOLDERS && holders[k][0] != NULL; k++)
        if (holders[k][0] == (PyObject *)t)
            r->holder = holders[k][1];
    if (r->holder == NULL && r->version != 0 && t->tp_getattro == PyObject_GenericGetAttr &&
        Py_IS_TYPE(descr, &PyGetSetDescr_Type)) {
        PyGetSetDef *def = ((PyGetSetDescrObject *)descr)->d_getset;
        r->get = def->get;
        r->closure = def->closure;
    }
    Py_DECREF(descr);
    reader_next = (reader_next + 1) % AL_READERS;
    return r;
}

/* al_read_dtype() where no reader with a C getter matched: a holder, a read by name, or a new reader */
PyObject *
al_read_dtype_slow(PyObject *x, PyObject **holder)
{
    PyTypeObject *t = Py_TYPE(x);
    DtypeReader *r = NULL;
    for (int k = 0; k < AL_READERS; k++) {
        if (al_readers[k].type == t && al_readers[k].version == t->tp_version_tag && t->tp_version_tag != 0) {
            r = &al_readers[k];
            break;
        }
    }
    if (r == NULL)
        r = reader_for(t);
    if (r != NULL && r->holder != NULL) {
        if ((*holder = PyObject_GetAttr(x, r->holder)) == NULL)
            return NULL;
        return PyObject_GetAttr(*holder, s_dtype);
    }
    if (r != NULL && r->get != NULL)
        return r->get(x, r->closure);
    return PyObject_GetAttr(x, s_dtype);
}
