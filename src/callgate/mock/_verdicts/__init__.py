"""Verdicts: what a client did with what the mock served, judged as requests arrive.

The catalogue (:data:`CATALOGUE`) and its reference are in docs/verdicts.md. The pipeline
records what it knows in each journal entry (``entry.facts``, :mod:`._facts`); the judge
(:class:`Verdicts`, :mod:`._judge`) reads each entry once as it closes.
"""

from ._catalogue import CATALOGUE, ERROR, WARNING, Rule, Verdict
from ._facts import RESUME, recorded_facts, reply_facts, turn_facts
from ._judge import Verdicts, native_verdict

__all__ = [
    "CATALOGUE",
    "ERROR",
    "RESUME",
    "WARNING",
    "Rule",
    "Verdict",
    "Verdicts",
    "native_verdict",
    "recorded_facts",
    "reply_facts",
    "turn_facts",
]
