"""The package's version; scripts/build-wheel writes the built one."""

__version__ = "0.1.0"
