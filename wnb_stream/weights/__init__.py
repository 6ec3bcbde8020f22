"""Level 3: variable weights of the weighted naive Bayes.

Learners (``Optimizer`` subclasses): ``Uniform`` (plain naive Bayes), ``PGDMB`` (projected
mini-batch Rprop, HBL17 Algorithm 1), ``VNS`` (PGDMB with variable-neighbourhood restarts, HBL17
Algorithm 2), ``FNB`` (fractional naive Bayes: fractional forward-backward search, HB24
Algorithm 2), ``SNB`` (selective naive Bayes with compression-based averaging, HB24 Algorithm 1),
``Graphical`` (per-class softmax weights by SGD, SLH15), and the batch searches on
the history window ``SGCF`` (two-stage convex relaxation then composite step, HB24 §3.2.2) and
``Direct`` (bimodal prior, Rprop-style rates, multistart, GB11). The criterion, its
gradient and the regularizers are pure functions in ``criterion`` and ``regularizers``.
``toy_batch`` builds the small seeded problem (informative and noise variables) of the learners'
examples.
"""

from . import criterion, regularizers, selection
from .base import Batch, Context, Optimizer, toy_batch
from .direct import Direct
from .fnb import FNB
from .graphical import Graphical
from .pgdmb import PGDMB
from .sgcf import SGCF
from .snb import SNB
from .uniform import Uniform
from .vns import VNS

__all__ = [
    "FNB",
    "SNB",
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
    "selection",
    "toy_batch",
]
