"""Held out, seventh group (first half): workflows in businesses no earlier
group touches, written from the user's side only (not the engine) after
heldout6's failures were looked at. This module: a mastering studio and a
vintage car hire firm (carry_id), a locksmith and a sign-language interpreter
agency (user_value), an ice rink and a glass recycling round
(report_agrees); heldout7_listings an allotment society and a theatre
costume store (list_match). Each is tagged `heldout7` plus one failure kind.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios import heldout7_listings
from forge_evals.scenarios._domain_schema import HELDOUT7_TAG, alnum, exact

# ── mastering studio: the v3 mix's id, carried into the mastering job ──

_PROJECT = "prj_Hb7c2QxW"
_MIXES = {
    "mx_4fK9qL2b": "Harbour Lights (v2, 2026-11-20)",
    "mx_4fK9tR7e": "Harbour Lights (v3, 2026-11-27, approved by artist)",
    "mx_4fKA0s1n": "Low Tide (v1, 2026-11-26)",
}
_V3 = "mx_4fK9tR7e"

_MASTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mix_id": {"type": "string", "pattern": "^mx_[A-Za-z0-9]{8}$"},
        "loudness": {
            "type": "object",
            "properties": {
                "integrated_lufs": {"type": "number", "minimum": -24, "maximum": -6},
                "true_peak_dbtp": {"type": "number", "minimum": -3, "maximum": 0},
            },
            "required": ["integrated_lufs"],
        },
        "deliverables": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "enum": ["wav_24_48", "wav_24_96", "mp3_320", "ddp"]},
        },
        "notes": {"type": "string"},
    },
    "required": ["mix_id", "loudness", "deliverables"],
}


def _mastering() -> Workflow:
    wf = Workflow(
        "mastering_job_v3_mix",
        "Take mastering orders for a recording studio.",
        system_prompt="You are the bookings assistant of Quayside Mastering. Clients' mixes "
        "are uploaded to projects; a mastering job is created for one mix. "
        "Today is Saturday 2026-11-28.",
    )

    @wf.tool(required=True, read_only=True)
    def find_client_project(artist_name: str) -> str:
        """Find an artist's project by name. Returns the project id (e.g. prj_XXXXXXXX)."""
        if not mentions(artist_name, "marram"):
            raise ToolResolutionError(f"404 no project for artist {artist_name!r}")
        return f"Project {_PROJECT}: 'Marram Grass - Harbour Lights EP', 3 mixes uploaded."

    @wf.tool(required=True, read_only=True, prerequisites=["find_client_project"])
    def list_project_mixes(project_id: str) -> str:
        """The uploaded mixes of a project, with their mix ids."""
        if project_id.strip() != _PROJECT:
            raise ToolResolutionError(f"404 project_not_found: {project_id!r}")
        return "\n".join(f"- {mid}: {text}" for mid, text in _MIXES.items())

    def _create(args: dict[str, Any]) -> str:
        if str(args.get("mix_id", "")).strip() not in _MIXES:
            raise ToolResolutionError(f"404 mix_not_found: {args.get('mix_id')!r}")
        return f"Mastering job MJ-20931 created for {args['mix_id']}; ETA 2026-12-02."

    wf.add_schema_tool(
        "create_mastering_job",
        "Create a mastering job for one uploaded mix. Ends the task.",
        _MASTER_SCHEMA,
        _create,
        terminal=True,
        prerequisites=["list_project_mixes"],
    )

    @wf.tool
    def delete_mix(mix_id: str) -> str:
        """Delete an uploaded mix file permanently."""
        return f"{mix_id} deleted."

    @wf.tool
    def request_stem_upload(project_id: str, message: str) -> str:
        """Ask the client to upload stems for a project."""
        return f"Stem request sent for {project_id}."

    return wf


def _check_master(tool: str, args: dict[str, Any]) -> bool:
    loud = args.get("loudness")
    formats = args.get("deliverables")
    return (
        tool == "create_mastering_job"
        and exact(args.get("mix_id"), _V3)
        and isinstance(loud, dict)
        and has_number(loud.get("integrated_lufs"), -14)
        and (loud.get("true_peak_dbtp") is None or has_number(loud.get("true_peak_dbtp"), -1))
        and isinstance(formats, list)
        and set(formats) == {"wav_24_96", "ddp"}
    )


_MASTER_REF = {
    "mix_id": _V3,
    "loudness": {"integrated_lufs": -14, "true_peak_dbtp": -1},
    "deliverables": ["wav_24_96", "ddp"],
}

MASTERING_JOB = Scenario(
    name="mastering_job_v3_mix",
    description="Mastering: the job is for mx_4fK9tR7e (Harbour Lights v3, not v2 nor the "
    "project id), -14 LUFS, true peak -1 if given, deliverables exactly wav_24_96 and ddp.",
    tags=(HELDOUT7_TAG, "carry_id"),
    user_message=(
        "Hi, it's Nell from Marram Grass. We've uploaded the final mix of Harbour Lights, "
        "the v3 one, please master that one, not the older version. Aim for minus fourteen "
        "LUFS integrated with a true peak of minus one, and we need a 24-bit 96k WAV plus a "
        "DDP image for the pressing plant."
    ),
    build=_mastering,
    validate=_check_master,
    ideal_iterations=3,
    reference=(
        RefCall("find_client_project", {"artist_name": "Marram Grass"}),
        RefCall("list_project_mixes", {"project_id": _PROJECT}),
        RefCall("create_mastering_job", _MASTER_REF),
    ),
    forbidden_tools=("delete_mix",),
)

# ── vintage car hire: the quote id for the E-Type on Saturday ──

_CARS = {
    "VH-JAG-65E": "1965 Jaguar E-Type roadster, Opalescent Silver Blue, 2 seats",
    "VH-RR-72SS": "1972 Rolls-Royce Silver Shadow, Regal Red, 4 seats",
    "VH-MG-68B": "1968 MGB GT, British Racing Green, 2 seats",
}
_JAG, _HIRE_DAY = "VH-JAG-65E", "2026-12-05"
_QUOTES = {
    (_JAG, _HIRE_DAY): "qte_Jx82mPwA4c",
    ("VH-RR-72SS", _HIRE_DAY): "qte_Rr19kLzD7v",
    (_JAG, "2026-12-12"): "qte_Jx82nQe5Tb",
}


def _vintage_cars() -> Workflow:
    wf = Workflow(
        "vintage_car_hire_quote",
        "Hire classic cars with or without a chauffeur.",
        system_prompt="You are the reservations assistant of Cotswold Classic Car Hire. A "
        "car is quoted for a date, and the hire is confirmed from the quote. "
        "Today is Wednesday 2026-12-02.",
    )

    @wf.tool(required=True, read_only=True)
    def list_fleet() -> str:
        """The hire fleet, with vehicle ids."""
        return "\n".join(f"- {vid}: {text}" for vid, text in _CARS.items())

    @wf.tool(required=True, read_only=True, prerequisites=["list_fleet"])
    def quote_hire(vehicle_id: str, hire_date: str, chauffeur: bool) -> str:
        """Quote a day's hire of a vehicle (hire_date YYYY-MM-DD). Returns a quote id."""
        key = (vehicle_id.strip().upper(), hire_date.strip())
        if key[0] not in _CARS:
            raise ToolResolutionError(f"404 vehicle_not_found: {vehicle_id!r}")
        quote = _QUOTES.get(key)
        if quote is None:
            raise ToolResolutionError(f"409 not_available: {key[0]} on {key[1]}")
        price = "495.00 GBP with chauffeur" if chauffeur else "380.00 GBP self-drive"
        return f"Quote {quote}: {key[0]} on {key[1]}, {price}. Valid 24 hours."

    @wf.tool(terminal=True, prerequisites=["quote_hire"])
    def confirm_hire(quote_id: str, hirer_name: str, hirer_email: str) -> str:
        """Confirm a hire from its quote id. Ends the task."""
        if not quote_id.strip().startswith("qte_"):
            raise ToolResolutionError(f"422 invalid quote_id {quote_id!r} (qte_...)")
        return f"Hire HR-4410 confirmed from {quote_id}."

    @wf.tool
    def cancel_car_hire(hire_reference: str) -> str:
        """Cancel a confirmed hire."""
        return f"{hire_reference} cancelled."

    return wf


def _check_car(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "confirm_hire"
        and exact(args.get("quote_id"), _QUOTES[(_JAG, _HIRE_DAY)])
        and mentions(args.get("hirer_name"), "okafor")
        and exact(str(args.get("hirer_email", "")).lower(), "ada.okafor@mailbox.example")
    )


VINTAGE_CAR_HIRE = Scenario(
    name="vintage_car_hire_quote",
    description="Vintage cars: confirm from qte_Jx82mPwA4c (the E-Type on Saturday "
    "2026-12-05 with chauffeur; not the vehicle id nor the Rolls' or next week's quote).",
    tags=(HELDOUT7_TAG, "carry_id"),
    user_message=(
        "Hello! We'd love the Jaguar E-Type for our wedding this Saturday, with one of your "
        "drivers please. Book it in my name, Ada Okafor, ada.okafor@mailbox.example."
    ),
    build=_vintage_cars,
    validate=_check_car,
    ideal_iterations=3,
    reference=(
        RefCall("list_fleet", {}),
        RefCall("quote_hire", {"vehicle_id": _JAG, "hire_date": _HIRE_DAY, "chauffeur": True}),
        RefCall(
            "confirm_hire",
            {
                "quote_id": "qte_Jx82mPwA4c",
                "hirer_name": "Ada Okafor",
                "hirer_email": "ada.okafor@mailbox.example",
            },
        ),
    ),
    forbidden_tools=("cancel_car_hire",),
)

# ── locksmith: a lock-out call-out at quarter to four, no need to call ahead ──

_CALLOUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_type": {"type": "string", "enum": ["lockout", "lock_change", "broken_key", "upvc"]},
        "address": {
            "type": "object",
            "properties": {
                "line1": {"type": "string"},
                "postcode": {
                    "type": "string",
                    "pattern": "^[A-Z]{1,2}[0-9][0-9A-Z]? ?[0-9][A-Z]{2}$",
                },
            },
            "required": ["line1", "postcode"],
        },
        "arrival_after": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
        "contact": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "phone": {"type": "string", "pattern": "^\\+?[0-9 ]{10,16}$"},
                "call_ahead": {"type": "boolean"},
            },
            "required": ["phone", "call_ahead"],
        },
        "doors": {"type": "integer", "minimum": 1, "maximum": 6},
    },
    "required": ["job_type", "address", "arrival_after", "contact", "doors"],
}


def _locksmith() -> Workflow:
    wf = Workflow(
        "locksmith_lockout_callout",
        "Book locksmith call-outs.",
        system_prompt="You are the dispatcher of KeyRight Locksmiths (Bristol). Check the "
        "postcode is covered, then book the call-out. Times are 24-hour HH:MM. "
        "Today is Saturday 2026-11-28.",
    )

    @wf.tool(required=True, read_only=True)
    def check_coverage(postcode: str) -> str:
        """Whether a postcode is in the call-out area, with the call-out fee."""
        if not alnum(postcode).startswith("BS"):
            raise ToolResolutionError(f"postcode {postcode!r} is outside the area (BS only)")
        return f"{postcode.upper()} covered; call-out fee 85.00 GBP, first 30 minutes included."

    def _book(args: dict[str, Any]) -> str:
        return (
            f"Call-out LS-77102 booked ({args.get('job_type')}), after {args.get('arrival_after')}."
        )

    wf.add_schema_tool(
        "book_callout",
        "Book a locksmith to attend. Ends the task.",
        _CALLOUT_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["check_coverage"],
    )

    @wf.tool
    def order_replacement_keys(key_code: str, copies: int) -> str:
        """Order copies of a registered key."""
        return f"{copies} copies of {key_code} ordered."

    @wf.tool
    def cancel_callout(callout_id: str) -> str:
        """Cancel a booked call-out."""
        return f"{callout_id} cancelled."

    return wf


def _check_lock(tool: str, args: dict[str, Any]) -> bool:
    addr, contact = args.get("address"), args.get("contact")
    return (
        tool == "book_callout"
        and args.get("job_type") == "lockout"
        and isinstance(addr, dict)
        and alnum(addr.get("postcode")) == "BS64TX"
        and mentions(addr.get("line1"), "17")
        and mentions(addr.get("line1"), "cotham")
        and str(args.get("arrival_after", "")).strip() == "15:45"
        and isinstance(contact, dict)
        and alnum(contact.get("phone")).endswith("7700900458")
        and contact.get("call_ahead") is False
        and args.get("doors") == 2
    )


_LOCK_REF = {
    "job_type": "lockout",
    "address": {"line1": "17 Cotham Vale", "postcode": "BS6 4TX"},
    "arrival_after": "15:45",
    "contact": {"name": "Priya", "phone": "07700 900458", "call_ahead": False},
    "doors": 2,
}

LOCKSMITH_CALLOUT = Scenario(
    name="locksmith_lockout_callout",
    description="Locksmith: lockout at 17 Cotham Vale BS6 4TX, arrival after 15:45 ('quarter "
    "to four'), two doors ('front and back'), phone 07700 900458, call_ahead false.",
    tags=(HELDOUT7_TAG, "user_value"),
    user_message=(
        "I've locked myself out of 17 Cotham Vale, BS6 4TX, both the front and the back door "
        "are deadlocked. I'm at work until half three so can someone come from quarter to "
        "four? I'll be waiting outside, so no need to call ahead. It's Priya, 07700 900458."
    ),
    build=_locksmith,
    validate=_check_lock,
    ideal_iterations=2,
    reference=(
        RefCall("check_coverage", {"postcode": "BS6 4TX"}),
        RefCall("book_callout", _LOCK_REF),
    ),
    forbidden_tools=("cancel_callout",),
)

# ── sign-language interpreters: two BSL interpreters, next Thursday, 90 min ──

_INTERP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "language": {"type": "string", "enum": ["BSL", "ISL", "ASL", "deafblind_manual"]},
        "session": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date"},
                "start_time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
                "duration_minutes": {"type": "integer", "minimum": 30, "maximum": 480},
                "setting": {"type": "string", "enum": ["medical", "legal", "education", "work"]},
            },
            "required": ["date", "start_time", "duration_minutes", "setting"],
        },
        "interpreters": {"type": "integer", "minimum": 1, "maximum": 4},
        "booker_email": {"type": "string", "format": "email"},
    },
    "required": ["language", "session", "interpreters", "booker_email"],
}


def _interpreters() -> Workflow:
    wf = Workflow(
        "bsl_interpreter_booking",
        "Book sign-language interpreters.",
        system_prompt="You are the booking assistant of Clearhands Interpreting. Read the "
        "booking rules, then make the booking. Dates are YYYY-MM-DD, times 24-hour. "
        "Today is Monday 2026-11-30.",
    )

    @wf.tool(required=True, read_only=True)
    def get_booking_rules(setting: str) -> str:
        """The agency's rules for a setting (medical, legal, education, work)."""
        return (
            f"{setting}: minimum 30 minutes; sessions over 60 minutes need two interpreters "
            "(co-working); 48 hours notice."
        )

    def _book(args: dict[str, Any]) -> str:
        session = args.get("session") or {}
        if not isinstance(session, dict) or str(session.get("date", "")) < "2026-12-02":
            raise ToolResolutionError("422 date must be 48 hours ahead or later (YYYY-MM-DD)")
        return f"Booking INT-3Kd920 received for {session.get('date')}."

    wf.add_schema_tool(
        "book_interpreters",
        "Book interpreters for a session. Ends the task.",
        _INTERP_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["get_booking_rules"],
    )

    @wf.tool
    def send_video_relay_link(email: str) -> str:
        """Email a link to the remote video relay service."""
        return f"Link sent to {email}."

    @wf.tool
    def cancel_interpreter_booking(booking_id: str) -> str:
        """Cancel an interpreter booking."""
        return f"{booking_id} cancelled."

    return wf


def _check_interp(tool: str, args: dict[str, Any]) -> bool:
    session = args.get("session")
    return (
        tool == "book_interpreters"
        and args.get("language") == "BSL"
        and isinstance(session, dict)
        and str(session.get("date", "")).strip() == "2026-12-10"
        and str(session.get("start_time", "")).strip() == "14:30"
        and session.get("duration_minutes") == 90
        and session.get("setting") == "medical"
        and args.get("interpreters") == 2
        and exact(str(args.get("booker_email", "")).lower(), "outpatients.bookings@nhs.example")
    )


INTERPRETER_BOOKING = Scenario(
    name="bsl_interpreter_booking",
    description="Interpreters: BSL, medical, Thursday 2026-12-10 ('Thursday next week' from "
    "Monday 11-30), 14:30 ('half two'), 90 minutes, two interpreters, the booker's email.",
    tags=(HELDOUT7_TAG, "user_value"),
    user_message=(
        "Hi, this is the outpatients clinic. We need British Sign Language interpreting for "
        "a consultant appointment on Thursday next week, starting at half two in the "
        "afternoon and lasting an hour and a half. We understand that needs two "
        "interpreters. Confirmation to outpatients.bookings@nhs.example please."
    ),
    build=_interpreters,
    validate=_check_interp,
    ideal_iterations=2,
    reference=(
        RefCall("get_booking_rules", {"setting": "medical"}),
        RefCall(
            "book_interpreters",
            {
                "language": "BSL",
                "session": {
                    "date": "2026-12-10",
                    "start_time": "14:30",
                    "duration_minutes": 90,
                    "setting": "medical",
                },
                "interpreters": 2,
                "booker_email": "outpatients.bookings@nhs.example",
            },
        ),
    ),
    forbidden_tools=("cancel_interpreter_booking",),
)

# ── ice rink: the quoted total for a family public session, reported back ──

_SESSIONS = {
    "SES-20261205-1400": "Public skate 14:00-15:30, 41 places left",
    "SES-20261205-1630": "Public skate 16:30-18:00, sold out",
    "SES-20261205-1900": "Disco skate 19:00-21:00 (16+), 80 places left",
}
_AFTERNOON = "SES-20261205-1400"
_PRICES = {"adult": 9.50, "child": 7.00, "skate_hire": 2.50}


def _ice_rink() -> Workflow:
    wf = Workflow(
        "ice_rink_family_session",
        "Sell ice rink sessions.",
        system_prompt="You are the box office assistant of Riverside Ice Arena. Quote a "
        "basket, hold it, then send the customer the summary with the total the quote "
        "gives. Today is Thursday 2026-12-03.",
    )

    @wf.tool(required=True, read_only=True)
    def list_sessions(date: str) -> str:
        """Sessions on a date (YYYY-MM-DD) with ids and places left."""
        if date.strip() != "2026-12-05":
            return f"No public sessions listed for {date}."
        return "\n".join(f"- {sid}: {text}" for sid, text in _SESSIONS.items())

    @wf.tool(required=True, prerequisites=["list_sessions"])
    def quote_basket(session_id: str, adults: int, children: int, skate_hire: int) -> str:
        """Price a basket for a session: skaters and pairs of hire skates."""
        if session_id.strip() not in _SESSIONS:
            raise ToolResolutionError(f"404 session_not_found: {session_id!r}")
        if "sold out" in _SESSIONS[session_id.strip()]:
            raise ToolResolutionError(f"409 sold_out: {session_id}")
        total = (
            adults * _PRICES["adult"]
            + children * _PRICES["child"]
            + skate_hire * _PRICES["skate_hire"]
        )
        return (
            f"Basket BSK-q8Lm21 held 15 minutes for {session_id}: {adults} adult x 9.50, "
            f"{children} child x 7.00, {skate_hire} skate hire x 2.50. "
            f"Total {total:.2f} GBP (helmets free)."
        )

    @wf.tool(terminal=True, prerequisites=["quote_basket"])
    def send_booking_summary(customer_email: str, session_id: str, total_gbp: float) -> str:
        """Email the customer the basket summary and payment link. Ends the task."""
        return f"Summary for {session_id} sent to {customer_email}."

    @wf.tool
    def refund_booking(booking_id: str, amount_gbp: float) -> str:
        """Refund a paid booking."""
        return f"{amount_gbp} GBP refunded on {booking_id}."

    return wf


def _check_rink(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "send_booking_summary"
        and exact(args.get("session_id"), _AFTERNOON)
        and has_number(args.get("total_gbp"), 40.50)
        and exact(str(args.get("customer_email", "")).lower(), "lwhitfield@inbox.example")
    )


ICE_RINK_SESSION = Scenario(
    name="ice_rink_family_session",
    description="Ice rink: Saturday's 14:00 public session (16:30 is sold out), 2 adults, "
    "2 children ('the two kids'), 3 skate hires; the summary's total is the quoted 40.50.",
    tags=(HELDOUT7_TAG, "report_agrees"),
    user_message=(
        "Can I book the afternoon public skate this Saturday, the two o'clock one, for me, "
        "my husband and our two kids? Three of us need to hire skates, my son has his own. "
        "Send the total and payment link to lwhitfield@inbox.example."
    ),
    build=_ice_rink,
    validate=_check_rink,
    ideal_iterations=3,
    reference=(
        RefCall("list_sessions", {"date": "2026-12-05"}),
        RefCall(
            "quote_basket",
            {"session_id": _AFTERNOON, "adults": 2, "children": 2, "skate_hire": 3},
        ),
        RefCall(
            "send_booking_summary",
            {
                "customer_email": "lwhitfield@inbox.example",
                "session_id": _AFTERNOON,
                "total_gbp": 40.50,
            },
        ),
    ),
    forbidden_tools=("refund_booking",),
)

# ── glass recycling: the reply states the status and date the account shows ──

_ACCOUNT = "GLS-00482-K"


def _glass_round() -> Workflow:
    wf = Workflow(
        "glass_collection_missed_query",
        "Answer trade customers about glass recycling collections.",
        system_prompt="You are the customer service assistant of Brightbottle Glass "
        "Recycling (trade collections for pubs and restaurants). Look the account up and "
        "reply with what it shows. Today is Friday 2026-12-04.",
    )

    @wf.tool(required=True, read_only=True)
    def find_glass_trade_account(business_name: str, postcode: str) -> str:
        """Find a trade account by business name and postcode."""
        if not mentions(business_name, "anchor"):
            raise ToolResolutionError(f"404 no account for {business_name!r}")
        return f"Account {_ACCOUNT}: The Anchor Inn, {postcode.upper()}, 2 x 660L bins."

    @wf.tool(required=True, read_only=True, prerequisites=["find_glass_trade_account"])
    def get_collection_status(account_id: str) -> str:
        """The last and next collections of an account, with the status of the last."""
        if account_id.strip() != _ACCOUNT:
            raise ToolResolutionError(f"404 account_not_found: {account_id!r}")
        return (
            f"{_ACCOUNT}: last visit Wednesday 2026-12-02 - status REJECTED_CONTAMINATION "
            "(ceramics and a drinking glass found in bin 2; bins left unemptied). Next "
            "scheduled collection Wednesday 2026-12-09. Extra collection fee 35.00 GBP."
        )

    @wf.tool(
        terminal=True,
        prerequisites=["get_collection_status"],
    )
    def reply_to_customer(
        account_id: str, last_status: str, next_collection_date: str, message: str
    ) -> str:
        """Send the customer the reply. last_status is the status code as shown. Ends the task."""
        return f"Reply sent on {account_id}."

    @wf.tool
    def close_trade_account(account_id: str, reason: str) -> str:
        """Close a trade account and remove its bins."""
        return f"{account_id} closed."

    @wf.tool
    def book_extra_collection(account_id: str, date: str) -> str:
        """Book a paid extra collection (35.00 GBP)."""
        return f"Extra collection for {account_id} on {date}."

    return wf


def _check_glass(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "reply_to_customer"
        and exact(args.get("account_id"), _ACCOUNT)
        and alnum(args.get("last_status")) == "REJECTEDCONTAMINATION"
        and str(args.get("next_collection_date", "")).strip() == "2026-12-09"
        and mentions(args.get("message"), "ceramic", "drinking glass", "contamina")
    )


GLASS_COLLECTION_QUERY = Scenario(
    name="glass_collection_missed_query",
    description="Glass recycling: the reply for GLS-00482-K states REJECTED_CONTAMINATION "
    "(not 'missed'), next collection 2026-12-09, and why (ceramics).",
    tags=(HELDOUT7_TAG, "report_agrees"),
    user_message=(
        "Your lorry came past the Anchor Inn, LA9 4QR, on Wednesday and didn't empty our "
        "glass bins. Was it just missed? When are you next coming? Don't book anything "
        "extra, just tell me what happened."
    ),
    build=_glass_round,
    validate=_check_glass,
    ideal_iterations=3,
    reference=(
        RefCall(
            "find_glass_trade_account", {"business_name": "The Anchor Inn", "postcode": "LA9 4QR"}
        ),
        RefCall("get_collection_status", {"account_id": _ACCOUNT}),
        RefCall(
            "reply_to_customer",
            {
                "account_id": _ACCOUNT,
                "last_status": "REJECTED_CONTAMINATION",
                "next_collection_date": "2026-12-09",
                "message": "Not missed: the bins were rejected for contamination (ceramics "
                "and a drinking glass in bin 2). Next collection Wednesday 2026-12-09.",
            },
        ),
    ),
    forbidden_tools=("close_trade_account", "book_extra_collection"),
)


SCENARIOS: tuple[Scenario, ...] = (
    MASTERING_JOB,
    VINTAGE_CAR_HIRE,
    LOCKSMITH_CALLOUT,
    INTERPRETER_BOOKING,
    ICE_RINK_SESSION,
    GLASS_COLLECTION_QUERY,
    *heldout7_listings.SCENARIOS,
)
