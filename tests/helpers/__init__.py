"""Helpers that several test modules share (generated corpora, run directories, small configs); no tests here.

Test modules import from here, never from each other; fixtures that several modules use live in
``tests/conftest.py``.
"""
