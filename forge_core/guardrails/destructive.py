"""Destructive by default, from the tool itself, and asked for by its action.

**Inference.** A plain JSON Schema tool carries no hints, so an integrator
who did not annotate `drop_warehouse` got no protection. A tool that is
neither marked destructive nor read-only is taken as destructive when its
name says an irreversible action (`delete_`, `purge_`, `wipe_`,
`terminate_`, `unpair_`, `factory_reset_`, ...) or its description does
("permanently", "for good", "cannot be undone", "tear down", "without
rebooking"). A tool that changes where money is paid (a change verb in its
name, and a bank account, IBAN, routing number, sort code or payout
account in its name or description: `set_payout_account`, "Replace the
IBAN a supplier is paid to") is treated the same way: redirecting payments
is the write a careful integrator guards even when it can be changed back,
so it runs only when the request asks for it. The workflow's terminal
tools and required steps are what the workflow is for, and are never
inferred. An explicit mark wins, and so does
`"x-forge-destructive": false` (or true) in the tool's parameter schema,
which every SDK passes through as written.

**Questions.** A request that only asks a question ("What is the status of
order A1?") is not offered the tools that change something (not read-only,
not a terminal tool or a pending step) unless it asks for their action
(`unasked_writes`). Read-only is the integrator's mark, or, unannotated,
a name that starts with a reading verb (`get_`, `list_`, `check_`, but not
`check_in_`).

**Asked for.** A destructive tool is offered only when the user's own words
ask for its *action*: a word of its name that no other, non-destructive
tool has ("delete", "purge", "factory", "unpair"), or a verb of the same
kind ("remove" for delete_). A word of its description is not enough: a
request that mentions its "data" is not asking for `delete_dataset`
("Delete a dataset and its data"), nor is one about a job "that was
running" asking for `drop_warehouse` ("... and everything running in
it").
"""

from __future__ import annotations

import re

from forge_core.guardrails.text import stem, stems, words
from forge_core.workflow import ToolSpec

ANNOTATION = "x-forge-destructive"

_IRREVERSIBLE_NAME_WORDS = frozenset(
    stem(w)
    for w in (
        "delete remove erase purge wipe destroy drop terminate revoke void cancel reverse "
        "unpair decommission uninstall truncate factory deactivate kill evict expunge shred "
        "discard overwrite unsubscribe ban"
    ).split()
)
_IRREVERSIBLE_PHRASES = re.compile(
    r"\b(?:permanently|for good|irreversibl\w*|cannot be undone|can't be undone|"
    r"no undo|tear(?:s|ing)? down|wipes?|erases?|destroys?|factory settings|"
    r"without (?:rebooking|replacement|recovery|a backup)|everything (?:in|running in) it)\b",
    re.IGNORECASE,
)
# A change verb in a tool's name, and what it changes, where money is paid.
_CHANGE_NAME_WORDS = frozenset(
    stem(w) for w in "update change set replace edit modify switch swap".split()
)
_MONEY_ROUTING = re.compile(
    r"\b(?:bank (?:account|details)|iban|routing number|sort code|"
    r"payout (?:account|details|method)|(?:is|are|get|gets) paid (?:in)?to)\b",
    re.IGNORECASE,
)
# Verbs that ask for the same action, by the stem of a destructive name word.
_SAME_ACTION = [
    {stem(w) for w in "delete remove erase purge wipe destroy drop clear".split()},
    {stem(w) for w in "terminate kill offboard fire dismiss".split()},
    {stem(w) for w in "cancel call off revoke void".split()},
    {stem(w) for w in "unpair disconnect detach unlink remove".split()},
    {stem(w) for w in "uninstall remove".split()},
]


def inferred_destructive(tool: ToolSpec) -> bool:
    """Whether an unannotated tool's name or description says it does
    something that cannot be undone."""
    marked = (tool.parameters or {}).get(ANNOTATION)
    if isinstance(marked, bool):
        return marked
    if tool.destructive or tool.read_only:
        return tool.destructive
    name = {stem(w) for w in words(tool.name)}
    description = tool.description or ""
    if name & _IRREVERSIBLE_NAME_WORDS or _IRREVERSIBLE_PHRASES.search(description):
        return True
    return bool(name & _CHANGE_NAME_WORDS) and bool(
        _MONEY_ROUTING.search(f"{' '.join(words(tool.name))} {description}")
    )


def destructive_tools(tools: list[ToolSpec], spared: set[str]) -> set[str]:
    """The tools a run treats as destructive: marked so, or inferred so
    (never one of `spared`, the terminal tools and required steps, unless
    marked)."""
    out = set()
    for tool in tools:
        marked = (tool.parameters or {}).get(ANNOTATION)
        if tool.destructive or marked is True:
            out.add(tool.name)
        elif tool.name not in spared and inferred_destructive(tool):
            out.add(tool.name)
    return out


# Words of a name that ask for nothing ("add_to_group": "to").
_NO_ACTION = frozenset(stem(w) for w in "to from of for in on at by with and or the a an".split())


def _action_words(tool: ToolSpec, benign: set[str], synonyms: bool = True) -> set[str]:
    """The stems that ask for `tool`'s action: its name's words that no
    benign tool has, and (with `synonyms`) the verbs of the same kind."""
    own = {stem(w) for w in words(tool.name)} - benign - _NO_ACTION
    out = set(own)
    for group in _SAME_ACTION if synonyms else ():
        if own & group:
            out |= group
    return out


# An action the request says not to do asks for nothing: "don't send it
# yet", "no need to notify her", "without deleting".
_NEGATED = re.compile(
    r"\b(?:don'?t|do not|never|no need to|not|without)\s+"
    r"(?:(?:actually|yet|need to|have to|want to|bother to|bother|be|go|to)\s+)*[A-Za-z]+",
    re.IGNORECASE,
)


def asked_for(
    tools: list[ToolSpec],
    destructive: set[str],
    request: str,
    literal: frozenset[str] = frozenset(),
) -> set[str]:
    """The destructive tools whose action the request asks for. With no
    benign tool to tell them apart from, any word of the name asks. The
    `literal` ones only by a word of their own name: a side tool the
    workflow is not for ("remove her from the group" asks for the
    leave-group tool the workflow ends with, not for `delete_member`)."""
    benign: set[str] = set()
    for tool in tools:
        if tool.name not in destructive:
            benign |= set(stems(f"{' '.join(words(tool.name))} {tool.description}"))
    wanted = set(stems(_NEGATED.sub(" ", request)))
    return {
        tool.name
        for tool in tools
        if tool.name in destructive
        and _asking_words(tool, benign, tool.name not in literal) & wanted
    }


def _asking_words(tool: ToolSpec, benign: set[str], synonyms: bool) -> set[str]:
    """The words that ask for a destructive tool: of a name with an
    irreversible verb, that verb and its kind, where benign tools exist
    ("the boiler was serviced in spring" does not ask for
    `cancel_service_contract` by its "service"); else its action words."""
    acts = _action_words(tool, benign, synonyms)
    verbs = {stem(w) for w in words(tool.name)} & _IRREVERSIBLE_NAME_WORDS
    if not verbs or not benign:
        return acts
    kind = verbs.union(*(group for group in _SAME_ACTION if group & verbs))
    return acts & kind


_QUESTION = re.compile(
    r"\?\s*$|^\s*(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|"
    r"can|could|has|have|will|would|should)\b",
    re.IGNORECASE,
)


# A sentence that asks for something to be done, not to be told something.
_REQUESTING = re.compile(
    r"^\W*(?:please|kindly|go ahead|let'?s|(?:i|we)(?:'d| would) like|(?:i|we) (?:want|need)|"
    # An imperative: a sentence that starts with a verb of doing.
    r"book|reserve|cancel|send|add|create|make|set|change|update|move|delete|remove|order|buy|"
    r"pay|transfer|schedule|reschedule|put|give|assign|open|close|submit|register|sign|apply|"
    r"request|file|email|notify|renew|extend|approve|reject|confirm|start|stop|turn|enable|"
    r"disable|install|restart|reset|arrange|issue|raise|log|report|mark|switch|upgrade|refund)\b",
    re.IGNORECASE,
)


def asks_only(request: str) -> bool:
    """The request asks to be told something, not to change anything: it
    asks a question ("What is the status of order A1?"), and no sentence
    asks for something to be done ("Please ...", "I'd like ..."); the
    others only tell ("I sent it in last week.")."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", request.strip()) if s]
    return any(_QUESTION.search(s) for s in sentences) and not any(
        _REQUESTING.search(s) for s in sentences
    )


# Switch (bench.value_ablation `unasked_actions`): the writes a workflow
# with terminal tools does not ask for are left out for every request.
_UNASKED_ACTIONS = True

# A name that starts with one of these reads ("get_", "list_", "check_"),
# unless the next word makes it an action ("check_in_guest").
_READ_VERBS = frozenset(
    "get list find search lookup look show view read fetch query count check track estimate "
    "quote calculate compute preview describe browse".split()
)
_NOT_READING = frozenset("in out off".split())
# Verbs of a name that change something, whatever its description says.
_WRITE_NAME_WORDS = _IRREVERSIBLE_NAME_WORDS | frozenset(
    stem(w)
    for w in (
        "create add update set send book submit cancel post pay transfer assign reassign move "
        "schedule reserve order issue open close place register enrol enroll apply approve "
        "reject file log write save edit change replace confirm renew extend freeze pause start "
        "stop reset grant top charge refund dispatch request arrange advertise publish "
        "announce promote sell"
    ).split()
)


def inferred_read_only(tool: ToolSpec) -> bool:
    """Marked read-only, or unannotated and named for reading."""
    if tool.read_only or tool.destructive:
        return tool.read_only
    if isinstance((tool.parameters or {}).get(ANNOTATION), bool):
        return False
    said = words(tool.name)
    described = words(tool.description or "")
    if said and said[0] in _READ_VERBS:
        # "list_bike_for_sale", described "Advertise a bike for sale":
        # a name that reads, for a description that acts.
        acts = bool(described) and stem(described[0]) in _WRITE_NAME_WORDS
        return not (set(said[1:2]) & _NOT_READING) and not acts
    # A name with no verb ("page", "weather") reads when its description
    # starts with a reading verb ("List a page of records").
    return (
        bool(described)
        and described[0] in _READ_VERBS
        and not (set(described[1:2]) & _NOT_READING)
        and not ({stem(w) for w in said} & _WRITE_NAME_WORDS)
    )


def unasked_writes(
    tools: list[ToolSpec], spared: set[str], request: str, ends: bool = False
) -> set[str]:
    """The tools that change something (neither read-only, marked or by a
    name that reads, nor spared: terminal tools, pending steps) whose action
    the request does not ask for, when it only asks a question ("What is
    the status of order A1?" does not add a note to it), or, in a workflow
    that `ends` with its terminal tools, whatever it asks: the terminal
    tool and the required steps are the writes the workflow is for; another
    write runs only when the user's words ask for its action ("send the
    invoice", not an invoice to draft). A workflow none of whose tools reads
    is left alone: there is nothing to tell apart."""
    reads = {t.name for t in tools if inferred_read_only(t)}
    if not reads or not (asks_only(request) or (ends and _UNASKED_ACTIONS)):
        return set()
    writes = {t.name for t in tools if t.name not in reads and t.name not in spared}
    if asks_only(request) and ends:
        # A question's words name what it asks about ("how long before we
        # start paying storage?"), not an action to take.
        return writes
    return writes - asked_for(tools, writes, request, frozenset(writes) if ends else frozenset())
