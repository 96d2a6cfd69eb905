"""gctoy.widgets: ipywidgets views over what the core computes (this is the only part that imports Jupyter).

Widgets here precompute their pages and link controls with ``jslink``, so they
also work in the static HTML book where no kernel runs.
"""

from .forms import FORM_ORDER, FORM_ORIGIN, FormPage, Relocation, StatepointFormsView, form_pages, statepoint_forms
from .rs4gc import RS4GCStepper, rs4gc_stepper

__all__ = [
    "FORM_ORDER",
    "FORM_ORIGIN",
    "FormPage",
    "RS4GCStepper",
    "Relocation",
    "StatepointFormsView",
    "form_pages",
    "rs4gc_stepper",
    "statepoint_forms",
]
