"""One training step's machinery: verl's rows in, our estimators' context out, the one seam every trainer calls.

* :mod:`~verl_focal.step.seam`: :func:`~verl_focal.step.seam.begin` / :func:`~verl_focal.step.seam.finish` and the
  background prefetch between them (the advantage work of one step, for every trainer family);
* :mod:`~verl_focal.step.rows`: the :class:`~verl_focal.step.rows.RowSource` and its builders
  (:func:`~verl_focal.step.rows.dataproto_rows`, the predictor :func:`~verl_focal.step.rows.text_rows`);
  :mod:`~verl_focal.step.tq_rows`: the v1 trainer's TransferQueue read;
* :mod:`~verl_focal.step.columns`: TransferQueue / tensordict / numpy columns as plain rows;
* :mod:`~verl_focal.step.decode`: token ids to texts, in one batch; :mod:`~verl_focal.step.sessions`: agent
  sessions with several outputs.

The direction is ``step`` -> ``estimators`` (their input type, :mod:`verl_focal.estimators.context`), never back.
No verl import (``tq_rows`` imports ``transfer_queue``, which imports no verl).
"""
