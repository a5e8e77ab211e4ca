"""SciPy's array-API functions (scipy.special, scipy.stats, scipy.cluster.vq, scipy.fft) on
Arrays of every backend, compared with the same calls on NumPy arrays. SCIPY_ARRAY_API=1 is
set by tests/conftest.py before SciPy is first imported (the nox session sets it too)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

scipy = pytest.importorskip("scipy")
from scipy._lib import _array_api  # noqa: E402

if not _array_api.SCIPY_ARRAY_API:
    pytest.skip(f"SciPy was imported before SCIPY_ARRAY_API=1 was set ({os.environ.get('SCIPY_ARRAY_API')!r})",
                allow_module_level=True)

from scipy import fft, special, stats  # noqa: E402
from scipy.cluster import vq  # noqa: E402

RNG = np.random.default_rng(1)
U = RNG.random(30) * 0.9 + 0.05  # in (0, 1)
V = RNG.normal(size=30)
W = RNG.normal(size=30) * 2 + 0.5
M = RNG.normal(size=(8, 6))
P = np.abs(RNG.normal(size=10)) + 0.1
Q = np.abs(RNG.normal(size=10)) + 0.1
C = RNG.normal(size=16) + 1j * RNG.normal(size=16)
CODEBOOK = M[:3] * 0.5

# name -> (function, positional NumPy arguments, keyword options)
CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...], dict[str, Any]]] = {
    "special.erf": (special.erf, (V,), {}),
    "special.erfc": (special.erfc, (V,), {}),
    "special.erfinv": (special.erfinv, (U,), {}),
    "special.expit": (special.expit, (V,), {}),
    "special.logit": (special.logit, (U,), {}),
    "special.gammaln": (special.gammaln, (P,), {}),
    "special.ndtr": (special.ndtr, (V,), {}),
    "special.ndtri": (special.ndtri, (U,), {}),
    "special.log_ndtr": (special.log_ndtr, (V,), {}),
    "special.xlogy": (special.xlogy, (P, Q), {}),
    "special.entr": (special.entr, (P,), {}),
    "special.rel_entr": (special.rel_entr, (P, Q), {}),
    "special.i0e": (special.i0e, (V,), {}),
    "special.logsumexp": (special.logsumexp, (M,), {"axis": 1}),
    "special.softmax": (special.softmax, (M,), {"axis": 0}),
    "special.log_softmax": (special.log_softmax, (M,), {"axis": -1}),
    "stats.moment": (stats.moment, (M,), {"order": 3}),
    "stats.skew": (stats.skew, (M,), {}),
    "stats.kurtosis": (stats.kurtosis, (M,), {"axis": 1}),
    "stats.zscore": (stats.zscore, (M,), {}),
    "stats.sem": (stats.sem, (W,), {}),
    "stats.variation": (stats.variation, (P,), {}),
    "stats.gmean": (stats.gmean, (P,), {}),
    "stats.hmean": (stats.hmean, (P,), {}),
    "stats.entropy": (stats.entropy, (P, Q), {}),
    "stats.pearsonr": (lambda x, y: tuple(stats.pearsonr(x, y)), (V, W), {}),
    "stats.ttest_1samp": (lambda x: tuple(stats.ttest_1samp(x, 0.3)), (W,), {}),
    "stats.ttest_ind": (lambda x, y: tuple(stats.ttest_ind(x, y)), (V, W), {}),
    "stats.trim_mean": (stats.trim_mean, (W,), {"proportiontocut": 0.1}),
    "cluster.vq.whiten": (vq.whiten, (M,), {}),
    "cluster.vq.vq": (vq.vq, (M, CODEBOOK), {}),
    "fft.fft": (fft.fft, (C,), {}),
    "fft.ifft": (fft.ifft, (C,), {}),
    "fft.rfft": (fft.rfft, (V,), {}),
    "fft.irfft": (fft.irfft, (C[:9],), {}),
    "fft.fftn": (fft.fftn, (M,), {}),
    "fft.fftshift": (fft.fftshift, (M,), {}),
    "fft.dct": (fft.dct, (V,), {}),
}

# Cases that fail because of SciPy itself, with the reason (none known so far).
CLIENT_BUGS: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("name", list(CASES))
def test_scipy(name: str, client: Any) -> None:
    client.xfail_client_bug(CLIENT_BUGS, name)
    function, arguments, options = CASES[name]
    expected = function(*(client.host(a) for a in arguments), **options)
    result = function(*(client.array(a) for a in arguments), **options)
    client.close(result, expected)
