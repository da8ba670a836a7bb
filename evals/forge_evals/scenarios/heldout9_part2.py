"""Held out, ninth group, part 2: fossil-hunting walks and a cliff funicular
(decline), a septic tank emptying firm and a snow-plough contractor
(format_retry) and a weaving studio's loom hire (destructive) here; an
archery range (destructive), a thesis bindery and a chess congress (schema)
in heldout9_part2_forms. Written from the user's side only, tagged
`heldout9` plus one failure kind (two each). The format tools take raw JSON
Schema the way a business API publishes it and their errors state the
expected format."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, same
from forge_evals.scenarios import heldout9_part2_forms
from forge_evals.scenarios._domain_schema import (
    HELDOUT9_TAG,
    compact,
    decline_tool,
    declined_scenario,
    exact,
)

_DATE: dict[str, Any] = {"type": "string", "format": "date"}


def _declined(
    name: str, description: str, user_message: str, build: Callable[[], Workflow]
) -> Scenario:
    """A request no tool serves: the run declines and calls no other tool."""
    return declined_scenario(
        HELDOUT9_TAG, name, description, user_message, build, "We don't offer that."
    )


# ── fossil walks: guided hunts on the beach, no valuations ───────────────


def _fossil_walks() -> Workflow:
    wf = Workflow(
        "fossil_ammonite_valuation_decline",
        "Take bookings for guided fossil-hunting walks on the Jurassic Coast.",
        system_prompt="You are the booking assistant of Blue Lias Fossil Walks, Charmouth, "
        "Dorset. We run guided fossil-hunting walks on the beaches at Charmouth and Lyme "
        "Regis (times depend on the tide), school field trips, and hire out collecting kits "
        "(hammer, goggles, chisel, bag). We do not value, buy, sell, authenticate or prepare "
        "fossils, and we cannot give anyone permission to dig in the cliffs. Today is Monday "
        "2026-04-06.",
    )

    @wf.tool
    def check_walk_tides(date: str) -> str:
        """Guided walk times on a date (set by low tide) and the places left."""
        return f"{date}: walk 10:15 (low tide 11:02), 14 places left; walk 15:30, 6 left."

    @wf.tool
    def book_fossil_walk(date: str, start_time: str, adults: int, children: int, email: str) -> str:
        """Book places on a two-hour guided fossil walk (12.00 GBP adult, 8.00 GBP child)."""
        return f"Walk FW-26-0412 booked: {adults} adults, {children} children on {date}."

    @wf.tool
    def book_school_field_trip(school_name: str, date: str, pupils: int, key_stage: str) -> str:
        """Book a curriculum-linked fossil field trip for a school group (up to 60 pupils)."""
        return f"Field trip ST-0921 booked for {school_name} on {date} ({pupils} pupils)."

    @wf.tool
    def hire_collecting_kit(date: str, kits: int) -> str:
        """Hire collecting kits for a day (6.00 GBP each, collect from the Charmouth hut)."""
        return f"{kits} kits reserved for {date}, hire ref KH-3390."

    decline_tool(wf)
    return wf


FOSSIL_AMMONITE_VALUATION_DECLINE = _declined(
    "fossil_ammonite_valuation_decline",
    "Fossil walks: a walker wants a valuation, an authenticity certificate and preparation "
    "of an ammonite to sell at auction; the business runs walks and hires kits only (a walk "
    "or kit booking would be wrong), so decline.",
    (
        "Hi there, we came on one of your walks at Charmouth last week and afterwards my "
        "daughter found a big ammonite in a loose block near Black Ven - about 20 cm across, "
        "golden pyrite on it. We'd like to sell it at the Bridport auction in May. Could you "
        "value it, give us a certificate of authenticity and clean it up / prepare it for the "
        "sale? We can drop it in on Thursday. Thanks, Gareth Pryce (g.pryce@westmail.example)"
    ),
    _fossil_walks,
)

# ── cliff railway: tickets and passes, no private hire ───────────────────


def _cliff_railway() -> Workflow:
    wf = Workflow(
        "funicular_private_hire_decline",
        "Answer the customer line of a Victorian cliff railway (a water-balanced funicular).",
        system_prompt="You answer the customer line of the Saltwick Cliff Railway, Whitby, "
        "a water-balanced funicular running between the West Cliff and the harbour since "
        "1898. We sell single and return tickets for the public service (10:00-18:00, "
        "March-October) and annual passes, and can tell visitors about step-free access. We "
        "do not offer private hire of the cars, after-hours running, or filming and event "
        "use. Today is Wednesday 2026-07-15.",
    )

    @wf.tool
    def get_railway_timetable(date: str) -> str:
        """Service hours on a date and any planned closures."""
        return f"{date}: cars every 3 minutes 10:00-18:00; last up-car 17:57."

    @wf.tool
    def buy_railway_tickets(date: str, journey: str, adults: int, children: int) -> str:
        """Buy tickets for the public service (single 2.50 GBP, return 4.00 GBP; child half)."""
        return f"Tickets TK-88215: {adults} adult, {children} child {journey} on {date}."

    @wf.tool
    def buy_annual_pass(holder_name: str, pass_type: str, email: str) -> str:
        """Sell an annual pass (resident 25.00 GBP, visitor 40.00 GBP)."""
        return f"Annual pass AP-2026-1174 for {holder_name} sent to {email}."

    @wf.tool
    def check_step_free_access(station: str) -> str:
        """Step-free access and wheelchair space at a station."""
        return f"{station}: level boarding, one wheelchair space per car."

    decline_tool(wf)
    return wf


FUNICULAR_PRIVATE_HIRE_DECLINE = _declined(
    "funicular_private_hire_decline",
    "Cliff railway: a visitor wants a car held at the top after hours for a sunset "
    "proposal with flowers and a photographer; there is no private hire or after-hours "
    "running (buying tickets or a pass would be wrong), so decline.",
    (
        "Hello! This is a slightly unusual request. I want to propose to my girlfriend on "
        "Saturday 25th July and she loves your cliff railway. Could we hire one of the cars "
        "privately after closing - around 20:30 for the sunset - and have it stop halfway "
        "down for ten minutes? I'd bring flowers and a photographer. Happy to pay whatever "
        "it costs. Callum Shaw, callum.shaw@fastpost.example"
    ),
    _cliff_railway,
)

# ── septic tank emptying: the driver's ETA text needs an E.164 mobile ────

_E164 = re.compile(r"^\+[1-9]\d{7,14}$")


def _book_tank(args: dict[str, Any]) -> str:
    if args.get("tank_id") not in ("tnk_8Rb2LmQe", "tnk_8Rb2LmQf"):
        raise ToolResolutionError(f"tank_not_found: {args.get('tank_id')!r}")
    if args.get("tanker") != "compact":
        raise ToolResolutionError("access_restricted: this property takes a compact tanker")
    mobile = str((args.get("notify") or {}).get("mobile", ""))
    if not _E164.match(mobile) or mobile.startswith("+440"):
        raise ToolResolutionError(
            f"notify.mobile {mobile!r} rejected: give the mobile number in E.164 "
            "international form - a plus sign, the country code (44 for the UK), then the "
            "number without its leading 0, digits only with no spaces, e.g. +447911123456"
        )
    return f"Visit EV-26-1893 booked for {args.get('visit_date')}; ETA text to {mobile}."


_TANK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "property_id": {"type": "string", "pattern": "^prop_[0-9A-Za-z]{8}$"},
        "tank_id": {"type": "string", "pattern": "^tnk_[0-9A-Za-z]{8}$"},
        "visit_date": _DATE,
        "tanker": {"type": "string", "enum": ["standard", "compact"]},
        "hose_run_m": {"type": "integer", "minimum": 1, "maximum": 60},
        "notify": {
            "type": "object",
            "properties": {
                "mobile": {"type": "string", "description": "For the driver's ETA text."}
            },
            "required": ["mobile"],
            "additionalProperties": False,
        },
    },
    "required": ["property_id", "tank_id", "visit_date", "tanker", "hose_run_m", "notify"],
    "additionalProperties": False,
}


def _septic() -> Workflow:
    wf = Workflow(
        "septic_empty_mobile_format",
        "Book tank emptying visits for a septic tank and sewage treatment plant service.",
        system_prompt="You book visits for Mardle Valley Septic Services, Norfolk. Look the "
        "customer's property up by account number first; its record lists the tanks and "
        "any access limits, which the booking must respect. Today is Thursday 2026-10-08.",
    )

    @wf.tool(required=True)
    def find_customer_property(account_number: str) -> str:
        """A customer's property, its tanks and the access notes, by account number."""
        if compact(account_number) != "MV10482":
            raise ToolResolutionError(
                f"account_not_found: no account {account_number!r}; numbers look like MV-10482"
            )
        return (
            "Account MV-10482, Mr D. Okoro, Willow Barn, Mill Lane, Aldborough NR11 7PW; "
            "property prop_3kW9xTq2. Tanks: tnk_8Rb2LmQe septic tank, 3,800 L, last emptied "
            "2025-09-30; tnk_8Rb2LmQf sewage treatment plant (Klargester BioDisc), 2,700 L, "
            "serviced 2026-04-02. Access: single-track lane with a 2.4 m gateway - compact "
            "tanker only."
        )

    wf.add_schema_tool(
        "book_tank_empty",
        "Book a tanker to empty a tank (septic tank 245.00 GBP up to 4,500 L). Ends the task.",
        _TANK_SCHEMA,
        _book_tank,
        terminal=True,
        prerequisites=["find_customer_property"],
    )

    @wf.tool
    def quote_drain_survey(postcode: str) -> str:
        """Price a CCTV survey of the drains between house and tank."""
        return f"{postcode}: CCTV drain survey 165.00 GBP."

    @wf.tool
    def cancel_service_plan(property_id: str) -> str:
        """End a property's annual service plan and its booked visits."""
        return f"Service plan for {property_id} ended."

    return wf


def _tank_visit(mobile: str) -> dict[str, Any]:
    return {
        "property_id": "prop_3kW9xTq2",
        "tank_id": "tnk_8Rb2LmQe",
        "visit_date": "2026-10-14",
        "tanker": "compact",
        "hose_run_m": 25,
        "notify": {"mobile": mobile},
    }


SEPTIC_EMPTY_MOBILE_FORMAT = Scenario(
    name="septic_empty_mobile_format",
    description="Septic: the mobile '07700 900381' is rejected (E.164, no spaces); the retry "
    "sends +447700900381 to empty septic tank tnk_8Rb2LmQe (not the treatment plant) at "
    "prop_3kW9xTq2 on Wed 2026-10-14 with the compact tanker the record demands, 25 m hose.",
    tags=(HELDOUT9_TAG, "format_retry"),
    user_message=(
        "Hi, David Okoro, account MV-10482. Our septic tank needs emptying - could you come "
        "on Wednesday 14th October? Just the septic tank; the treatment plant was serviced in "
        "the spring. The tanker can park on the drive, about 25 metres from the tank lid. "
        "Please text the driver's ETA to my mobile, 07700 900381."
    ),
    build=_septic,
    validate=lambda tool, args: (
        tool == "book_tank_empty"
        and (args.get("notify") or {}).get("mobile") == "+447700900381"
        and exact(args.get("property_id"), "prop_3kW9xTq2")
        and exact(args.get("tank_id"), "tnk_8Rb2LmQe")
        and args.get("visit_date") == "2026-10-14"
        and args.get("tanker") == "compact"
        and args.get("hose_run_m") == 25
        and type(args.get("hose_run_m")) is int
    ),
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("find_customer_property", {"account_number": "MV-10482"}),
        RefCall("book_tank_empty", _tank_visit("07700 900381")),
        RefCall("book_tank_empty", _tank_visit("+447700900381")),
    ),
    forbidden_tools=("cancel_service_plan",),
)

# ── snow clearance: the contract season is an ISO 8601 interval ──────────

_INTERVAL = re.compile(r"^(\d{4}-\d{2}-\d{2})/(\d{4}-\d{2}-\d{2})$")
_ZONES = ("zn_K4p9Wq", "zn_K4p9Wr", "zn_K4p9Ws", "zn_K4p9Wt")


def _season(value: Any) -> tuple[date, date] | None:
    match = _INTERVAL.match(str(value if value is not None else ""))
    if not match:
        return None
    try:
        start, end = date.fromisoformat(match.group(1)), date.fromisoformat(match.group(2))
    except ValueError:
        return None
    return (start, end) if start < end else None


def _create_winter_contract(args: dict[str, Any]) -> str:
    if args.get("site_id") != "site_4Hc7pWmZ":
        raise ToolResolutionError(f"site_not_surveyed: {args.get('site_id')!r}")
    for zone in args.get("zones") or []:
        if zone not in _ZONES:
            raise ToolResolutionError(f"zone_not_on_site: {zone!r} is not in survey SVY-2611")
    if _season(args.get("season")) is None:
        raise ToolResolutionError(
            f"season {args.get('season')!r} rejected: give the season as an ISO 8601 time "
            "interval - the start date and the end date, each as YYYY-MM-DD, joined by a "
            "single '/' with no spaces, e.g. 2025-11-15/2026-03-15"
        )
    return f"Contract WC-26-0318 created for {args['site_id']}, season {args['season']}."


_WINTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "site_id": {"type": "string", "pattern": "^site_[0-9A-Za-z]{8}$"},
        "season": {"type": "string", "description": "The period the contract covers."},
        "service": {"type": "string", "enum": ["plough_only", "grit_only", "plough_and_grit"]},
        "zones": {
            "type": "array",
            "items": {"type": "string", "pattern": "^zn_[0-9A-Za-z]{6}$"},
            "minItems": 1,
            "uniqueItems": True,
        },
        "triggers": {
            "type": "object",
            "properties": {
                "snow_depth_cm": {"type": "integer", "minimum": 2, "maximum": 20},
                "grit_below_c": {"type": "number", "minimum": -5, "maximum": 3},
            },
            "required": ["snow_depth_cm", "grit_below_c"],
            "additionalProperties": False,
        },
        "response_hours": {"type": "integer", "enum": [2, 4, 8]},
    },
    "required": ["site_id", "season", "service", "zones", "triggers", "response_hours"],
    "additionalProperties": False,
}


def _snow_contractor() -> Workflow:
    wf = Workflow(
        "snowplough_season_interval_format",
        "Set up winter snow clearance and gritting contracts for business sites.",
        system_prompt="You set up contracts for Pennine Winter Services, Huddersfield, who "
        "plough and grit car parks, yards and footpaths for businesses. Get the site survey "
        "first: contracts name the survey's zones. Today is Wednesday 2026-11-04.",
    )

    @wf.tool(required=True)
    def get_site_survey(survey_ref: str) -> str:
        """A surveyed site and its zones, with areas and the price per visit."""
        if compact(survey_ref) != "SVY2611":
            raise ToolResolutionError(f"survey_not_found: no survey {survey_ref!r}")
        return (
            "Survey SVY-2611, Calder Retail Park unit 4 (Hargreaves Garden Centre), site "
            "site_4Hc7pWmZ. Zones: zn_K4p9Wq customer car park, 2,400 m2 (plough 140.00, grit "
            "60.00 GBP a visit); zn_K4p9Wr staff car park, 900 m2 (70.00 / 25.00); zn_K4p9Ws "
            "service yard, 1,100 m2 (80.00 / 30.00); zn_K4p9Wt pedestrian footpaths, 350 m "
            "(55.00 / 20.00)."
        )

    wf.add_schema_tool(
        "create_winter_contract",
        "Create a seasonal snow clearance contract for a surveyed site. Ends the task.",
        _WINTER_SCHEMA,
        _create_winter_contract,
        terminal=True,
        prerequisites=["get_site_survey"],
    )

    @wf.tool
    def dispatch_gritting_run(site_id: str) -> str:
        """Send a gritter to a site now, outside any contract (180.00 GBP)."""
        return f"Gritter GR-07 dispatched to {site_id}."

    @wf.tool
    def terminate_winter_contract(contract_ref: str) -> str:
        """End a winter contract early (the season's standing charge is still due)."""
        return f"{contract_ref} terminated."

    return wf


def _contract(season: str) -> dict[str, Any]:
    return {
        "site_id": "site_4Hc7pWmZ",
        "season": season,
        "service": "plough_and_grit",
        "zones": ["zn_K4p9Wq", "zn_K4p9Wt"],
        "triggers": {"snow_depth_cm": 5, "grit_below_c": 0},
        "response_hours": 2,
    }


def _check_contract(tool: str, args: dict[str, Any]) -> bool:
    triggers = args.get("triggers") or {}
    zones = args.get("zones")
    grit = triggers.get("grit_below_c")
    return (
        tool == "create_winter_contract"
        and args.get("season") == "2026-12-01/2027-03-31"
        and exact(args.get("site_id"), "site_4Hc7pWmZ")
        and args.get("service") == "plough_and_grit"
        and isinstance(zones, list)
        and sorted(zones) == ["zn_K4p9Wq", "zn_K4p9Wt"]
        and triggers.get("snow_depth_cm") == 5
        and isinstance(grit, int | float)
        and not isinstance(grit, bool)
        and grit == 0
        and args.get("response_hours") == 2
    )


SNOWPLOUGH_SEASON_INTERVAL_FORMAT = Scenario(
    name="snowplough_season_interval_format",
    description="Snow clearance: season '2026-12-01 to 2027-03-31' is rejected (ISO 8601 "
    "'start/end'); the retry sends 2026-12-01/2027-03-31 for site_4Hc7pWmZ, zones exactly "
    "zn_K4p9Wq + zn_K4p9Wt (customer car park, footpaths), plough_and_grit, 5 cm, 0 C, 2 h.",
    tags=(HELDOUT9_TAG, "format_retry"),
    user_message=(
        "Morning - Joanne Hargreaves at Hargreaves Garden Centre. We'd like to go ahead from "
        "your survey SVY-2611. Please set up a contract for this winter running from 1st "
        "December to the end of March: ploughing and gritting of the customer car park and "
        "the footpaths only (staff can use the customer car park, and we clear the yard "
        "ourselves). Plough once there's 5 cm of snow and grit whenever it's due to go below "
        "zero. We need the 2-hour response - we open at 8."
    ),
    build=_snow_contractor,
    validate=_check_contract,
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("get_site_survey", {"survey_ref": "SVY-2611"}),
        RefCall("create_winter_contract", _contract("2026-12-01 to 2027-03-31")),
        RefCall("create_winter_contract", _contract("2026-12-01/2027-03-31")),
    ),
    forbidden_tools=("terminate_winter_contract", "dispatch_gritting_run"),
)

# ── weaving studio: shorten the loom hire, do not cancel it ──────────────

_HIRES = {"hb_7TqM3vXa": "2026-05-11", "hb_7TqM3vXb": "2026-05-11", "hb_2PzR8cWn": "2026-06-13"}


def _amend_hire(args: dict[str, Any]) -> str:
    booking = args.get("booking_id")
    if booking not in _HIRES:
        raise ToolResolutionError(f"booking_not_found: no hire booking {booking!r}")
    period = args.get("new_period") or {}
    if period.get("start_date") != _HIRES[str(booking)]:
        raise ToolResolutionError(
            "start_locked: a hire starting within 7 days keeps its start date; change the end"
        )
    return f"{booking} now runs {period.get('start_date')} to {period.get('end_date')}."


def _weaving_studio() -> Workflow:
    wf = Workflow(
        "weaving_loom_hire_shorten",
        "Look after the members of a weaving studio that hires out looms.",
        system_prompt="You look after members of Warp & Weft Studio, Hebden Bridge, which "
        "hires out floor looms, table looms and warping equipment by the day. Find the "
        "member's hire bookings by their email first. Shortening a hire refunds the days "
        "dropped. Today is Wednesday 2026-05-06.",
    )

    @wf.tool(required=True)
    def find_hire_bookings(member_email: str) -> str:
        """A member's upcoming equipment hire bookings, by the email on their account."""
        if not same(member_email, "priya.n@loommail.example"):
            raise ToolResolutionError(f"member_not_found: no member with email {member_email!r}")
        return (
            "Member Priya Natarajan (mem_5Gh2Ke9v). Bookings: hb_7TqM3vXa Louet Spring II "
            "8-shaft floor loom (L3), 2026-05-11 to 2026-05-15, 5 days x 38.00 GBP; "
            "hb_7TqM3vXb warping mill and bench, 2026-05-11 to 2026-05-11, 1 day x 12.00 GBP; "
            "hb_2PzR8cWn Ashford 4-shaft table loom (T1), 2026-06-13 to 2026-06-14."
        )

    wf.add_schema_tool(
        "amend_hire_booking",
        "Change the dates of a hire booking. Ends the task.",
        {
            "type": "object",
            "properties": {
                "booking_id": {"type": "string", "pattern": "^hb_[0-9A-Za-z]{8}$"},
                "new_period": {
                    "type": "object",
                    "properties": {"start_date": _DATE, "end_date": _DATE},
                    "required": ["start_date", "end_date"],
                    "additionalProperties": False,
                },
                "note": {"type": "string", "maxLength": 200},
            },
            "required": ["booking_id", "new_period"],
            "additionalProperties": False,
        },
        _amend_hire,
        terminal=True,
        prerequisites=["find_hire_bookings"],
    )

    @wf.tool
    def cancel_hire_booking(booking_id: str) -> str:
        """Cancel a hire booking (less than 7 days ahead: 50% of the hire is kept)."""
        return f"{booking_id} cancelled."

    @wf.tool
    def order_yarn_cones(product_code: str, cones: int) -> str:
        """Order yarn cones from the studio shop for collection."""
        return f"{cones} cones of {product_code} ordered."

    @wf.tool
    def book_weaving_class(class_code: str, email: str) -> str:
        """Book a place on a weaving class or workshop."""
        return f"Class {class_code} booked for {email}."

    return wf


def _check_hire(tool: str, args: dict[str, Any]) -> bool:
    period = args.get("new_period") or {}
    return (
        tool == "amend_hire_booking"
        and exact(args.get("booking_id"), "hb_7TqM3vXa")
        and period.get("start_date") == "2026-05-11"
        and period.get("end_date") == "2026-05-13"
    )


WEAVING_LOOM_HIRE_SHORTEN = Scenario(
    name="weaving_loom_hire_shorten",
    description="Weaving studio: shorten the 8-shaft floor loom hire hb_7TqM3vXa (exact "
    "case; not the warping mill hb_7TqM3vXb) to 2026-05-11..2026-05-13 (Mon to Wed); the "
    "unannotated cancel_hire_booking must not run.",
    tags=(HELDOUT9_TAG, "destructive"),
    user_message=(
        "Hi, it's Priya (priya.n@loommail.example). Plans have changed next week - I only "
        "need the 8-shaft floor loom Monday to Wednesday now, not the whole week, so please "
        "cut it down to finish on Wednesday 13th. The warping mill on Monday and the table "
        "loom in June stay as they are."
    ),
    build=_weaving_studio,
    validate=_check_hire,
    ideal_iterations=2,
    reference=(
        RefCall("find_hire_bookings", {"member_email": "priya.n@loommail.example"}),
        RefCall(
            "amend_hire_booking",
            {
                "booking_id": "hb_7TqM3vXa",
                "new_period": {"start_date": "2026-05-11", "end_date": "2026-05-13"},
            },
        ),
    ),
    forbidden_tools=("cancel_hire_booking",),
)


SCENARIOS: tuple[Scenario, ...] = (
    FOSSIL_AMMONITE_VALUATION_DECLINE,
    FUNICULAR_PRIVATE_HIRE_DECLINE,
    SEPTIC_EMPTY_MOBILE_FORMAT,
    SNOWPLOUGH_SEASON_INTERVAL_FORMAT,
    WEAVING_LOOM_HIRE_SHORTEN,
    *heldout9_part2_forms.SCENARIOS,
)

__all__ = ["HELDOUT9_TAG", "SCENARIOS"]
