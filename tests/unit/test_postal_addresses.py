"""Postal addresses the user wrote, read into an address object's parts
(forge_core/guardrails/postal_addresses.py). Pure logic on hand-made
tools: no model is needed to say which part is the town."""

from __future__ import annotations

from typing import Any

from forge_core.guardrails import TurnFacts
from forge_core.guardrails.postal_addresses import PostalAddress, written_addresses
from forge_core.guardrails.registry import preferred_values
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}


def test_an_address_is_read_back_from_its_postcode_to_where_the_prose_ends() -> None:
    got = written_addresses("The party is at The Old Mill Barn, Fen Lane, Ely CB7 4DL, indoors.")
    assert got == [PostalAddress("The Old Mill Barn", "Fen Lane", "Ely", "CB7 4DL")]
    # A unit and its estate are one line; the prose before them is not.
    got = written_addresses("Collection is from Unit 9, Harbour Trading Park, Hull HU1 2AA.")
    assert got == [PostalAddress(None, "Unit 9, Harbour Trading Park", "Hull", "HU1 2AA")]
    # No town before the postcode; a postcode on its own is no address line.
    assert written_addresses("I'm locked out of 5 Park Row, LS1 5HD, help!") == [
        PostalAddress(None, "5 Park Row", None, "LS1 5HD")
    ]
    assert written_addresses("My postcode is SW1A 1AA.") == [
        PostalAddress(None, None, None, "SW1A 1AA")
    ]


def test_a_postcode_of_digits_leads_its_town() -> None:
    got = written_addresses("Ship to Lena Holm, Kungsgatan 4, 111 43 Stockholm, Sweden.")
    assert got == [PostalAddress("Lena Holm", "Kungsgatan 4", "Stockholm", "111 43")]
    # A year is no postcode.
    assert written_addresses("Two seats, 2026 Summer Gala, please.") == []


def _facts(tool: ToolSpec, request: str) -> TurnFacts:
    return TurnFacts(Workflow("wf", [tool], terminal_tools=[tool.name]), [request], [], [])


def test_an_address_object_takes_its_parts_and_a_building_leads_the_line() -> None:
    address = {
        "type": "object",
        "properties": {"line1": STR, "line2": STR, "town": STR, "postcode": STR},
        "required": ["line1", "town", "postcode"],
    }
    contact = {"type": "object", "properties": {"name": STR, "email": STR}}
    survey = ToolSpec(
        "request_survey",
        "Request a roof survey",
        {
            "type": "object",
            "properties": {"address": address, "contact": contact},
            "required": ["address"],
        },
    )
    got = preferred_values(
        _facts(survey, "We've bought Rose Cottage, 3 Mill Road, Hay HR3 5AB. I'm Jo Bell.")
    ).values
    assert got["request_survey.line1"] == ["Rose Cottage, 3 Mill Road"]
    assert got["request_survey.town"] == ["Hay"]
    assert got["request_survey.postcode"] == ["HR3 5AB"]
    # The contact's name is no part of the address.
    assert got.get("request_survey.name") != ["Rose Cottage"]


def test_a_place_name_fills_the_address_objects_own_name() -> None:
    venue = {
        "type": "object",
        "properties": {"name": STR, "line1": STR, "town": STR, "postcode": STR},
    }
    book = ToolSpec(
        "book_venue_delivery",
        "Deliver to a venue",
        {"type": "object", "properties": {"venue": venue}, "required": ["venue"]},
    )
    got = preferred_values(
        _facts(book, "Deliver to The Corn Exchange, Market Hill, Bury IP33 1BT on Friday.")
    ).values
    assert got["book_venue_delivery.name"] == ["The Corn Exchange"]
    assert got["book_venue_delivery.line1"] == ["Market Hill"]
    assert got["book_venue_delivery.town"] == ["Bury"]
