"""execverify factory: grammar-synthesized programs, sandboxed traces, verifiable questions."""


def __getattr__(name: str) -> str:
    # Lazy: sandbox workers import this package and should not pay for importlib.metadata.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("execverify-factory")
        except PackageNotFoundError:  # running from a source tree without an install
            return "0.0.0+src"
    raise AttributeError(name)
