"""IR -> IR passes and checks, registered under LLVM's pass names.

``run(module, "verify")`` runs a comma-separated pipeline, as ``opt -passes=`` does.
A pass registered with ``options=True`` also accepts ``name<opt1;opt2=value>``
(the syntax of LLVM's new pass manager); the text between the brackets is
handed to the pass function as its second argument.
"""

from __future__ import annotations

from ..errors import VerifyError
from .registry import (
    REGISTRY,
    TAKES_OPTIONS,
    PassFn,
    UnknownPassError,
    parse_pipeline,
    register,
    run,
    split_pass,
    split_top_level,
    verify,
)

from . import place_safepoints as _place_safepoints  # noqa: F401,E402  (registers "place-safepoints")
from . import rewrite_statepoints as _rewrite_statepoints  # noqa: F401,E402  (registers "rewrite-statepoints-for-gc")
from . import safepoint_ir_report as _safepoint_ir_report  # noqa: F401,E402  (registers "verify-safepoints")
from . import shadow_stack_lowering as _shadow_stack_lowering  # noqa: F401,E402  (registers "shadow-stack-gc-lowering")
from . import gcroots_from_statepoints as _gcroots_from_statepoints  # noqa: F401,E402  (registers "statepoints-to-gcroots")
from . import lower_barriers as _lower_barriers  # noqa: F401,E402  (registers "lower-gc-barriers")

__all__ = [
    "REGISTRY",
    "TAKES_OPTIONS",
    "PassFn",
    "UnknownPassError",
    "VerifyError",
    "parse_pipeline",
    "register",
    "run",
    "split_pass",
    "split_top_level",
    "verify",
]
