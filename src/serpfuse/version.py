"""The package's version, in a module of its own so that any module can name it without importing the package."""

__version__ = "0.1.0"  # the one place the version lives: pyproject reads it
