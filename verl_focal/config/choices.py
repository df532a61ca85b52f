"""Allowed values that pure modules and the config schema share, with no import of their own.

Most allowed values live beside the maths that uses them (``verl_focal.core``) and the schema
imports them from there; a value used by a module *above* the schema (the partition packages
import :mod:`verl_focal.config.schema`) lives here instead, so that the schema never imports
upwards.
"""

#: ``algorithm.cue.backend``: the Strategy Cue matcher (read by ``verl_focal.partition.cues.engine``)
CUE_BACKENDS = ("auto", "regex", "hyperscan")
