"""cudalogs: paste a GPU error log, learn why it broke on your GPU and what to do.

    >>> import cudalogs
    >>> report = cudalogs.explain(open("error.log").read(), gpu="Tesla T4")
    >>> report.to_dict()["diagnoses"][0]["class"]
"""

from cudalogs.errors import CudalogsError, InputError, KBError, UnknownGpuError
from cudalogs.knowledge import KnowledgeBase, load_kb
from cudalogs.model import Diagnosis, Fix, Gpu, GpuContext, Report
from cudalogs.pipeline import explain, explain_issue

__all__ = [
    "CudalogsError",
    "Diagnosis",
    "Fix",
    "Gpu",
    "GpuContext",
    "InputError",
    "KBError",
    "KnowledgeBase",
    "Report",
    "UnknownGpuError",
    "explain",
    "explain_issue",
    "load_kb",
]
__version__ = "0.1.0"
