"""The package version, in one place.

pyproject.toml reads it (``[tool.setuptools.dynamic]``) and ``polypad.__version__``
and ``polypad --version`` import it.  Keep it a plain string literal: setuptools
reads it without importing polypad.
"""

__version__ = "0.1.0"
