"""Test support shipped with docbase: the port contract suite and Hypothesis strategies.

A third-party adapter proves itself by subclassing the contract classes in
:mod:`docbase.testing.contract` and providing ``store`` / ``blob_store`` fixtures.
"""
