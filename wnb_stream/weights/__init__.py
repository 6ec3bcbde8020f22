"""Level 3: variable weights of the weighted naive Bayes.

Learners (``Optimizer`` subclasses): ``Uniform`` (plain naive Bayes), ``PGDMB`` (projected
mini-batch Rprop, HBL17 Algorithm 1), ``VNS`` (PGDMB with variable-neighbourhood restarts, HBL17
Algorithm 2), ``Graphical`` (per-class softmax weights by SGD, SLH15), and the batch searches on
the history window ``SGCF`` (two-stage convex relaxation then composite step, HB24 §3.2.2) and
``Direct`` (bimodal prior, Rprop-style rates, multistart, GB11). The criterion, its
gradient and the regularizers are pure functions in ``criterion`` and ``regularizers``.
"""

from . import criterion, regularizers
from .base import Batch, Context, Optimizer
from .direct import Direct
from .graphical import Graphical
from .pgdmb import PGDMB
from .sgcf import SGCF
from .uniform import Uniform
from .vns import VNS

__all__ = [
    "PGDMB",
    "VNS",
    "SGCF",
    "Direct",
    "Batch",
    "Context",
    "Graphical",
    "Optimizer",
    "Uniform",
    "criterion",
    "regularizers",
]
