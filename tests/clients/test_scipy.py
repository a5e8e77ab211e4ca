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

from scipy import fft, integrate, interpolate, ndimage, signal, special, stats  # noqa: E402
from scipy.cluster import hierarchy, vq  # noqa: E402

RNG = np.random.default_rng(1)
U = RNG.random(30) * 0.9 + 0.05  # in (0, 1)
V = RNG.normal(size=30)
W = RNG.normal(size=30) * 2 + 0.5
M = RNG.normal(size=(8, 6))
P = np.abs(RNG.normal(size=10)) + 0.1
Q = np.abs(RNG.normal(size=10)) + 0.1
C = RNG.normal(size=16) + 1j * RNG.normal(size=16)
CODEBOOK = M[:3] * 0.5
G = RNG.normal(size=(3, 12)) + np.array([[0.0], [0.4], [1.0]])  # three groups
ANGLES = RNG.uniform(-np.pi, np.pi, size=20)
PVALUES = np.array([0.01, 0.2, 0.03, 0.5, 0.04, 0.001])
COUNTS = np.array([18.0, 22.0, 25.0, 15.0, 20.0])
KERNEL = np.array([0.25, -0.5, 1.0, 0.5, 0.1])
KERNEL2 = np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.5, 1.0, 0.0]])
BUTTER = signal.butter(3, 0.2)  # (b, a)
SOS = signal.butter(4, 0.3, output="sos")
FIR = signal.firwin(15, 0.3)  # linear phase, for minimum_phase
KNOTS = np.cumsum(P)  # increasing
POINTS = RNG.random((12, 2))
QUERY = RNG.random((5, 2))
COORDS = np.array([[0.5, 2.0, 6.5], [1.0, 3.3, 4.0]])
MODES = np.round(M * 1.5)

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
    "special.gamma": (special.gamma, (W,), {}),
    "special.psi": (special.psi, (P,), {}),
    "special.betainc": (special.betainc, (P, Q, U[:10]), {}),
    "special.gammainc": (special.gammainc, (P, Q), {}),
    "special.stdtr": (special.stdtr, (P * 5, V[:10]), {}),
    "special.chdtr": (special.chdtr, (P * 3, Q), {}),
    "special.i1e": (special.i1e, (V,), {}),
    "special.cbrt": (special.cbrt, (V,), {}),
    "special.sinc": (special.sinc, (V,), {}),
    "special.xlog1py": (special.xlog1py, (P, Q), {}),
    "special.kl_div": (special.kl_div, (P, Q), {}),
    "special.binom": (special.binom, (P * 10, Q), {}),
    "special.zeta": (special.zeta, (P + 1.5,), {}),
    "special.spence": (special.spence, (P,), {}),
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
    "stats.describe": (lambda x: tuple(stats.describe(x, axis=1)), (M,), {}),
    "stats.pmean": (stats.pmean, (P,), {"p": 1.5}),
    "stats.tmean": (stats.tmean, (W,), {"limits": (-1.0, 2.0)}),
    "stats.tvar": (stats.tvar, (W,), {"limits": (-1.0, 2.0)}),
    "stats.tstd": (stats.tstd, (W,), {}),
    "stats.tmin": (stats.tmin, (W,), {"lowerlimit": 0.0}),
    "stats.tmax": (stats.tmax, (W,), {"upperlimit": 1.0}),
    "stats.tsem": (stats.tsem, (W,), {}),
    "stats.iqr": (stats.iqr, (M,), {"axis": 0}),
    "stats.median_abs_deviation": (stats.median_abs_deviation, (W,), {"scale": "normal"}),
    "stats.quantile": (stats.quantile, (W, np.array([0.1, 0.5, 0.9])), {}),
    "stats.rankdata": (stats.rankdata, (np.round(W, 1),), {}),
    "stats.gstd": (stats.gstd, (P,), {}),
    "stats.gzscore": (stats.gzscore, (P,), {}),
    "stats.zmap": (stats.zmap, (V, W), {}),
    "stats.lmoment": (stats.lmoment, (W,), {}),
    "stats.circmean": (stats.circmean, (ANGLES,), {}),
    "stats.circvar": (stats.circvar, (ANGLES,), {}),
    "stats.ttest_rel": (lambda x, y: tuple(stats.ttest_rel(x, y)), (V, W), {}),
    "stats.skewtest": (lambda x: tuple(stats.skewtest(x)), (W,), {}),
    "stats.kurtosistest": (lambda x: tuple(stats.kurtosistest(x)), (W,), {}),
    "stats.normaltest": (lambda x: tuple(stats.normaltest(x)), (W,), {}),
    "stats.jarque_bera": (lambda x: tuple(stats.jarque_bera(x)), (W,), {}),
    "stats.chisquare": (lambda x: tuple(stats.chisquare(x)), (COUNTS,), {}),
    "stats.power_divergence": (lambda x: tuple(stats.power_divergence(x, lambda_="log-likelihood")), (COUNTS,), {}),
    "stats.f_oneway": (lambda g: tuple(stats.f_oneway(g[0], g[1], g[2])), (G,), {}),
    "stats.levene": (lambda g: tuple(stats.levene(g[0], g[1], g[2])), (G,), {}),
    "stats.combine_pvalues": (lambda p: tuple(stats.combine_pvalues(p)), (PVALUES,), {}),
    "stats.false_discovery_control": (stats.false_discovery_control, (PVALUES,), {}),
    "stats.boxcox_llf": (stats.boxcox_llf, (np.array(0.5), P), {}),
    "cluster.vq.whiten": (vq.whiten, (M,), {}),
    "cluster.vq.vq": (vq.vq, (M, CODEBOOK), {}),
    "cluster.hierarchy.linkage": (hierarchy.linkage, (M,), {"method": "ward"}),
    "fft.fft": (fft.fft, (C,), {}),
    "fft.ifft": (fft.ifft, (C,), {}),
    "fft.rfft": (fft.rfft, (V,), {}),
    "fft.irfft": (fft.irfft, (C[:9],), {}),
    "fft.fftn": (fft.fftn, (M,), {}),
    "fft.fftshift": (fft.fftshift, (M,), {}),
    "fft.dct": (fft.dct, (V,), {}),
    "fft.fft2": (fft.fft2, (M,), {}),
    "fft.ifftn": (fft.ifftn, (C.reshape(4, 4),), {}),
    "fft.rfftn": (fft.rfftn, (M,), {}),
    "fft.irfftn": (fft.irfftn, (C.reshape(4, 4),), {"s": (4, 6)}),
    "fft.hfft": (fft.hfft, (C[:9],), {}),
    "fft.ihfft": (fft.ihfft, (V,), {}),
    "fft.ifftshift": (fft.ifftshift, (M,), {}),
    "fft.dctn": (fft.dctn, (M,), {"type": 2}),
    "fft.idct": (fft.idct, (V,), {"type": 3}),
    "fft.dst": (fft.dst, (V,), {}),
    # signal, integrate, interpolate, ndimage: functions SciPy 1.17.1 declares Array API capable
    # (scipy._lib._array_api.xp_capabilities_table)
    "signal.oaconvolve": (signal.oaconvolve, (V, KERNEL), {}),
    "signal.fftconvolve": (signal.fftconvolve, (V, KERNEL), {"mode": "same"}),
    "signal.convolve": (signal.convolve, (V, KERNEL), {}),
    "signal.correlate": (signal.correlate, (V, KERNEL), {"mode": "valid"}),
    "signal.convolve2d": (signal.convolve2d, (M, KERNEL2), {}),
    "signal.lfilter": (signal.lfilter, (*BUTTER, V), {}),
    "signal.filtfilt": (signal.filtfilt, (*BUTTER, V), {}),
    "signal.sosfilt": (signal.sosfilt, (SOS, V), {}),
    "signal.minimum_phase": (signal.minimum_phase, (FIR,), {}),
    "signal.detrend": (signal.detrend, (V,), {}),
    "signal.hilbert": (signal.hilbert, (V,), {}),
    "signal.savgol_filter": (signal.savgol_filter, (V,), {"window_length": 7, "polyorder": 2}),
    "signal.medfilt": (signal.medfilt, (V,), {"kernel_size": 5}),
    "signal.upfirdn": (signal.upfirdn, (KERNEL, V), {"up": 2}),
    "signal.freqz": (lambda b, a: tuple(signal.freqz(b, a, worN=16)), BUTTER, {}),
    "signal.resample": (signal.resample, (V,), {"num": 20}),
    "integrate.trapezoid": (integrate.trapezoid, (V,), {"dx": 0.5}),
    "integrate.cumulative_trapezoid": (integrate.cumulative_trapezoid, (V,), {"initial": 0}),
    "integrate.cumulative_simpson": (integrate.cumulative_simpson, (V,), {}),
    "integrate.romb": (integrate.romb, (V[:17],), {}),
    "integrate.tanhsinh": (lambda a, b: integrate.tanhsinh(lambda x: x * x + 1.0, a, b).integral, (-P, Q), {}),
    "interpolate.Akima1DInterpolator": (lambda x, y, q: interpolate.Akima1DInterpolator(x, y)(q),
                                        (KNOTS, V[:10], KNOTS[:-1] + 0.05), {}),
    "interpolate.CubicSpline": (lambda x, y, q: interpolate.CubicSpline(x, y)(q), (KNOTS, V[:10], KNOTS[:-1] + 0.05), {}),
    "interpolate.PchipInterpolator": (lambda x, y, q: interpolate.PchipInterpolator(x, y)(q),
                                      (KNOTS, V[:10], KNOTS[:-1] + 0.05), {}),
    "interpolate.make_interp_spline": (lambda x, y, q: interpolate.make_interp_spline(x, y, k=3)(q),
                                       (KNOTS, V[:10], KNOTS[:-1] + 0.05), {}),
    "interpolate.RBFInterpolator": (lambda p, v, q: interpolate.RBFInterpolator(p, v)(q), (POINTS, V[:12], QUERY), {}),
    "ndimage.gaussian_filter": (ndimage.gaussian_filter, (M,), {"sigma": 1.0}),
    "ndimage.uniform_filter": (ndimage.uniform_filter, (M,), {"size": 3}),
    "ndimage.median_filter": (ndimage.median_filter, (M,), {"size": 3}),
    "ndimage.maximum_filter": (ndimage.maximum_filter, (M,), {"size": 3}),
    "ndimage.sobel": (ndimage.sobel, (M,), {}),
    "ndimage.laplace": (ndimage.laplace, (M,), {}),
    "ndimage.convolve": (ndimage.convolve, (M, KERNEL2), {}),
    "ndimage.correlate1d": (ndimage.correlate1d, (M, KERNEL), {}),
    "ndimage.zoom": (ndimage.zoom, (M,), {"zoom": 2, "order": 1}),
    "ndimage.shift": (ndimage.shift, (M,), {"shift": (0.5, 1.0), "order": 1}),
    "ndimage.rotate": (ndimage.rotate, (M,), {"angle": 30, "reshape": False, "order": 1}),
    "ndimage.map_coordinates": (ndimage.map_coordinates, (M, COORDS), {"order": 1}),
    "ndimage.binary_erosion": (lambda x: ndimage.binary_erosion(x > 0), (M,), {}),
    "ndimage.label": (lambda x: ndimage.label(x > 0)[0], (M,), {}),
    "ndimage.distance_transform_edt": (lambda x: ndimage.distance_transform_edt(x > 0), (M,), {}),
    "ndimage.center_of_mass": (lambda x: ndimage.center_of_mass(x * x), (M,), {}),
    "stats.mode": (lambda x: tuple(stats.mode(x, axis=0)), (MODES,), {}),
}

# Cases that fail because of SciPy itself, per (case, client or "*"), with the reason.
_OA_VIEWS = ("SciPy 1.17.1 oaconvolve (signal/_signaltools.py) adds the overlaps with `ret_overpart += overpart` "
             "into a slice of `ret` and relies on that writing through a view; JAX, TensorFlow and dask have no views "
             "(SciPy's own table skips jax.numpy and xfails dask.array, 'wrong answer')")
_RBF_VIEW = ("SciPy 1.17.1 RBFInterpolator (interpolate/_rbfinterp.py) calls `d.view(float)` and "
             "`out.view(self.d_dtype)`, NumPy's reinterpreting view, marked there 'NB not Array API compliant'")
_SOS_READONLY = ("SciPy 1.17.1 signal.sosfilt hands np.asarray of a JAX array (a read-only view of the JAX buffer) "
                 "to its Cython _sosfilt, which needs a writeable buffer: 'buffer source array is read-only' on "
                 "jax.numpy arrays too")
_SPLINE_F64 = ("JAX with x64 off has no float64: SciPy 1.17.1 make_interp_spline asks float64 for its compiled "
               "B-spline routine, use_narrow_64bit narrows the request to float32, and the C routine takes float64 only")
_LINKAGE_F64 = ("JAX with x64 off has no float64: SciPy 1.17.1 cluster.hierarchy.linkage hands the float32 data to its "
                "compiled routine, which takes float64 only ('Buffer dtype mismatch, expected 'const double' but got "
                "'float'')")
CLIENT_BUGS: dict[tuple[str, str], str] = {
    ("cluster.hierarchy.linkage", "jax32"): _LINKAGE_F64,
    **dict.fromkeys([("signal.oaconvolve", name) for name in ("jax", "jax32", "tensorflow", "dask")], _OA_VIEWS),
    ("interpolate.RBFInterpolator", "*"): _RBF_VIEW,
    ("signal.sosfilt", "jax"): _SOS_READONLY,
    ("signal.sosfilt", "jax32"): _SOS_READONLY,
    ("interpolate.make_interp_spline", "jax32"): _SPLINE_F64,
}

# Gaps of arraylayer, per (case, client or "*"): keys of conftest's PENDING (work under way closes them).
PENDING: dict[tuple[str, str], str] = {
    **dict.fromkeys([(name, "dask") for name in (
        "stats.pearsonr", "stats.rankdata", "stats.ttest_1samp", "stats.ttest_ind", "stats.ttest_rel",
        "integrate.tanhsinh", "stats.mode", "interpolate.Akima1DInterpolator")], "dask-lengths"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_scipy(name: str, client: Any) -> None:
    client.xfail_client_bug(CLIENT_BUGS, name)
    client.xfail_pending(PENDING, name)
    function, arguments, options = CASES[name]
    expected = function(*(client.host(a) for a in arguments), **options)
    result = function(*(client.array(a) for a in arguments), **options)
    client.close(result, expected)
