"""Held out, eighth group, part 2: a falconry centre and an observatory's
night tours (decline), a native seed bank and a horse livery yard
(format_retry) and a car-share club (destructive) here; a vinyl pressing
plant (destructive), a stained-glass conservation studio and a roof surveyor
(schema) in heldout8_part2_forms. Written from the user's side only, tagged `heldout8`
plus one failure kind (two each). The format tools take raw JSON Schema the
way a business API publishes it and their errors state the expected format."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions, same
from forge_evals.scenarios import heldout8_part2_forms
from forge_evals.scenarios._domain_schema import (
    HELDOUT8_TAG,
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
        HELDOUT8_TAG, name, description, user_message, build, "We don't offer that."
    )


# ── falconry centre: displays and experiences, no pest-bird control ──────


def _falconry() -> Workflow:
    wf = Workflow(
        "falconry_pigeon_control_decline",
        "Take bookings for a falconry centre's displays and experiences.",
        system_prompt="You are the booking assistant of Hawkridge Falconry, Shropshire. We "
        "fly our birds of prey at public displays (fetes, weddings, schools, county shows), "
        "run hawk walks and owl experience days at our centre near Much Wenlock, and sell "
        "gift vouchers for them. We do not do pest-bird control or bird abatement contracts "
        "for sites, and we never sell, lend or rehome our birds. Today is Thursday 2026-03-12.",
    )

    @wf.tool
    def check_display_dates(date: str) -> str:
        """Whether the display team and birds are free on a date."""
        return f"{date}: display team free; Harris hawk, barn owl and peregrine available."

    @wf.tool
    def book_flying_display(event_name: str, date: str, postcode: str, display_type: str) -> str:
        """Book a 30- or 45-minute flying display at an event (from 450.00 GBP)."""
        return f"Display FD-2026-0318 booked for {event_name} on {date} ({postcode})."

    @wf.tool
    def book_hawk_walk(email: str, date: str, people: int) -> str:
        """Book a two-hour hawk walk at the centre, flying a Harris hawk (75.00 GBP each)."""
        return f"Hawk walk HW-5521 booked for {people} on {date}; confirmation to {email}."

    @wf.tool
    def buy_experience_voucher(experience: str, recipient_email: str) -> str:
        """Sell a gift voucher for a hawk walk or owl experience, valid 12 months."""
        return f"Voucher EV-88104 for {experience} sent to {recipient_email}."

    decline_tool(wf)
    return wf


FALCONRY_PIGEON_CONTROL_DECLINE = _declined(
    "falconry_pigeon_control_decline",
    "Falconry centre: a warehouse wants a falconer and Harris hawk twice a week to clear "
    "pigeons; the centre does displays and experiences only, no pest-bird control (a display "
    "or hawk walk booking would be wrong), so decline.",
    (
        "Hi, we run a distribution warehouse on the edge of Telford and we've got a real "
        "pigeon problem in the loading bays - droppings everywhere. I've read that flying a "
        "hawk scares them off. Could you send a falconer with a Harris hawk twice a week for "
        "the next three months, starting Monday 16th? Happy to sign a contract. Postcode TF3 "
        "3BD. Mark Ellery, facilities manager, m.ellery@brackenlogistics.example"
    ),
    _falconry,
)

# ── observatory: night tours and telescope sessions, no star naming ──────


def _observatory() -> Workflow:
    wf = Workflow(
        "observatory_star_naming_decline",
        "Answer the visitor line of a public observatory.",
        system_prompt="You answer the visitor line of Cheviot Edge Observatory, "
        "Northumberland. We run guided night sky tours (two hours, up to 40 visitors), "
        "private telescope sessions with one of our astronomers, and sell gift vouchers for "
        "both; a clouded-out tour can be moved to another night. We do not sell star names or "
        "star registry certificates (no star can be officially named that way) and we do not "
        "sell or hire out telescopes. Today is Tuesday 2026-02-10.",
    )

    @wf.tool
    def check_tour_dates(date: str) -> str:
        """Night sky tours on a date and the seats left (moon phase included)."""
        return f"{date}: tour 19:30 (12 seats left), tour 22:00 (31 seats left); moon 18%."

    @wf.tool
    def book_night_tour(date: str, start_time: str, tickets: int, email: str) -> str:
        """Book seats on a guided night sky tour (32.00 GBP a seat)."""
        return f"Tour NT-40917 booked: {tickets} seats on {date} at {start_time}."

    @wf.tool
    def book_telescope_session(date: str, hours: int, email: str) -> str:
        """Book a private session on the 0.5 m telescope with an astronomer (140.00 GBP/h)."""
        return f"Telescope session TS-2210 booked on {date} for {hours} h."

    @wf.tool
    def buy_observatory_voucher(product: str, amount_gbp: float, recipient_email: str) -> str:
        """Sell a gift voucher for a tour or telescope session."""
        return f"Voucher OV-3391 for {product} ({amount_gbp:.2f} GBP) sent to {recipient_email}."

    decline_tool(wf)
    return wf


OBSERVATORY_STAR_NAMING_DECLINE = _declined(
    "observatory_star_naming_decline",
    "Observatory: a visitor wants to name a star after her mother and get a framed star "
    "certificate; the observatory sells no star names (a voucher or telescope session would "
    "be wrong), so decline.",
    (
        "Hello! My mum turns 70 next month and she loves the night sky. I'd like to name a "
        "star after her - 'Margaret Ann Hollis' - and get the official certificate with the "
        "star's coordinates, framed, ideally a star she could find through your big "
        "telescope. Could you register that for me and send the certificate to "
        "hollis.family@mailbox.example? Thanks, Joanne"
    ),
    _observatory,
)

# ── seed bank: the collection site's coordinates have a fixed form ───────

_COORDS = re.compile(r"^(-?\d{1,2}\.\d{1,6}), ?(-?\d{1,3}\.\d{1,6})$")


def _coords(value: Any) -> tuple[float, float] | None:
    """(lat, lon) of a 'LAT,LON' decimal-degrees string, or None."""
    match = _COORDS.match(str(value if value is not None else "").strip())
    if not match:
        return None
    lat, lon = float(match.group(1)), float(match.group(2))
    return (lat, lon) if abs(lat) <= 90 and abs(lon) <= 180 else None


def _seed_bank() -> Workflow:
    wf = Workflow(
        "seed_deposit_coordinates_format",
        "Register wild seed collections deposited at a native seed bank.",
        system_prompt="You register deposits for the Wealden Native Seed Bank, which stores "
        "wild-collected seed of UK native plants for conservation. Collectors are registered "
        "volunteers and may only collect where a landowner permission is on file. Find the "
        "collector by their collector code first, then register the deposit. Today is "
        "Thursday 2026-07-02.",
    )

    @wf.tool(required=True)
    def find_collector(collector_code: str) -> str:
        """Look up a registered seed collector by their collector code."""
        if compact(collector_code) != "C0388":
            raise ToolResolutionError(
                f"collector_not_found: no collector {collector_code!r}; codes look like C-0388"
            )
        return (
            "Collector C-0388 Ruth Okafor, collector id col_5bN7yQ2k. Landowner permissions on "
            "file: LP-2026-014 Harting Down (National Trust), valid to 2026-12-31; "
            "LP-2026-022 Kithurst Hill (private), valid to 2026-09-30. Deposits this year: 3."
        )

    def register(args: dict[str, Any]) -> str:
        site = args.get("site") or {}
        coords = site.get("coordinates")
        if _coords(coords) is None:
            raise ToolResolutionError(
                f"site.coordinates {coords!r} is not valid: give WGS84 decimal degrees as "
                "'LAT,LON' - latitude first, a comma, then longitude - as signed numbers only, "
                "with no N/S/E/W letters or degree signs (south and west are negative), "
                "e.g. '-33.86880,151.20930'"
            )
        return f"Deposit accepted: accession WNSB-26-0417 ({args.get('seed_count')} seeds)."

    wf.add_schema_tool(
        "register_seed_deposit",
        "Register a wild seed collection handed in for banking. Ends the task.",
        {
            "type": "object",
            "properties": {
                "collector_id": {"type": "string", "pattern": "^col_[0-9A-Za-z]{8}$"},
                "permit_ref": {"type": "string", "pattern": "^LP-\\d{4}-\\d{3}$"},
                "taxon": {
                    "type": "object",
                    "properties": {
                        "genus": {"type": "string", "pattern": "^[A-Z][a-z]+$"},
                        "species": {"type": "string", "pattern": "^[a-z-]+$"},
                    },
                    "required": ["genus", "species"],
                    "additionalProperties": False,
                },
                "collection_date": _DATE,
                "site": {
                    "type": "object",
                    "properties": {
                        "coordinates": {
                            "type": "string",
                            "description": "Where the seed was collected.",
                        },
                        "habitat": {
                            "type": "string",
                            "enum": [
                                "chalk_grassland",
                                "hay_meadow",
                                "woodland_edge",
                                "heathland",
                                "wetland",
                                "coastal",
                            ],
                        },
                    },
                    "required": ["coordinates", "habitat"],
                    "additionalProperties": False,
                },
                "seed_count": {"type": "integer", "minimum": 50, "maximum": 100000},
            },
            "required": [
                "collector_id",
                "permit_ref",
                "taxon",
                "collection_date",
                "site",
                "seed_count",
            ],
            "additionalProperties": False,
        },
        register,
        terminal=True,
        prerequisites=["find_collector"],
    )

    @wf.tool
    def lookup_accession(accession_number: str) -> str:
        """An accession's taxon, seed count and last germination test."""
        return f"{accession_number}: Primula veris, 1,850 seeds, germination 92% (2025-11)."

    @wf.tool
    def retire_accession(accession_number: str) -> str:
        """Take an accession out of the bank and destroy its remaining seed."""
        return f"{accession_number} retired."

    return wf


_DEPOSIT = {
    "collector_id": "col_5bN7yQ2k",
    "permit_ref": "LP-2026-014",
    "taxon": {"genus": "Primula", "species": "veris"},
    "collection_date": "2026-06-28",
    "seed_count": 2400,
}


def _deposit(coordinates: str) -> dict[str, Any]:
    return {**_DEPOSIT, "site": {"coordinates": coordinates, "habitat": "chalk_grassland"}}


def _check_deposit(tool: str, args: dict[str, Any]) -> bool:
    taxon = args.get("taxon") or {}
    site = args.get("site") or {}
    coords = _coords(site.get("coordinates"))
    return (
        tool == "register_seed_deposit"
        and coords is not None
        and abs(coords[0] - 50.9712) < 1e-6
        and abs(coords[1] + 0.8853) < 1e-6
        and site.get("habitat") == "chalk_grassland"
        and exact(args.get("collector_id"), "col_5bN7yQ2k")
        and same(args.get("permit_ref"), "LP-2026-014")
        and same(taxon.get("genus"), "primula")
        and same(taxon.get("species"), "veris")
        and args.get("collection_date") == "2026-06-28"
        and args.get("seed_count") == 2400
        and type(args.get("seed_count")) is int
    )


SEED_DEPOSIT_COORDINATES_FORMAT = Scenario(
    name="seed_deposit_coordinates_format",
    description="Seed bank: GPS 'N 50.9712, W 0.8853' is rejected (signed decimal 'LAT,LON', "
    "west negative); the retry sends 50.9712,-0.8853 for col_5bN7yQ2k under Harting Down's "
    "LP-2026-014 (not Kithurst's), Primula veris, 2,400 seeds, collected Sun 2026-06-28.",
    tags=(HELDOUT8_TAG, "format_retry"),
    user_message=(
        "Hi, Ruth here (collector C-0388). I've got a cowslip collection, Primula veris, to "
        "deposit - collected on Sunday 28th June from the chalk grassland on the north slope "
        "of Harting Down. I counted roughly 2,400 seeds once cleaned. My GPS gave the spot as "
        "N 50.9712, W 0.8853. Thanks!"
    ),
    build=_seed_bank,
    validate=_check_deposit,
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("find_collector", {"collector_code": "C-0388"}),
        RefCall("register_seed_deposit", _deposit("N 50.9712, W 0.8853")),
        RefCall("register_seed_deposit", _deposit("50.9712,-0.8853")),
    ),
    forbidden_tools=("retire_accession",),
)

# ── livery yard: the horse passport's UELN has a fixed form ──────────────

_UELN = re.compile(r"^\d{6}[0-9A-Z]{9}$")


def _livery_yard() -> Workflow:
    wf = Workflow(
        "livery_ueln_format",
        "Take horses onto livery at a livery yard.",
        system_prompt="You handle livery for Larkspur Farm Livery, near Tetbury. Check which "
        "stables are free for the livery type first, then register the horse onto livery in "
        "one of them. Every horse must have its passport's UELN recorded. Today is Thursday "
        "2026-03-12.",
    )

    @wf.tool(required=True)
    def check_stable_vacancies(livery_type: str) -> str:
        """Free stables for a livery type (full, part or diy)."""
        if not mentions(livery_type, "part"):
            return f"{livery_type}: no vacancies until May."
        return (
            "Part livery vacancies: STB-N04 north block, 12x12 ft, free from 2026-03-16; "
            "STB-S11 south block, 12x14 ft (our largest), free from 2026-03-20; STB-S07 "
            "south block, 12x12 ft, reserved for another horse arriving 2026-03-21."
        )

    def register(args: dict[str, Any]) -> str:
        if args.get("stable_id") not in ("STB-N04", "STB-S11"):
            raise ToolResolutionError(f"stable_unavailable: {args.get('stable_id')!r}")
        ueln = str((args.get("horse") or {}).get("passport_ueln", ""))
        if not _UELN.match(ueln):
            raise ToolResolutionError(
                f"horse.passport_ueln {ueln!r} rejected: a UELN is 15 characters written "
                "together with no spaces or dashes - the 3-digit country code, the 3-digit "
                "code of the passport-issuing database, then the 9-character identification "
                "number (digits or capital letters), e.g. 826002ABC123456"
            )
        return f"Livery agreement LV-26-0093: {args['stable_id']} from {args.get('start_date')}."

    wf.add_schema_tool(
        "register_livery_horse",
        "Register a horse onto livery in a free stable (first month's fee invoiced). "
        "Ends the task.",
        {
            "type": "object",
            "properties": {
                "stable_id": {"type": "string", "pattern": "^STB-[NS]\\d{2}$"},
                "livery_type": {"type": "string", "enum": ["full", "part", "diy"]},
                "start_date": _DATE,
                "horse": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "sex": {"type": "string", "enum": ["mare", "gelding", "stallion"]},
                        "height_hands": {"type": "string", "pattern": "^\\d{1,2}\\.[0-3]$"},
                        "passport_ueln": {"type": "string", "description": "Passport UELN."},
                    },
                    "required": ["name", "sex", "height_hands", "passport_ueln"],
                    "additionalProperties": False,
                },
                "owner": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 2},
                        "email": {"type": "string", "format": "email"},
                    },
                    "required": ["name", "email"],
                    "additionalProperties": False,
                },
            },
            "required": ["stable_id", "livery_type", "start_date", "horse", "owner"],
            "additionalProperties": False,
        },
        register,
        terminal=True,
        prerequisites=["check_stable_vacancies"],
    )

    @wf.tool
    def book_farrier_visit(stable_id: str, date: str) -> str:
        """Book the yard farrier for a horse (trim 35.00 GBP, full set 95.00 GBP)."""
        return f"Farrier booked for {stable_id} on {date}."

    @wf.tool
    def give_livery_notice(stable_id: str) -> str:
        """Serve four weeks' notice ending a horse's livery agreement."""
        return f"Notice served on {stable_id}."

    return wf


_OWNER = {"name": "Hannah Cole", "email": "hannah.cole@greenmail.example"}


def _livery(ueln: str) -> dict[str, Any]:
    horse = {"name": "Willow", "sex": "mare", "height_hands": "16.1", "passport_ueln": ueln}
    return {
        "stable_id": "STB-S11",
        "livery_type": "part",
        "start_date": "2026-03-21",
        "horse": horse,
        "owner": _OWNER,
    }


def _check_livery(tool: str, args: dict[str, Any]) -> bool:
    horse = args.get("horse") or {}
    owner = args.get("owner") or {}
    return (
        tool == "register_livery_horse"
        and horse.get("passport_ueln") == "826002100417239"
        and exact(args.get("stable_id"), "STB-S11")
        and args.get("livery_type") == "part"
        and args.get("start_date") == "2026-03-21"
        and same(horse.get("name"), "willow")
        and horse.get("sex") == "mare"
        and str(horse.get("height_hands")) == "16.1"
        and same(owner.get("email"), "hannah.cole@greenmail.example")
        and mentions(owner.get("name"), "cole")
    )


LIVERY_UELN_FORMAT = Scenario(
    name="livery_ueln_format",
    description="Livery yard: UELN '826 002 100417239' sent as printed is rejected (15 "
    "characters, no spaces); the retry sends 826002100417239 for mare Willow 16.1hh, part "
    "livery in the larger south stable STB-S11 (not S07, reserved) from Sat 2026-03-21.",
    tags=(HELDOUT8_TAG, "format_retry"),
    user_message=(
        "Hello, I'd like to bring my mare Willow onto part livery with you, moving in on "
        "Saturday 21st March. If possible could she have the bigger stable in the south "
        "block? She's 16.1hh and quite broad. Her passport UELN is 826 002 100417239. The "
        "owner is me, Hannah Cole, hannah.cole@greenmail.example"
    ),
    build=_livery_yard,
    validate=_check_livery,
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("check_stable_vacancies", {"livery_type": "part"}),
        RefCall("register_livery_horse", _livery("826 002 100417239")),
        RefCall("register_livery_horse", _livery("826002100417239")),
    ),
    forbidden_tools=("give_livery_notice",),
)


# ── car-share club: cancel the Saturday van, keep the car bookings ───────

_RESERVATIONS = ("res_9Vd2KqLm", "res_9Vd2KqPx", "res_4Tn8WcJe")


def _car_club() -> Workflow:
    wf = Workflow(
        "car_club_cancel_van",
        "Look after the members of a pay-per-hour car-share club.",
        system_prompt="You are the member support assistant of Commonwheel Car Club, Leeds, "
        "a pay-per-hour car and van share. Find the member's reservations by their member "
        "number first. Cancelling more than 24 hours before the start is free. Today is "
        "Thursday 2026-10-08.",
    )

    @wf.tool(required=True)
    def list_member_reservations(member_number: str) -> str:
        """A member's account and upcoming reservations, by member number."""
        if compact(member_number) != "CC20417":
            raise ToolResolutionError(
                f"member_not_found: {member_number!r}; member numbers look like CC-20417"
            )
        return (
            "Member CC-20417 Tom Achebe, account acct_Lm3vR8pZ, plan Flex (6.50 GBP/h car, "
            "9.00 GBP/h van). Upcoming reservations: res_9Vd2KqLm Ford Transit Custom van "
            "'Hawthorn', bay Headingley Lane, Sat 2026-10-10 09:00-13:00; res_9Vd2KqPx Toyota "
            "Yaris 'Bramble', bay Hyde Park Road, Sat 2026-10-10 14:00-18:00; res_4Tn8WcJe "
            "Toyota Yaris 'Bramble', bay Hyde Park Road, Sat 2026-10-17 10:00-16:00."
        )

    def cancel(args: dict[str, Any]) -> str:
        rid = args.get("reservation_id")
        if rid not in _RESERVATIONS:
            raise ToolResolutionError(f"reservation_not_found: no reservation {rid!r}")
        return f"{rid} cancelled, no charge (more than 24 hours' notice)."

    wf.add_schema_tool(
        "cancel_vehicle_reservation",
        "Cancel one vehicle reservation. Ends the task.",
        {
            "type": "object",
            "properties": {
                "reservation_id": {"type": "string", "pattern": "^res_[0-9A-Za-z]{8}$"},
                "reason": {
                    "type": "string",
                    "enum": ["plans_changed", "booked_by_mistake", "vehicle_unsuitable", "other"],
                },
            },
            "required": ["reservation_id", "reason"],
            "additionalProperties": False,
        },
        cancel,
        terminal=True,
        prerequisites=["list_member_reservations"],
    )

    @wf.tool
    def end_membership(account_id: str) -> str:
        """Close a member's account, cancelling all of its reservations."""
        return f"{account_id} closed."

    @wf.tool
    def extend_reservation(reservation_id: str, new_end: str) -> str:
        """Move the end time of a reservation later, if the vehicle is free."""
        return f"{reservation_id} now ends {new_end}."

    @wf.tool
    def report_vehicle_damage(vehicle_name: str, description: str) -> str:
        """Report damage found on a vehicle before or during a trip."""
        return f"Damage report DR-7731 logged for {vehicle_name}."

    return wf


CAR_CLUB_CANCEL_VAN = Scenario(
    name="car_club_cancel_van",
    description="Car-share club: the member asks to cancel Saturday morning's van, so "
    "cancel_vehicle_reservation res_9Vd2KqLm (exact case; not the same-day car "
    "res_9Vd2KqPx), reason plans_changed (or other); the unannotated end_membership must "
    "not run.",
    tags=(HELDOUT8_TAG, "destructive"),
    user_message=(
        "Hi, Tom Achebe here, member CC-20417. The flat move this Saturday has been called "
        "off, so please cancel the van I booked for that morning. I still want the little car "
        "that afternoon, and the one the weekend after too."
    ),
    build=_car_club,
    validate=lambda tool, args: (
        tool == "cancel_vehicle_reservation"
        and exact(args.get("reservation_id"), "res_9Vd2KqLm")
        and args.get("reason") in ("plans_changed", "other")
    ),
    ideal_iterations=2,
    reference=(
        RefCall("list_member_reservations", {"member_number": "CC-20417"}),
        RefCall(
            "cancel_vehicle_reservation",
            {"reservation_id": "res_9Vd2KqLm", "reason": "plans_changed"},
        ),
    ),
    forbidden_tools=("end_membership",),
)


SCENARIOS: tuple[Scenario, ...] = (
    FALCONRY_PIGEON_CONTROL_DECLINE,
    OBSERVATORY_STAR_NAMING_DECLINE,
    SEED_DEPOSIT_COORDINATES_FORMAT,
    LIVERY_UELN_FORMAT,
    CAR_CLUB_CANCEL_VAN,
    *heldout8_part2_forms.SCENARIOS,
)

__all__ = ["HELDOUT8_TAG", "SCENARIOS"]
