"""Creation kernels: numpy's functions have the Array API signatures (``device=`` included)."""

from __future__ import annotations

import numpy as np

arange = np.arange
empty = np.empty
eye = np.eye
full = np.full
linspace = np.linspace
meshgrid = np.meshgrid
ones = np.ones
tril = np.tril
triu = np.triu
zeros = np.zeros
