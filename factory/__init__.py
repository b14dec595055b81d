"""execverify factory: grammar-synthesized programs, sandboxed traces, verifiable questions."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("execverify-factory")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"
