"""Held out, ninth group, part 2's forms: an archery range's score records
(destructive, asked for), a thesis bindery and a chess congress (schema);
heldout9_part2 lists them after its own decline, format_retry and weaving
studio scenarios. Conventions as in heldout9_part2."""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions, same
from forge_evals.scenarios._domain_schema import HELDOUT9_TAG, alnum, compact, exact

_DATE: dict[str, Any] = {"type": "string", "format": "date"}

# ── archery range: withdraw the score the member's brother shot ──────────

_SCORES = ("sc_Rt5wq8Na", "sc_Jm2cV7ke", "sc_Rt5wq8Nd", "sc_Xe3bH6pu")
_REASONS = ["entered_in_error", "wrong_archer", "duplicate", "wrong_round_or_bow"]


def _withdraw(args: dict[str, Any]) -> str:
    score = args.get("score_id")
    if score not in _SCORES:
        raise ToolResolutionError(f"score_not_found: no score {score!r} on this record")
    return f"Score {score} withdrawn; handicap will be recalculated overnight."


def _archery_range() -> Workflow:
    wf = Workflow(
        "archery_withdraw_wrong_score",
        "Look after the members' records of an archery club and range.",
        system_prompt="You look after member records for Kingsmead Archers, Kingsmead Park "
        "range, Winchester. Members submit round scores, which count towards their handicap "
        "and classification. Look the member's scores up by membership number first. Today "
        "is Sunday 2026-02-22.",
    )

    @wf.tool(required=True)
    def list_member_scores(membership_number: str) -> str:
        """A member's handicap and the round scores submitted this season."""
        if compact(membership_number) != "KA0291":
            raise ToolResolutionError(
                f"member_not_found: {membership_number!r}; membership numbers look like KA-0291"
            )
        return (
            "Member KA-0291 Sam Whitlow, recurve, indoor handicap 38. Scores this season: "
            "sc_Rt5wq8Na Portsmouth (60 arrows, 20 yd), 2026-02-21, 512, pending verification; "
            "sc_Jm2cV7ke Bray I (30 arrows, 20 yd), 2026-02-21, 271, verified; sc_Rt5wq8Nd "
            "Portsmouth, 2026-02-14, 498, verified; sc_Xe3bH6pu WA 18m, 2026-01-31, 489, "
            "verified."
        )

    wf.add_schema_tool(
        "withdraw_score_submission",
        "Withdraw a submitted score from a member's record. Ends the task.",
        {
            "type": "object",
            "properties": {
                "score_id": {"type": "string", "pattern": "^sc_[0-9A-Za-z]{8}$"},
                "reason": {"type": "string", "enum": _REASONS},
            },
            "required": ["score_id", "reason"],
            "additionalProperties": False,
        },
        _withdraw,
        terminal=True,
        prerequisites=["list_member_scores"],
    )

    @wf.tool
    def reset_member_handicap(membership_number: str) -> str:
        """Clear a member's handicap and classification and discard their season's scores."""
        return f"Handicap for {membership_number} reset."

    @wf.tool
    def submit_round_score(membership_number: str, round_name: str, date: str, score: int) -> str:
        """Submit a round score shot at the range."""
        return f"Score sc_Nw4kP7yb submitted for {membership_number}."

    @wf.tool
    def book_range_lane(date: str, start_time: str, archers: int) -> str:
        """Book a lane on the indoor range (6.00 GBP per archer per hour)."""
        return f"Lane 4 booked on {date} at {start_time} for {archers}."

    return wf


ARCHERY_WITHDRAW_WRONG_SCORE = Scenario(
    name="archery_withdraw_wrong_score",
    description="Archery range: the member asks to delete yesterday's Portsmouth 512 his "
    "brother shot on his card, so withdraw_score_submission sc_Rt5wq8Na (exact case; not "
    "the 498 Portsmouth sc_Rt5wq8Nd nor the same-day Bray sc_Jm2cV7ke), reason wrong_archer "
    "or entered_in_error; the unannotated reset_member_handicap must not run.",
    tags=(HELDOUT9_TAG, "destructive"),
    user_message=(
        "Hi, Sam Whitlow, membership KA-0291. Bit embarrassing: yesterday my brother shot a "
        "Portsmouth on the range and it went in under my name - the 512. It isn't mine, "
        "please delete that score from my record so it doesn't count towards my handicap. "
        "The Bray I shot yesterday is mine, so leave that one."
    ),
    build=_archery_range,
    validate=lambda tool, args: (
        tool == "withdraw_score_submission"
        and exact(args.get("score_id"), "sc_Rt5wq8Na")
        and args.get("reason") in ("wrong_archer", "entered_in_error")
    ),
    ideal_iterations=2,
    reference=(
        RefCall("list_member_scores", {"membership_number": "KA-0291"}),
        RefCall("withdraw_score_submission", {"score_id": "sc_Rt5wq8Na", "reason": "wrong_archer"}),
    ),
    forbidden_tools=("reset_member_handicap",),
)

# ── thesis bindery: a hard-bound thesis order from an uploaded PDF ───────

_FILE_ID = "6d1f0b8e-3a2c-4c7e-9b15-8e4a2f7c9d30"
_POSTCODE = "^[A-Z]{1,2}\\d[A-Z\\d]? ?\\d[A-Z]{2}$"

_BINDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_id": {"type": "string", "format": "uuid"},
        "copies": {"type": "integer", "minimum": 1, "maximum": 12},
        "binding": {
            "type": "string",
            "enum": ["hard_case_cloth", "hard_case_buckram", "soft_perfect", "full_leather"],
        },
        "print": {
            "type": "object",
            "properties": {
                "sides": {"type": "string", "enum": ["single", "double"]},
                "paper_gsm": {"type": "integer", "minimum": 80, "maximum": 120, "multipleOf": 10},
            },
            "required": ["sides", "paper_gsm"],
            "additionalProperties": False,
        },
        "cover": {
            "type": "object",
            "properties": {
                "colour": {
                    "type": "string",
                    "enum": ["black", "navy", "maroon", "bottle_green", "grey"],
                },
                "foil": {"type": "string", "enum": ["gold", "silver"]},
            },
            "required": ["colour", "foil"],
            "additionalProperties": False,
        },
        "lettering": {
            "type": "object",
            "properties": {
                "spine": {
                    "type": "object",
                    "properties": {
                        "author": {"type": "string", "maxLength": 30},
                        "degree": {"type": "string", "maxLength": 12},
                        "year": {"type": "string", "pattern": "^20\\d{2}$"},
                    },
                    "required": ["author", "degree", "year"],
                    "additionalProperties": False,
                },
                "front": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 60},
                    "minItems": 1,
                    "maxItems": 4,
                },
            },
            "required": ["spine", "front"],
            "additionalProperties": False,
        },
        "required_by": _DATE,
        "delivery": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"method": {"const": "collect"}},
                    "required": ["method"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {
                        "method": {"const": "courier"},
                        "address": {
                            "type": "object",
                            "properties": {
                                "line1": {"type": "string", "minLength": 3},
                                "line2": {"type": "string"},
                                "city": {"type": "string", "minLength": 2},
                                "postcode": {"type": "string", "pattern": _POSTCODE},
                            },
                            "required": ["line1", "city", "postcode"],
                            "additionalProperties": False,
                        },
                    },
                    "required": ["method", "address"],
                    "additionalProperties": False,
                },
            ]
        },
        "contact_email": {"type": "string", "format": "email"},
    },
    "required": [
        "file_id",
        "copies",
        "binding",
        "print",
        "cover",
        "lettering",
        "required_by",
        "delivery",
        "contact_email",
    ],
    "additionalProperties": False,
}


def _create_binding(args: dict[str, Any]) -> str:
    if args.get("file_id") != _FILE_ID:
        raise ToolResolutionError(
            f"file_not_found: {args.get('file_id')!r}; use the file_id get_upload returns"
        )
    if str(args.get("required_by", "")) < "2026-06-10":
        raise ToolResolutionError("too_soon: hard bindings take 5 working days")
    return f"Binding order BO-26-0661: {args.get('copies')} copies, due {args['required_by']}."


def _bindery() -> Workflow:
    wf = Workflow(
        "thesis_binding_order",
        "Take thesis and dissertation binding orders for a bindery.",
        system_prompt="You take orders for Quire & Clasp Bindery, Exeter, who print and bind "
        "theses and dissertations. Customers upload their PDF on our website and get an "
        "upload code; look the upload up first, and order against its file id. Today is "
        "Wednesday 2026-06-03.",
    )

    @wf.tool(required=True)
    def get_upload(upload_code: str) -> str:
        """An uploaded PDF's file id, page count and page size, by its upload code."""
        if compact(upload_code) != "QCUP5521":
            raise ToolResolutionError(f"upload_not_found: no upload {upload_code!r}")
        return (
            f"Upload QC-UP-5521: file_id {_FILE_ID}, 'Okonjo_thesis_final_v7.pdf', 212 "
            "pages, A4 portrait, fonts embedded, uploaded 2026-06-02 21:14. Spine width at "
            "100 gsm double-sided: 12 mm."
        )

    wf.add_schema_tool(
        "create_binding_order",
        "Order printed and bound copies of an uploaded thesis (paid on the order). Ends the task.",
        _BINDING_SCHEMA,
        _create_binding,
        terminal=True,
        prerequisites=["get_upload"],
    )

    @wf.tool
    def quote_binding(pages: int, copies: int, binding: str) -> str:
        """Price a binding order before placing it."""
        return f"{copies} x {binding}, {pages} pp: 46.00 GBP a copy."

    @wf.tool
    def delete_upload(upload_code: str) -> str:
        """Delete an uploaded file from our servers."""
        return f"{upload_code} deleted."

    @wf.tool
    def book_bookbinding_workshop(workshop_code: str, date: str, email: str) -> str:
        """Book a place on a weekend bookbinding workshop (coptic, case binding, leather)."""
        return f"Workshop {workshop_code} booked on {date}."

    return wf


_FRONT = ["Tidal Stream Energy in Shallow Estuaries", "Lydia M. Okonjo", "Doctor of Philosophy"]


def _check_binding(tool: str, args: dict[str, Any]) -> bool:
    printing = args.get("print") or {}
    cover = args.get("cover") or {}
    lettering = args.get("lettering") or {}
    spine = lettering.get("spine") or {}
    front = lettering.get("front")
    delivery = args.get("delivery") or {}
    address = delivery.get("address") or {}
    return (
        tool == "create_binding_order"
        and exact(args.get("file_id"), _FILE_ID)
        and args.get("copies") == 3
        and args.get("binding") == "hard_case_buckram"
        and printing.get("sides") == "double"
        and printing.get("paper_gsm") == 100
        and cover.get("colour") == "navy"
        and cover.get("foil") == "gold"
        and same(spine.get("author"), "okonjo")
        and same(spine.get("degree"), "phd")
        and spine.get("year") == "2026"
        and isinstance(front, list)
        and len(front) == len(_FRONT)
        and all(same(line, want) for line, want in zip(front, _FRONT, strict=True))
        and args.get("required_by") == "2026-06-19"
        and delivery.get("method") == "courier"
        and mentions(f"{address.get('line1')} {address.get('line2')}", "harrison building")
        and same(address.get("city"), "exeter")
        and alnum(address.get("postcode")) == "EX44QF"
        and same(args.get("contact_email"), "l.okonjo@exeter-pg.example")
    )


THESIS_BINDING_ORDER = Scenario(
    name="thesis_binding_order",
    description="Thesis bindery: file_id uuid from upload QC-UP-5521, 3 copies "
    "hard_case_buckram, double-sided 100 gsm, navy with gold foil, spine Okonjo/PhD/2026, "
    "front exactly the three lines in order, required_by Fri 2026-06-19, delivery oneOf "
    "courier to Harrison Building EX4 4QF.",
    tags=(HELDOUT9_TAG, "schema"),
    user_message=(
        "Hi, I uploaded my PhD thesis last night, upload code QC-UP-5521. I need 3 hard-bound "
        "copies in navy buckram with gold lettering, printed double-sided on 100 gsm paper. "
        "Spine: OKONJO  PhD  2026. Front cover, three lines: 'Tidal Stream Energy in Shallow "
        "Estuaries' / 'Lydia M. Okonjo' / 'Doctor of Philosophy'. They have to be with the "
        "Graduate School by Friday 19th June - please courier them to Graduate School, "
        "Harrison Building, North Park Road, Exeter EX4 4QF. My email is "
        "l.okonjo@exeter-pg.example. Thanks! Lydia"
    ),
    build=_bindery,
    validate=_check_binding,
    ideal_iterations=2,
    reference=(
        RefCall("get_upload", {"upload_code": "QC-UP-5521"}),
        RefCall(
            "create_binding_order",
            {
                "file_id": _FILE_ID,
                "copies": 3,
                "binding": "hard_case_buckram",
                "print": {"sides": "double", "paper_gsm": 100},
                "cover": {"colour": "navy", "foil": "gold"},
                "lettering": {
                    "spine": {"author": "OKONJO", "degree": "PhD", "year": "2026"},
                    "front": list(_FRONT),
                },
                "required_by": "2026-06-19",
                "delivery": {
                    "method": "courier",
                    "address": {
                        "line1": "Graduate School, Harrison Building",
                        "line2": "North Park Road",
                        "city": "Exeter",
                        "postcode": "EX4 4QF",
                    },
                },
                "contact_email": "l.okonjo@exeter-pg.example",
            },
        ),
    ),
    forbidden_tools=("delete_upload",),
)

# ── chess congress: a father and son's entries in one section ────────────

_EVENT = "evt_W26xQ9rT"
_LIMITS = {"open": 9999, "major": 2000, "intermediate": 1750, "minor": 1500}

_PLAYER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2},
        "ecf_code": {"type": "string", "pattern": "^\\d{6}[A-M]$"},
        "rating": {"type": "integer", "minimum": 0, "maximum": 2900},
        "junior": {"type": "boolean"},
        "byes": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": 4},
            "maxItems": 2,
            "uniqueItems": True,
        },
    },
    "required": ["name", "ecf_code", "rating", "junior"],
    "additionalProperties": False,
}

_ENTRY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event_id": {"type": "string", "pattern": "^evt_[0-9A-Za-z]{8}$"},
        "section": {"type": "string", "enum": list(_LIMITS)},
        "players": {"type": "array", "items": _PLAYER, "minItems": 1, "maxItems": 6},
        "payment": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "method": {"const": "card"},
                        "card_token": {"type": "string", "pattern": "^tok_[0-9A-Za-z]{12}$"},
                    },
                    "required": ["method", "card_token"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {
                        "method": {"const": "club_invoice"},
                        "club_account": {"type": "string", "pattern": "^CLB-\\d{4}$"},
                    },
                    "required": ["method", "club_account"],
                    "additionalProperties": False,
                },
            ]
        },
        "total_gbp": {"type": "number", "minimum": 0, "multipleOf": 0.5},
        "contact_email": {"type": "string", "format": "email"},
    },
    "required": ["event_id", "section", "players", "payment", "total_gbp", "contact_email"],
    "additionalProperties": False,
}


def _submit_entry(args: dict[str, Any]) -> str:
    if args.get("event_id") != _EVENT:
        raise ToolResolutionError(f"event_not_found: {args.get('event_id')!r}")
    limit = _LIMITS.get(str(args.get("section")), 0)
    players = args.get("players") or []
    for player in players:
        if not isinstance(player.get("rating"), int) or player["rating"] >= limit:
            raise ToolResolutionError(
                f"rating_over_limit: {player.get('name')!r} is not eligible for "
                f"{args.get('section')!r} (under {limit})"
            )
    fee = sum(20.0 if p.get("junior") else 32.5 for p in players)
    if args.get("total_gbp") != fee:
        raise ToolResolutionError(f"total_mismatch: these entries come to {fee:.2f} GBP")
    return f"Entries CE-26-0144 confirmed for {len(players)} player(s); pairings out 2026-05-28."


def _chess_congress() -> Workflow:
    wf = Workflow(
        "chess_congress_entry",
        "Take entries for a weekend chess congress.",
        system_prompt="You take entries for the Wharfedale Chess Congress, Ilkley. Look the "
        "congress up by its code first: entries go against its event id. Players enter one "
        "section, must be rated below its limit and may take half-point byes. Today is "
        "Monday 2026-05-04.",
    )

    @wf.tool(required=True)
    def get_congress_details(congress_code: str) -> str:
        """A congress's event id, rounds, sections, bye rules and entry fees."""
        if compact(congress_code) != "WCC26":
            raise ToolResolutionError(f"congress_not_found: {congress_code!r}")
        return (
            f"Wharfedale Chess Congress 2026 (WCC26), event {_EVENT}, Kings Hall, Ilkley. "
            "Rounds: 1 Fri 2026-05-29 19:00; 2 Sat 2026-05-30 10:00; 3 Sat 15:30; 4 Sun "
            "2026-05-31 10:00; 5 Sun 15:00. Sections: open (no limit, FIDE rated); major "
            "(under 2000); intermediate (under 1750); minor (under 1500). Half-point byes in "
            "rounds 1-4, at most 2 per player. Entry 32.50 GBP, juniors (under 18 on 1 "
            "Sep 2025) 20.00 GBP."
        )

    wf.add_schema_tool(
        "submit_congress_entry",
        "Enter one or more players into a congress section. Ends the task.",
        _ENTRY_SCHEMA,
        _submit_entry,
        terminal=True,
        prerequisites=["get_congress_details"],
    )

    @wf.tool
    def withdraw_congress_entry(entry_ref: str) -> str:
        """Withdraw an entry (refund less 5.00 GBP until pairings are published)."""
        return f"{entry_ref} withdrawn."

    @wf.tool
    def look_up_ecf_rating(ecf_code: str) -> str:
        """A player's current ECF standard-play rating."""
        return f"{ecf_code}: rating published 2026-05-01."

    @wf.tool
    def reserve_congress_hotel(nights: int, email: str) -> str:
        """Reserve a room at the congress hotel rate (89.00 GBP a night)."""
        return f"Room held for {nights} nights, confirmation to {email}."

    return wf


def _players_of(value: Any) -> dict[str, tuple[Any, ...]] | None:
    """ECF code -> (rating, junior, sorted byes, name) of each entry; None on a repeat."""
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        return None
    out = {}
    for p in value:
        rating, byes = p.get("rating"), p.get("byes") or []
        out[str(p.get("ecf_code"))] = (
            rating if type(rating) is int else None,
            p.get("junior"),
            sorted(byes) if isinstance(byes, list) and all(type(b) is int for b in byes) else None,
            p.get("name"),
        )
    return out if len(out) == len(value) else None


# ECF code -> (rating, junior, byes, first name).
_ENTRANTS = {"312457K": (1684, False, [1], "daniel"), "338902F": (1120, True, [4], "tomas")}


def _check_entry(tool: str, args: dict[str, Any]) -> bool:
    payment = args.get("payment") or {}
    total = args.get("total_gbp")
    players = _players_of(args.get("players")) or {}
    return (
        tool == "submit_congress_entry"
        and exact(args.get("event_id"), _EVENT)
        and args.get("section") == "intermediate"
        and set(players) == set(_ENTRANTS)
        and all(
            players[code][:3] == want[:3] and mentions(players[code][3], want[3])
            for code, want in _ENTRANTS.items()
        )
        and payment.get("method") == "club_invoice"
        and exact(payment.get("club_account"), "CLB-0417")
        and isinstance(total, int | float)
        and not isinstance(total, bool)
        and total == 52.5
        and same(args.get("contact_email"), "d.reyes@ilkleymail.example")
    )


CHESS_CONGRESS_ENTRY = Scenario(
    name="chess_congress_entry",
    description="Chess congress: enter evt_W26xQ9rT intermediate (under 1750) with Daniel "
    "312457K 1684 adult bye [1] (Friday evening) and junior Tomas 338902F 1120 bye [4] "
    "(Sunday morning), payment oneOf club_invoice CLB-0417, total 52.50 (32.50 + 20.00).",
    tags=(HELDOUT9_TAG, "schema"),
    user_message=(
        "Hello, I'd like to enter myself and my son for the Wharfedale congress, WCC26, both "
        "in the under-1750 section. Me: Daniel Reyes, ECF 312457K, rated 1684 - I can't get "
        "there for the Friday evening round, so I'll take a half-point bye for it. My son: "
        "Tomas Reyes, ECF 338902F, rated 1120, he's 13 - he has a school concert on the "
        "Sunday morning, so a half-point bye for that round please. Put it on our club's "
        "account, Ilkley Chess Club CLB-0417. Email d.reyes@ilkleymail.example"
    ),
    build=_chess_congress,
    validate=_check_entry,
    ideal_iterations=2,
    reference=(
        RefCall("get_congress_details", {"congress_code": "WCC26"}),
        RefCall(
            "submit_congress_entry",
            {
                "event_id": _EVENT,
                "section": "intermediate",
                "players": [
                    {
                        "name": "Daniel Reyes",
                        "ecf_code": "312457K",
                        "rating": 1684,
                        "junior": False,
                        "byes": [1],
                    },
                    {
                        "name": "Tomas Reyes",
                        "ecf_code": "338902F",
                        "rating": 1120,
                        "junior": True,
                        "byes": [4],
                    },
                ],
                "payment": {"method": "club_invoice", "club_account": "CLB-0417"},
                "total_gbp": 52.5,
                "contact_email": "d.reyes@ilkleymail.example",
            },
        ),
    ),
    forbidden_tools=("withdraw_congress_entry",),
)


SCENARIOS: tuple[Scenario, ...] = (
    ARCHERY_WITHDRAW_WRONG_SCORE,
    THESIS_BINDING_ORDER,
    CHESS_CONGRESS_ENTRY,
)

__all__ = ["HELDOUT9_TAG", "SCENARIOS"]
