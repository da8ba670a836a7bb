"""Held out, seventh group, part 2: a council cemetery office and a darkroom
(decline), a water-well driller and a canal boat licensing office
(format_retry) here; a hot-air balloon operator, a bouldering gym, a harp
rental shop and a cemetery's memorial permits (destructive, schema) in
heldout7_part2_forms. Written from the user's side only, tagged `heldout7`
plus one failure kind (two each). The format tools take raw JSON Schema the
way a business API publishes it and their errors state the expected format."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, same
from forge_evals.scenarios import heldout7_part2_forms
from forge_evals.scenarios._domain_schema import (
    HELDOUT7_TAG,
    compact,
    decline_tool,
    declined_scenario,
)

_DATE: dict[str, Any] = {"type": "string", "format": "date"}


def _declined(
    name: str, description: str, user_message: str, build: Callable[[], Workflow]
) -> Scenario:
    """A request no tool serves: the run declines and calls no other tool."""
    return declined_scenario(
        HELDOUT7_TAG, name, description, user_message, build, "We don't handle that here."
    )


# ── cemetery office: the crematorium is run by someone else ─────────────


def _cemetery_office() -> Workflow:
    wf = Workflow(
        "cremation_slot_cemetery_decline",
        "Answer the bereavement services line of a council cemetery office.",
        system_prompt="You answer enquiries for Kirkby Vale Council Bereavement Services, "
        "which runs the town's two cemeteries (Northgate and St Helen's Road). You can search "
        "burial records, reserve a new grave plot, book an interment (burial) in a grave, and "
        "look up exclusive rights of burial deeds. The crematorium at Hollins Lane is run "
        "privately by Pennine Crematoria Ltd; we cannot book cremations, chapel times there "
        "or the scattering of ashes in its gardens. Today is Thursday 2026-04-16.",
    )

    @wf.tool
    def search_burial_records(surname: str, year_of_death: int) -> str:
        """Search the burial registers of both cemeteries by surname and year of death."""
        return f"{surname}, {year_of_death}: 1 record, Northgate section C, grave 114."

    @wf.tool
    def reserve_grave_plot(cemetery: str, section: str, purchaser_email: str) -> str:
        """Reserve a new grave plot and issue an exclusive right of burial (1,240.00 GBP)."""
        return f"Plot reserved in {cemetery} section {section}: GP-2026-0419."

    @wf.tool
    def book_interment(grave_ref: str, date: str, time: str, funeral_director: str) -> str:
        """Book a burial into a grave (the funeral director usually books it)."""
        return f"Interment IN-88213 booked in {grave_ref} on {date} at {time}."

    @wf.tool
    def get_burial_deed(deed_number: str) -> str:
        """Look up an exclusive right of burial deed and who holds it."""
        return f"Deed {deed_number}: held by the estate of J. Marsden, 2 interments remaining."

    decline_tool(wf)
    return wf


CREMATION_SLOT_CEMETERY_DECLINE = _declined(
    "cremation_slot_cemetery_decline",
    "Cemetery office: a family wants a cremation slot and the chapel at the privately run "
    "crematorium; the council office only runs burials (book_interment or a plot would be "
    "wrong), so decline.",
    (
        "Hello, my father passed away on Monday and we have decided on a cremation rather than "
        "a burial. Could you book us the chapel and a cremation time at Hollins Lane for "
        "Friday the 24th, late morning if possible? Around 60 people will come. Our funeral "
        "director is Hartley & Sons. My email is s.marsden@familymail.example. Sarah Marsden"
    ),
    _cemetery_office,
)

# ── darkroom hire: space and enlargers for hire, no developing service ──


def _darkroom() -> Workflow:
    wf = Workflow(
        "film_developing_darkroom_decline",
        "Book sessions for a community darkroom that hires out its space.",
        system_prompt="You are the booking assistant of Silverlight Darkroom, Bristol, a "
        "members' darkroom. We hire out enlarger stations and the film processing room by the "
        "session, sell chemistry packs and run inductions; members do their own work. We do "
        "not offer a lab service: we never develop, print or scan film for customers. Today "
        "is Saturday 2026-03-07.",
    )

    @wf.tool
    def check_enlarger_availability(date: str) -> str:
        """Free enlarger stations (B&W 35mm/120, one 5x4) on a date."""
        return f"{date}: stations EN-2 and EN-5 free 10:00-14:00, EN-4 (5x4) free 15:00-19:00."

    @wf.tool
    def book_darkroom_session(member_id: str, station: str, date: str, start: str) -> str:
        """Book a four-hour session on an enlarger station or the film room (18.00 GBP)."""
        return f"Session DR-5530 booked: {station} on {date} from {start}."

    @wf.tool
    def buy_chemistry_pack(member_id: str, pack: str) -> str:
        """Sell a chemistry pack (developer, stop, fixer) to use during sessions."""
        return f"Chemistry pack {pack} added to {member_id}'s account."

    @wf.tool
    def book_induction(email: str, date: str) -> str:
        """Book the two-hour darkroom induction new members must do (25.00 GBP)."""
        return f"Induction IND-0712 booked for {email} on {date}."

    decline_tool(wf)
    return wf


FILM_DEVELOPING_DARKROOM_DECLINE = _declined(
    "film_developing_darkroom_decline",
    "Darkroom hire: a visitor wants three rolls of colour film developed and scanned by "
    "post; the darkroom only hires out space (a session or chemistry pack would be wrong), "
    "so decline.",
    (
        "Hi! I've got three rolls of Portra 400 from a trip to Iceland that need developing. "
        "Could I post them to you to develop and scan at high resolution? I'm not a member "
        "and I don't have time to come in, so happy to pay whatever the lab price is. Email is "
        "tomas.k@snapmail.example"
    ),
    _darkroom,
)

# ── water-well drilling: the site's grid reference has a fixed form ─────

_GRID = re.compile(r"^[A-Z]{2}(\d{8}|\d{10})$")


def _well_driller() -> Workflow:
    wf = Workflow(
        "borehole_survey_grid_ref_format",
        "Book site surveys for a water-well and borehole drilling company.",
        system_prompt="You book work for Deepwater Drilling Ltd, Herefordshire. Find the "
        "customer's quote first, then book the hydrogeological site survey that comes before "
        "any drilling. Today is Tuesday 2026-05-12.",
    )

    @wf.tool(required=True)
    def find_quote(quote_ref: str) -> str:
        """Look up a drilling quote by its reference."""
        if compact(quote_ref) != "QDW26117":
            raise ToolResolutionError(f"no quote {quote_ref!r}; quote refs look like QDW-26-117")
        return (
            "Quote QDW-26-117 for customer CU-4471-HF Owen Pritchard, Upper Bryn Farm, "
            "Kington HR5 3LP: 80 m domestic borehole with 125 mm liner, submersible pump and "
            "UV filter, 14,850.00 GBP + VAT. Site survey required; site grid ref not on file."
        )

    def book(args: dict[str, Any]) -> str:
        site = args.get("site") or {}
        grid = str(site.get("grid_ref", ""))
        if not _GRID.match(grid):
            raise ToolResolutionError(
                f"site.grid_ref {grid!r} is not valid: give the Ordnance Survey grid "
                "reference as the two capital letters of the 100 km square followed straight "
                "away by 8 or 10 digits (eastings then northings), with no spaces, e.g. "
                "SO29805712"
            )
        return f"Survey SV-30982 booked on {args.get('survey_date')} at {grid}."

    wf.add_schema_tool(
        "book_site_survey",
        "Book the hydrogeologist's site survey for a quoted borehole. Ends the task.",
        {
            "type": "object",
            "properties": {
                "quote_ref": {"type": "string", "pattern": "^QDW-\\d{2}-\\d{3}$"},
                "customer_id": {"type": "string", "pattern": "^CU-\\d{4}-[A-Z]{2}$"},
                "survey_date": _DATE,
                "site": {
                    "type": "object",
                    "properties": {
                        "grid_ref": {
                            "type": "string",
                            "description": "Ordnance Survey grid reference of the spot.",
                        },
                        "vehicle_access": {"type": "string", "enum": ["lorry", "4x4", "none"]},
                    },
                    "required": ["grid_ref", "vehicle_access"],
                    "additionalProperties": False,
                },
            },
            "required": ["quote_ref", "customer_id", "survey_date", "site"],
            "additionalProperties": False,
        },
        book,
        terminal=True,
        prerequisites=["find_quote"],
    )

    @wf.tool
    def check_rig_calendar(week_starting: str) -> str:
        """The drilling rig's bookings in a week."""
        return f"Week of {week_starting}: rig at Leominster Mon-Wed, free Thu-Fri."

    @wf.tool
    def cancel_quote(quote_ref: str) -> str:
        """Withdraw a quote; the price is no longer held."""
        return f"{quote_ref} withdrawn."

    return wf


_SURVEY = {"quote_ref": "QDW-26-117", "customer_id": "CU-4471-HF", "survey_date": "2026-05-20"}


def _survey(grid_ref: str) -> dict[str, Any]:
    return {**_SURVEY, "site": {"grid_ref": grid_ref, "vehicle_access": "4x4"}}


BOREHOLE_SURVEY_GRID_REF_FORMAT = Scenario(
    name="borehole_survey_grid_ref_format",
    description="Well drilling: grid ref 'SO 2981 5573' sent with spaces is rejected (letters "
    "+ digits, no spaces); the retry sends SO29815573 for QDW-26-117 / CU-4471-HF, survey Wed "
    "2026-05-20, access 4x4.",
    tags=(HELDOUT7_TAG, "format_retry"),
    user_message=(
        "Hello, Owen Pritchard here, quote QDW-26-117. I'm happy to go ahead with the site "
        "survey - could your man come on Wednesday 20th May? The spot we want the borehole is "
        "in the top field, grid reference SO 2981 5573. Only a 4x4 will get up the track, no "
        "lorries until we've put stone down."
    ),
    build=_well_driller,
    validate=lambda tool, args: (
        tool == "book_site_survey"
        and (args.get("site") or {}).get("grid_ref") in ("SO29815573", "SO2981055730")
        and (args.get("site") or {}).get("vehicle_access") == "4x4"
        and same(args.get("quote_ref"), "QDW-26-117")
        and same(args.get("customer_id"), "CU-4471-HF")
        and args.get("survey_date") == "2026-05-20"
    ),
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("find_quote", {"quote_ref": "QDW-26-117"}),
        RefCall("book_site_survey", _survey("SO 2981 5573")),
        RefCall("book_site_survey", _survey("SO29815573")),
    ),
    forbidden_tools=("cancel_quote",),
)

# ── canal boat licence: the Boat Safety certificate number's form ───────

_BSS = re.compile(r"^BSS-\d{4}-\d{6}$")


def _canal_licences() -> Workflow:
    wf = Workflow(
        "canal_licence_bss_format",
        "Renew boat licences for a canal navigation authority.",
        system_prompt="You handle boat licences for the Midland Waterways Trust. Find the boat "
        "by its index number first, then renew its licence. A renewal needs the boat's "
        "current Boat Safety Scheme certificate. Today is Wednesday 2026-02-25.",
    )

    @wf.tool(required=True)
    def find_boat(index_number: str) -> str:
        """Look up a licensed boat by its six-digit index number."""
        if compact(index_number) != "521907":
            raise ToolResolutionError(f"no boat with index number {index_number!r}")
        return (
            "Boat 521907 'Kingfisher Lady', 57 ft narrowboat, licence holder LH-80331 Jean "
            "Adebayo. Licence MWL-2025-521907 (standard, 12 months) valid to 2026-02-28 "
            "inclusive. Home mooring: Braunston Marina. BSS certificate on file expired "
            "2026-01-31."
        )

    def renew(args: dict[str, Any]) -> str:
        bss = str(args.get("bss_certificate", ""))
        if not _BSS.match(bss):
            raise ToolResolutionError(
                f"bss_certificate {bss!r} rejected: Boat Safety Scheme certificate numbers "
                "are entered as BSS-YYYY-NNNNNN, the capital letters BSS, a dash, the "
                "four-digit year of the examination, a dash and the six-digit serial, e.g. "
                "BSS-2025-004817"
            )
        return f"Licence MWL-2026-521907 issued from {args.get('start_date')}."

    wf.add_schema_tool(
        "renew_boat_licence",
        "Renew a boat's licence for a term. Ends the task.",
        {
            "type": "object",
            "properties": {
                "index_number": {"type": "string", "pattern": "^\\d{6}$"},
                "holder_id": {"type": "string", "pattern": "^LH-\\d{5}$"},
                "start_date": _DATE,
                "term_months": {"type": "integer", "enum": [6, 12]},
                "bss_certificate": {"type": "string", "description": "BSS certificate number."},
            },
            "required": [
                "index_number",
                "holder_id",
                "start_date",
                "term_months",
                "bss_certificate",
            ],
            "additionalProperties": False,
        },
        renew,
        terminal=True,
        prerequisites=["find_boat"],
    )

    @wf.tool
    def get_licence_price(length_ft: int, term_months: int) -> str:
        """Price of a standard licence by boat length and term."""
        return f"{length_ft} ft, {term_months} months: {length_ft * 19.5:.2f} GBP."

    @wf.tool
    def surrender_licence(licence_number: str) -> str:
        """Surrender a licence early; unused whole months are refunded."""
        return f"{licence_number} surrendered."

    return wf


_RENEW = {"index_number": "521907", "holder_id": "LH-80331", "start_date": "2026-03-01"}


def _renewal(bss: str) -> dict[str, Any]:
    return {**_RENEW, "term_months": 12, "bss_certificate": bss}


CANAL_LICENCE_BSS_FORMAT = Scenario(
    name="canal_licence_bss_format",
    description="Canal licence: BSS certificate '2026 / 011254' sent as given is rejected "
    "(BSS-YYYY-NNNNNN); the retry sends BSS-2026-011254 for boat 521907, holder LH-80331, "
    "12 months from 2026-03-01 (the day after the old one expires).",
    tags=(HELDOUT7_TAG, "format_retry"),
    user_message=(
        "Hi, I need to renew the licence for Kingfisher Lady, index number 521907, for "
        "another 12 months carrying straight on from when the current one runs out. She "
        "passed her Boat Safety exam last week - the certificate number on the paperwork is "
        "2026 / 011254. Thanks, Jean Adebayo"
    ),
    build=_canal_licences,
    validate=lambda tool, args: (
        tool == "renew_boat_licence"
        and args.get("bss_certificate") == "BSS-2026-011254"
        and same(args.get("index_number"), "521907")
        and same(args.get("holder_id"), "LH-80331")
        and args.get("start_date") == "2026-03-01"
        and args.get("term_months") == 12
        and type(args.get("term_months")) is int
    ),
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("find_boat", {"index_number": "521907"}),
        RefCall("renew_boat_licence", _renewal("2026 / 011254")),
        RefCall("renew_boat_licence", _renewal("BSS-2026-011254")),
    ),
    forbidden_tools=("surrender_licence",),
)


SCENARIOS: tuple[Scenario, ...] = (
    CREMATION_SLOT_CEMETERY_DECLINE,
    FILM_DEVELOPING_DARKROOM_DECLINE,
    BOREHOLE_SURVEY_GRID_REF_FORMAT,
    CANAL_LICENCE_BSS_FORMAT,
    *heldout7_part2_forms.SCENARIOS,
)

__all__ = ["SCENARIOS"]
