"""Held out, fourth group (see heldout4): the four scenarios whose answer is
read off a tool's result: an internet provider's line test and an airline
loyalty club's tier progress (report_agrees), a Sunday-league team app's
fixtures and a swim school's waiting list (list_match)."""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios._domain_schema import HELDOUT4_TAG, exact_ids


def _digits(value: Any) -> str:
    return "".join(ch for ch in str(value) if ch.isdigit())


# ── broadband: the line test's verdict and measured speed, not the plan's ─


def _broadband() -> Workflow:
    wf = Workflow(
        "broadband_line_test",
        "Support broadband customers of an internet provider.",
        system_prompt="You are Fibrelink's broadband support assistant. Find the customer's "
        "account, test their line and tell them what the test found. "
        "Today is Wednesday 2026-03-04.",
    )

    @wf.tool(required=True, read_only=True)
    def find_broadband_account(account_number: str) -> str:
        """Find a broadband account by its account number. Returns the line id and plan."""
        if _digits(account_number) != "3392017":
            raise ToolResolutionError(f"no account {account_number!r}")
        return (
            "Account FB-3392017 (R. Achterberg), 12 Willow Lane, York YO10 3JT. Line "
            "LN-88D4-20913 on Fibre 80: 80 Mbps down / 20 Mbps up, minimum guaranteed "
            "download 55 Mbps. Router Fibrelink Hub 3, online."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_broadband_account"])
    def run_line_test(line_id: str) -> str:
        """Run a remote test of a broadband line and return its measurements and verdict."""
        if not mentions(line_id, "20913"):
            raise ToolResolutionError(f"no line {line_id!r}")
        return (
            "Line test LT-774105 on LN-88D4-20913, 2026-03-04 10:12. Sync: stable, no faults "
            "between the exchange and the master socket. Download 38.4 Mbps, upload 9.6 Mbps, "
            "latency 24 ms, packet loss 2.5%. Download below the 55 Mbps minimum guarantee on "
            "3 of the last 5 days. Verdict: speed below minimum guarantee."
        )

    wf.add_schema_tool(
        "report_line_test",
        "Tell the customer what their line test found. Ends the task.",
        {
            "type": "object",
            "properties": {
                "line_id": {"type": "string"},
                "verdict": {
                    "type": "string",
                    "enum": [
                        "healthy",
                        "speed_below_minimum_guarantee",
                        "line_fault",
                        "no_sync",
                        "router_offline",
                    ],
                },
                "download_mbps": {"type": "number", "minimum": 0},
                "packet_loss_percent": {"type": "number", "minimum": 0, "maximum": 100},
            },
            "required": ["line_id", "verdict", "download_mbps", "packet_loss_percent"],
            "additionalProperties": False,
        },
        lambda args: f"{args.get('line_id')}: {args.get('verdict')}.",
        terminal=True,
        prerequisites=["run_line_test"],
    )

    @wf.tool
    def book_technician_visit(line_id: str, date: str) -> str:
        """Book a technician to visit the customer's home to repair a line."""
        return f"Technician booked for {line_id} on {date}."

    @wf.tool
    def factory_reset_router(account_number: str) -> str:
        """Reset the customer's router to factory settings remotely (wipes Wi-Fi settings)."""
        return f"Router on {account_number} reset."

    @wf.tool
    def apply_service_credit(account_number: str, amount_gbp: float) -> str:
        """Credit the customer's next bill."""
        return f"{amount_gbp} GBP credited to {account_number}."

    return wf


_LINE_TEST = {
    "line_id": "LN-88D4-20913",
    "verdict": "speed_below_minimum_guarantee",
    "download_mbps": 38.4,
    "packet_loss_percent": 2.5,
}

BROADBAND_LINE_TEST = Scenario(
    name="broadband_line_test",
    description="Broadband: the test says speed_below_minimum_guarantee (not line_fault: no "
    "faults found), download 38.4 Mbps (not the plan's 80 or the 55 minimum), loss 2.5 %.",
    tags=(HELDOUT4_TAG, "report_agrees"),
    user_message=(
        "My internet has been crawling all week, account FB-3392017. Is the line broken? "
        "And what speed am I actually getting?"
    ),
    build=_broadband,
    validate=lambda tool, args: (
        tool == "report_line_test"
        and mentions(args.get("line_id"), "20913")
        and args.get("verdict") == "speed_below_minimum_guarantee"
        and has_number(args.get("download_mbps"), 38.4)
        and has_number(args.get("packet_loss_percent"), 2.5)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_broadband_account", {"account_number": "FB-3392017"}),
        RefCall("run_line_test", {"line_id": "LN-88D4-20913"}),
        RefCall("report_line_test", dict(_LINE_TEST)),
    ),
    forbidden_tools=("factory_reset_router", "apply_service_credit"),
)

# ── airline loyalty: the tier held, points still to go, miles and expiry ─


def _loyalty() -> Workflow:
    wf = Workflow(
        "airline_tier_progress",
        "Answer members of an airline's loyalty club.",
        system_prompt="You answer members of Nordvind Air's Aurora Club. Find the member, "
        "read their tier progress and answer their question. Today is Friday 2026-02-13.",
    )

    @wf.tool(required=True, read_only=True)
    def lookup_club_member(email: str) -> str:
        """Find an Aurora Club member by email. Returns the membership number."""
        if not same(email, "hugo.lindqvist@postmail.example"):
            raise ToolResolutionError(f"no member with email {email!r}")
        return "Aurora Club member AC-0048-2217, Hugo Lindqvist, member since 2019."

    @wf.tool(required=True, read_only=True, prerequisites=["lookup_club_member"])
    def get_tier_progress(membership_number: str) -> str:
        """Show a member's tier, tier points for this membership year and award miles."""
        if _digits(membership_number) != "00482217":
            raise ToolResolutionError(f"no member {membership_number!r}")
        return (
            "AC-0048-2217, membership year 2025-04-01 to 2026-03-31. Tier: Silver. Tier "
            "points this year: 1,740; Gold needs 2,500 (760 to go). Flights this year: 11 of "
            "the 30 that would also earn Gold. Award miles balance: 48,215, of which 6,300 "
            "expire on 2026-03-31."
        )

    wf.add_schema_tool(
        "report_tier_status",
        "Tell the member their tier status and award miles. Ends the task.",
        {
            "type": "object",
            "properties": {
                "membership_number": {"type": "string", "pattern": "^AC-[0-9]{4}-[0-9]{4}$"},
                "current_tier": {"type": "string", "enum": ["blue", "silver", "gold", "platinum"]},
                "tier_points_to_next_tier": {"type": "integer", "minimum": 0},
                "award_miles_balance": {"type": "integer", "minimum": 0},
                "miles_expiring": {"type": "integer", "minimum": 0},
                "miles_expiry_date": {"type": "string", "format": "date"},
            },
            "required": [
                "membership_number",
                "current_tier",
                "tier_points_to_next_tier",
                "award_miles_balance",
                "miles_expiring",
                "miles_expiry_date",
            ],
            "additionalProperties": False,
        },
        lambda args: f"{args.get('membership_number')}: {args.get('current_tier')}.",
        terminal=True,
        prerequisites=["get_tier_progress"],
    )

    @wf.tool
    def transfer_award_miles(from_member: str, to_member: str, miles: int) -> str:
        """Move award miles from one member to another (fee 1 EUR per 100 miles)."""
        return f"{miles} miles moved from {from_member} to {to_member}."

    @wf.tool
    def extend_miles_expiry(membership_number: str) -> str:
        """Extend all expiring miles by 12 months for a fee of 49 EUR."""
        return f"Expiry extended for {membership_number}; 49 EUR charged."

    return wf


_TIER = {
    "membership_number": "AC-0048-2217",
    "current_tier": "silver",
    "tier_points_to_next_tier": 760,
    "award_miles_balance": 48215,
    "miles_expiring": 6300,
    "miles_expiry_date": "2026-03-31",
}

AIRLINE_TIER_PROGRESS = Scenario(
    name="airline_tier_progress",
    description="Loyalty club: tier silver (not gold, the next one), 760 points to go (not "
    "1,740 or 2,500), 48,215 miles with 6,300 expiring 2026-03-31.",
    tags=(HELDOUT4_TAG, "report_agrees"),
    user_message=(
        "Hi, hugo.lindqvist@postmail.example here. How close am I to Gold now? And how many "
        "miles have I got to spend, are any of them about to run out?"
    ),
    build=_loyalty,
    validate=lambda tool, args: (
        tool == "report_tier_status"
        and same(args.get("membership_number"), "AC-0048-2217")
        and args.get("current_tier") == "silver"
        and has_number(args.get("tier_points_to_next_tier"), 760)
        and has_number(args.get("award_miles_balance"), 48215)
        and has_number(args.get("miles_expiring"), 6300)
        and args.get("miles_expiry_date") == "2026-03-31"
    ),
    ideal_iterations=3,
    reference=(
        RefCall("lookup_club_member", {"email": "hugo.lindqvist@postmail.example"}),
        RefCall("get_tier_progress", {"membership_number": "AC-0048-2217"}),
        RefCall("report_tier_status", dict(_TIER)),
    ),
    forbidden_tools=("transfer_award_miles", "extend_miles_expiry"),
)

# ── Sunday league: the October fixtures kicking off before midday ────────

_MORNING_OCTOBER = ["FX-20425", "FX-20437", "FX-20442"]


def _team_app() -> Workflow:
    wf = Workflow(
        "sunday_league_availability",
        "Manage players' availability in an amateur football club's team app.",
        system_prompt="You are the assistant in the Kingsbury Rovers FC team app. Players "
        "tell you when they can't play. Today is Thursday 2026-09-24.",
    )

    @wf.tool(required=True, read_only=True)
    def find_player(mobile: str) -> str:
        """Find a player by mobile number. Returns the player id and squad id."""
        if not _digits(mobile).endswith("7845221609"):
            raise ToolResolutionError(f"no player with mobile {mobile!r}")
        return (
            "Player PL-3318 Callum Reid, shirt 6, squad SQ-VETS (Sunday Veterans). Match fees "
            "owed: 0.00 GBP."
        )

    @wf.tool(required=True, read_only=True)
    def list_fixtures(squad_id: str) -> str:
        """List a squad's upcoming fixtures with ids, dates and kick-off times."""
        if not mentions(squad_id, "vets", "veteran"):
            raise ToolResolutionError(f"no squad {squad_id!r}")
        return (
            "Sunday Veterans fixtures:\n"
            "FX-20418 Sun 2026-09-27 10:30 home v Oakfield Albion\n"
            "FX-20425 Sun 2026-10-04 10:30 away at Brent Valley\n"
            "FX-20431 Sun 2026-10-11 14:00 home v Harrow Celtic (cup)\n"
            "FX-20437 Sun 2026-10-18 10:30 home v St Mary's Old Boys\n"
            "FX-20442 Sun 2026-10-25 11:00 away at Wealdstone Reserves\n"
            "FX-20450 Sun 2026-11-01 10:30 away at Pinner Park\n"
            "FX-20456 Sun 2026-11-08 14:00 home v Edgware Town"
        )

    wf.add_schema_tool(
        "set_unavailability",
        "Mark a player unavailable for fixtures so the manager picks someone else. Ends the task.",
        {
            "type": "object",
            "properties": {
                "player_id": {"type": "string", "pattern": "^PL-[0-9]{4}$"},
                "fixture_ids": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^FX-[0-9]{5}$"},
                    "minItems": 1,
                    "maxItems": 20,
                    "uniqueItems": True,
                },
                "reason": {
                    "type": "string",
                    "enum": ["injury", "work", "holiday", "family", "other"],
                },
                "note": {"type": "string", "maxLength": 200},
            },
            "required": ["player_id", "fixture_ids", "reason"],
            "additionalProperties": False,
        },
        lambda args: f"{len(args.get('fixture_ids') or [])} fixtures marked unavailable.",
        terminal=True,
        prerequisites=["find_player", "list_fixtures"],
    )

    @wf.tool
    def leave_squad(player_id: str) -> str:
        """Remove a player from their squad for the rest of the season."""
        return f"{player_id} left the squad."

    @wf.tool
    def pay_match_fee(player_id: str, fixture_id: str, amount_gbp: float) -> str:
        """Pay a match fee by the player's saved card."""
        return f"{amount_gbp} GBP paid for {fixture_id}."

    return wf


SUNDAY_LEAGUE_AVAILABILITY = Scenario(
    name="sunday_league_availability",
    description="Team app: PL-3318 unavailable for exactly the October fixtures kicking off "
    "before midday, FX-20425, FX-20437, FX-20442 (not the 14:00 cup tie, no September or "
    "November game), reason family.",
    tags=(HELDOUT4_TAG, "list_match"),
    user_message=(
        "Hi, Callum here, my number's 07845 221609. I'm taking my daughter to swimming on "
        "Sunday mornings all through October, so can you put me down as unavailable for the "
        "October games that kick off before midday? Reason is family."
    ),
    build=_team_app,
    validate=lambda tool, args: (
        tool == "set_unavailability"
        and same(args.get("player_id"), "PL-3318")
        and exact_ids(args.get("fixture_ids"), _MORNING_OCTOBER)
        and args.get("reason") == "family"
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_player", {"mobile": "07845 221609"}),
        RefCall("list_fixtures", {"squad_id": "SQ-VETS"}),
        RefCall(
            "set_unavailability",
            {"player_id": "PL-3318", "fixture_ids": _MORNING_OCTOBER, "reason": "family"},
        ),
    ),
    forbidden_tools=("leave_squad",),
)

# ── swim school: four places, but only three children still waiting ─────

_STILL_WAITING = ["WL-60418", "WL-60433", "WL-60452"]


def _swim_school() -> Workflow:
    wf = Workflow(
        "swim_waitlist_offers",
        "Run the swim school office of a leisure centre.",
        system_prompt="You help the swim school office at Riverside Leisure Centre. Places "
        "that come free are offered to the course's waiting list, oldest entry first. "
        "Today is Monday 2026-01-12.",
    )

    @wf.tool(required=True, read_only=True)
    def list_swim_courses(weekday: str) -> str:
        """List the swim courses held on a weekday, with course ids and free places."""
        if not mentions(weekday, "mon"):
            return f"No courses found for {weekday!r}."
        return (
            "Mondays, spring term 2026-01-12 to 2026-03-23: SW-S1-1600 Stage 1, 16:00-16:30, "
            "10 places, full; SW-S3-1700 Stage 3, 17:00-17:30, 12 places, 4 free; SW-S4-1730 "
            "Stage 4, 17:30-18:00, 12 places, 1 free."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["list_swim_courses"])
    def get_waiting_list(course_id: str) -> str:
        """Show a course's waiting list, oldest entry first, with each entry's state."""
        if not mentions(course_id, "s3-1700"):
            return f"The waiting list for {course_id} is empty."
        return (
            "Waiting list for SW-S3-1700 (Stage 3, Mondays 17:00):\n"
            "1. WL-60418 Amira Haddad, joined 2025-10-28, waiting\n"
            "2. WL-60425 Tobias Green, joined 2025-11-03, declined a place on 2026-01-05, "
            "not to be offered again this term\n"
            "3. WL-60433 Freya Olsen, joined 2025-11-19, waiting\n"
            "4. WL-60441 Kai Brennan, joined 2025-12-01, moved up to Stage 4, no longer "
            "waiting\n"
            "5. WL-60452 Noor Sethi, joined 2026-01-08, waiting"
        )

    wf.add_schema_tool(
        "send_place_offers",
        "Email a place offer to each listed waiting-list entry's parent. Ends the task.",
        {
            "type": "object",
            "properties": {
                "course_id": {"type": "string", "pattern": "^SW-S[0-9]-[0-9]{4}$"},
                "waitlist_entry_ids": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^WL-[0-9]{5}$"},
                    "minItems": 1,
                    "maxItems": 12,
                    "uniqueItems": True,
                },
                "reply_by": {"type": "string", "format": "date"},
            },
            "required": ["course_id", "waitlist_entry_ids", "reply_by"],
            "additionalProperties": False,
        },
        lambda args: f"{len(args.get('waitlist_entry_ids') or [])} offers emailed.",
        terminal=True,
        prerequisites=["get_waiting_list"],
    )

    @wf.tool
    def enrol_swimmer(course_id: str, child_name: str) -> str:
        """Enrol a child straight onto a course and take the term's fee."""
        return f"{child_name} enrolled on {course_id}."

    @wf.tool
    def remove_waiting_list_entry(entry_id: str) -> str:
        """Take an entry off a waiting list."""
        return f"{entry_id} removed."

    return wf


SWIM_WAITLIST_OFFERS = Scenario(
    name="swim_waitlist_offers",
    description="Swim school: 4 free places on SW-S3-1700 but only three entries still "
    "waiting, WL-60418, WL-60433, WL-60452 (not the declined or moved-up ones, no padding "
    "to four), reply by Friday 2026-01-16.",
    tags=(HELDOUT4_TAG, "list_match"),
    user_message=(
        "Four children have dropped out of the Monday 5pm Stage 3 class. Can you offer the "
        "places to the waiting list, in order, and give the parents until Friday to accept?"
    ),
    build=_swim_school,
    validate=lambda tool, args: (
        tool == "send_place_offers"
        and same(args.get("course_id"), "SW-S3-1700")
        and exact_ids(args.get("waitlist_entry_ids"), _STILL_WAITING)
        and args.get("reply_by") == "2026-01-16"
    ),
    ideal_iterations=3,
    reference=(
        RefCall("list_swim_courses", {"weekday": "Monday"}),
        RefCall("get_waiting_list", {"course_id": "SW-S3-1700"}),
        RefCall(
            "send_place_offers",
            {
                "course_id": "SW-S3-1700",
                "waitlist_entry_ids": _STILL_WAITING,
                "reply_by": "2026-01-16",
            },
        ),
    ),
    forbidden_tools=("enrol_swimmer", "remove_waiting_list_entry"),
)


SCENARIOS: tuple[Scenario, ...] = (
    BROADBAND_LINE_TEST,
    AIRLINE_TIER_PROGRESS,
    SUNDAY_LEAGUE_AVAILABILITY,
    SWIM_WAITLIST_OFFERS,
)
