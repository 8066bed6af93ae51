"""The rubric compiler: a deterministic machine-checkable form for natural-language rubric items (EN and ZH).

Public API::

    from scenarios.rubric_compiler import COMPILER_VERSION, Compiled, attempt, compile_item

``compile_item(text_en=, text_zh=, task_type=, gold_steps=)`` returns a :class:`Compiled` (the check in
one of the shapes of :mod:`scenarios.rubric_checks`, the rule that matched, a confidence and an
explanation) or None: an item it cannot compile stays unscored by the ``rules`` judge, never passed.
Modules: :mod:`.lexicon` (EN/ZH concepts), :mod:`.text`, :mod:`.verbs`, the rules (:mod:`.rules_facts`,
:mod:`.rules_negation`, :mod:`.rules_write`), :mod:`.core` (per item), :mod:`.services` (stored items,
import, coverage) and :mod:`.report` (coverage figures).
"""

from scenarios.rubric_compiler.core import attempt, compile_item, gold_writes_of
from scenarios.rubric_compiler.types import COMPILER_VERSION, Compiled, Outcome

__all__ = ["COMPILER_VERSION", "Compiled", "Outcome", "attempt", "compile_item", "gold_writes_of"]
