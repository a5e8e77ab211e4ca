"""keras.ops' math group and its core scatter family, written once over arraylayer's functions:
``top_k``/``in_top_k`` (``selection.py``), the segment reductions (``segments.py``), ``rsqrt``,
``erf``/``erfc``/``erfinv`` and ``logdet`` (``special.py``), ``stft``/``istft`` (``spectral.py``),
``scatter``/``scatter_update``/``slice_update`` (``scatter.py``), keras' core ``is_tensor``,
``saturate_cast`` and ``slice`` (``core.py``), ``einsum`` (``einsum.py``) and ``cdist``,
``extract_sequences``, ``view_as_complex``/``view_as_real`` (``tensors.py``), ``view`` (``bitview.py``) and
``rearrange`` (``rearrange.py``). docs/math.rst.

May import what ``arraylayer/models/`` may import, and ``models.nn``.
"""

from arraylayer.api.dispatch import accepting_wrapped as _accepting_wrapped
from arraylayer.models.mathops import bitview as _bitview
from arraylayer.models.mathops import core as _core
from arraylayer.models.mathops import einsum as _einsum
from arraylayer.models.mathops import scatter as _scatter
from arraylayer.models.mathops import rearrange as _rearrange
from arraylayer.models.mathops import segments as _segments
from arraylayer.models.mathops import selection as _selection
from arraylayer.models.mathops import special as _special
from arraylayer.models.mathops import spectral as _spectral
from arraylayer.models.mathops import tensors as _tensors

# arraylayer.Array in, Array out, as every public function
rsqrt = _accepting_wrapped(_special.rsqrt)
erf = _accepting_wrapped(_special.erf)
erfc = _accepting_wrapped(_special.erfc)
erfinv = _accepting_wrapped(_special.erfinv)
logdet = _accepting_wrapped(_special.logdet)
top_k = _accepting_wrapped(_selection.top_k)
in_top_k = _accepting_wrapped(_selection.in_top_k)
segment_sum = _accepting_wrapped(_segments.segment_sum)
segment_prod = _accepting_wrapped(_segments.segment_prod)
segment_max = _accepting_wrapped(_segments.segment_max)
segment_min = _accepting_wrapped(_segments.segment_min)
stft = _accepting_wrapped(_spectral.stft)
istft = _accepting_wrapped(_spectral.istft)
scatter = _accepting_wrapped(_scatter.scatter)
scatter_update = _accepting_wrapped(_scatter.scatter_update)
slice_update = _accepting_wrapped(_scatter.slice_update)
is_tensor = _core.is_tensor  # (not wrapped: an arraylayer.Array is a tensor as it is)
saturate_cast = _accepting_wrapped(_core.saturate_cast)
slice = _accepting_wrapped(_core.slice)  # noqa: A001 - keras' name
einsum = _accepting_wrapped(_einsum.einsum)
cdist = _accepting_wrapped(_tensors.cdist)
extract_sequences = _accepting_wrapped(_tensors.extract_sequences)
view_as_complex = _accepting_wrapped(_tensors.view_as_complex)
view_as_real = _accepting_wrapped(_tensors.view_as_real)
view = _accepting_wrapped(_bitview.view)
rearrange = _accepting_wrapped(_rearrange.rearrange)

__all__ = ["rsqrt", "erf", "erfc", "erfinv", "logdet", "top_k", "in_top_k", "segment_sum", "segment_prod",
           "segment_max", "segment_min", "stft", "istft", "scatter", "scatter_update", "slice_update", "is_tensor",
           "saturate_cast", "slice", "einsum", "cdist", "extract_sequences", "view_as_complex", "view_as_real", "view",
           "rearrange"]
