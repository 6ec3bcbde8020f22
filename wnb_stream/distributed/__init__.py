"""Distributed training: one model learned on many partitions of a stream, in rounds.

- ``partitioned``: the plain objects of a round (``Learner`` per partition, ``Coordinator``,
  ``Report``) and ``IterableSource``; any process pool can move them;
- ``ray``: ``train``, which runs them as Ray actors (the ``ray`` extra; imported only when
  named: ``from wnb_stream.distributed import ray``);
- ``local``: ``train`` with the same objects in processes of one machine (the standard
  library's ``multiprocessing``; ``from wnb_stream.distributed import local``).
"""

from .partitioned import Coordinator, IterableSource, Learner, Progress, Report, example

__all__ = ["Coordinator", "IterableSource", "Learner", "Progress", "Report", "example"]
