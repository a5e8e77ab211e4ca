"""Kernels: each backend's implementation of the Array API functions, for inputs already agreed.

One package per backend (``kernels/numpy``, ``kernels/jax``, ``kernels/torch``,
``kernels/tensorflow``, ``kernels/dask``), one module per Array API category inside it (or a
shared one: ``names.CATEGORY_MODULES`` says where each category is looked for), plus ``nn.py``
for arraylayer.models.nn. The package's ``__init__`` gathers every category's functions into
``KERNELS`` (name -> callable, ``names.collect_kernels``) and the dtype declarations into
``SUPPORTED`` / ``UNSUPPORTED``. The public functions in
``arraylayer/api/`` do everything that must be the same on every backend (promotion,
dtype inference, Python-scalar overflow checks, accumulator dtypes, index dtypes, error
messages); a kernel does only what is left: compute the Array API result with the
framework's own operations.

The contract a kernel relies on (what ``arraylayer/api`` guarantees):

* Array arguments are native arrays of this backend. In functions that combine several
  arrays (binary elementwise functions, ``where``, ``concat``, ``stack``, ``matmul``,
  ``searchsorted`` ...), they already share one dtype: the promoted one.
* A binary elementwise kernel may get a Python scalar (bool, int, float or complex) for
  one of ``x1``/``x2``; the other is then an array, whose dtype is the result's (for
  comparisons: the dtype both are compared in). The scalar fits that dtype. The kernel
  treats it as a value of the array's dtype (it never changes the result dtype).
* Functions whose Array API result is floating (``sqrt``, ``divide``, ``mean`` ...) get
  floating or complex inputs only: the api layer has already converted integers.
* ``dtype=`` is the framework's own dtype object, already validated and never ``None``
  in creation functions and in ``sum``/``prod``/``cumulative_*``/``trace`` (the api layer
  decides the accumulator dtype); kernels compute in it without overflow of the input dtype.
* ``device=`` is the framework's own device object, or ``None`` for the framework's default.
* ``shape`` arguments are tuples of ints; ``axis`` is as the Array API allows (int, tuple
  or None; negative values count from the end).

A kernel returns native arrays (a tuple of them for multi-output functions) with the
Array API's result dtype for its inputs: the input dtype, bool for comparisons and
predicates, the real dtype of ``abs``/``real``/``imag`` of complex inputs. Index-valued
results (``argmax``, ``nonzero``, ``unique_*`` indices and counts, ``argsort``,
``searchsorted``, ``count_nonzero``) may use any integer dtype: the api layer casts them
to the default index dtype.

A binary kernel that wraps a faster callable only to handle Python scalars (or a dtype it can
tell when planned) may expose ``kernel.arrays_plain(native_dtype)``: the callable that computes
it for two arrays of that dtype (the cast operands' dtype in a mixed plan); the api layer's
array plans then call it directly, so the wrapper costs nothing there. Such a kernel may also expose
``kernel.scalar_plain(native_dtype, scalar_class)``: the callable that computes it for an array of
that dtype beside a Python scalar of that class (already in range and of the converted type), or
None where only the wrapper does; the api layer's scalar plans then call it directly. A kernel
package may expose ``mixed_plain(kernel, native1, native2, native_compute)``: the callable that computes
``kernel`` on arrays of two dtypes exactly as on both cast to ``native_compute`` (the framework's own
promotion of the pair gives that dtype on every shape, and converts with one rounding, as the cast
does), or None; the api layer's mixed plans then call it on the uncast arrays.

Where the framework has no kernel for a valid dtype, the kernel computes in a wider dtype
and casts back when that is exact (TensorFlow ``bool`` add is a logical or); what is
still impossible is declared in ``UNSUPPORTED`` and raises UnsupportedDtypeError in the
api layer before the framework is called.

The folder ``arraylayer/kernels/`` owns each framework's implementation of the kernels; pure computation
on agreed inputs.

May import: the base modules, nothing but the base modules.
"""
