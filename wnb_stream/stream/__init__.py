"""The consumer loop: a classifier driven over a stream of events and late labels.

- ``runner``: ``StreamRunner``, which predicts on arrival, learns when the label comes and
  checkpoints the model with its position;
- ``sources``: what the runner reads (``Source``; ``ListSource`` in memory, ``JSONLinesSource``
  a file of JSON lines; ``Malformed`` for a line that cannot be read; ``Limits`` on a message);
- ``pending``: the events waiting for their label (``PendingTable``);
- ``dead_letters``: the messages set aside because processing them raised (``DeadLetters``);
- ``checkpoints``: the checkpoint files of the runner and of partitioned training (io records);
- ``redis_stream``: a Redis Streams source and ``publish``;
- ``csv_stream``: a CSV file read as a stream of ``(x, y)`` (``CSVStream``);
- ``warm_up``: a small fixed stream to warm models (and new processes' kernels) up on.
"""

from .dead_letters import DeadLetter, DeadLetters
from .pending import PendingEntry, PendingTable
from .runner import StreamRunner
from .sources import JSONLinesSource, Limits, ListSource, Malformed, Source

__all__ = [
    "DeadLetter",
    "DeadLetters",
    "JSONLinesSource",
    "Limits",
    "ListSource",
    "Malformed",
    "PendingEntry",
    "PendingTable",
    "Source",
    "StreamRunner",
]
