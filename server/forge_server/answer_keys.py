"""What a client's answer to a run is filed under: the result of a tool
call, or the decision on a call that waited for approval, of one call id.

A call that needs approval has both (first the decision, then its result),
so the call id alone does not name an answer. Inside the server the key is
an AnswerKey; the journal stores it as text (`stored()`: the call id, or
"approval:" and the call id), which `AnswerKey.parse` reads back.
"""

from __future__ import annotations

from typing import NamedTuple

_APPROVAL = "approval:"


class AnswerKey(NamedTuple):
    call_id: str
    # The approval decision on the call, not its result.
    approval: bool = False

    @classmethod
    def decision(cls, call_id: str) -> AnswerKey:
        return cls(call_id, approval=True)

    def stored(self) -> str:
        """The key as the journal's results keep it."""
        return _APPROVAL + self.call_id if self.approval else self.call_id

    @classmethod
    def parse(cls, stored: str) -> AnswerKey:
        if stored.startswith(_APPROVAL):
            return cls(stored[len(_APPROVAL) :], approval=True)
        return cls(stored)
