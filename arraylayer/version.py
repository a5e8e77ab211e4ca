"""The package's version and the Array API version it implements (``arraylayer.__version__``,
``arraylayer.__array_api_version__``), in a module of their own so that modules below the package
face can read them."""

from __future__ import annotations

__version__ = "0.1.0"
__array_api_version__ = "2025.12"
