"""For setuptools before PEP 660 and `setup.py bdist_wheel` (Debian 12's
setuptools 66): the metadata is in pyproject.toml."""

from setuptools import setup

setup()
