"""The applications built on the classifier's public face.

- ``cli``: the ``wnb-stream`` command (``python -m wnb_stream``);
- ``evaluation``: the prequential loop behind ``wnb-stream evaluate`` and its metrics;
- ``models``: the models the command compares, built from their names or specifications;
- ``datasets``: named streams, KEEL files and tables (CSV read as a stream is
  ``wnb_stream.stream.csv_stream``);
- ``compat``: the capymoa (MOA) adapter (the ``moa`` extra).

Nothing is imported here: ``from wnb_stream.apps import datasets, evaluation`` loads what it names.
"""
