"""gctoy: see how compilers cooperate with garbage collectors, by running it all."""

from .errors import DecodeError, GCToyError, IRParseError, VerifyError

__version__ = "0.1.0"

__all__ = ["DecodeError", "GCToyError", "IRParseError", "VerifyError", "__version__"]
