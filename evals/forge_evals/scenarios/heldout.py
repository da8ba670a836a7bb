"""Held out: sixteen workflows in businesses no other group touches, written
from the user's side only (README, docs, the scenario format; not the engine)
after `domains` had been tuned on, to measure generalization before tuning.
This module: real-estate viewings, software licences, utility billing, ferry
bookings, customs, bike sharing, warehouse picking, translation jobs;
heldout_part2: telecom, a dental lab, court filings, plumbing dispatch,
clinical-trial visits, school enrolment, crop irrigation, meeting rooms.
Each is tagged `heldout` plus one kind of failure (issue 34's list):
`carry_id`, `user_value`, `report_agrees`, `list_match`, `decline` (no tool
but `decline_request` may run), `format_retry`, `schema` (nested objects,
arrays of objects, `format`, `pattern`, bounds) and `destructive`
(unannotated irreversible look-alikes, or a question no write tool may serve).
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios import heldout_part2
from forge_evals.scenarios._domain_schema import (
    HELDOUT_TAG,
    enum_param,
    exact_ids,
    id_list,
    obj,
    text_param,
)

# ── real estate: a viewing id, then a hold token, carried into the move ───

_HOLD_THURSDAY_TEN = "HT-5Q2M9X"


def _viewings() -> Workflow:
    wf = Workflow(
        "viewing_reschedule_hold",
        "Manage property viewings for the agency's clients.",
        system_prompt="You are the lettings agency's booking assistant. You can look up "
        "clients and their viewings and move or cancel viewings. Today is Monday 2026-03-09.",
    )

    @wf.tool(required=True, read_only=True)
    def find_client(email: str) -> str:
        """Find a client of the agency by email address."""
        if not mentions(email, "r.kowalski@example.com"):
            raise ToolResolutionError(f"no client with email {email!r}")
        return "Rafal Kowalski, client id CL-30418, looking to rent, budget 1,450 GBP/month."

    @wf.tool(required=True, read_only=True, prerequisites=["find_client"])
    def list_viewings(client_id: str) -> str:
        """List a client's upcoming viewings."""
        if not same(client_id, "CL-30418"):
            raise ToolResolutionError(f"no client {client_id!r}")
        return (
            "2 upcoming: VW-88213 14 Elm Row flat 2, Tue 2026-03-10 15:00; "
            "VW-88240 3/2 Dock Street, Wed 2026-03-11 11:00."
        )

    @wf.tool(required=True, prerequisites=["list_viewings"])
    def hold_slot(viewing_id: str, date: str, time_24h: str) -> str:
        """Hold a new slot (date YYYY-MM-DD, time_24h HH:MM) for a viewing. Returns a hold token."""
        if not mentions(viewing_id, "VW-88213", "VW-88240"):
            raise ToolResolutionError(f"no viewing {viewing_id!r}")
        right = mentions(date, "2026-03-12") and mentions(time_24h, "10:00")
        token = _HOLD_THURSDAY_TEN if right else "HT-7JD1KC"
        return f"Slot {date} {time_24h} held for {viewing_id}; hold token {token} (10 minutes)."

    @wf.tool(terminal=True, prerequisites=["hold_slot"])
    def reschedule_viewing(viewing_id: str, hold_token: str) -> str:
        """Move a viewing to the slot a hold token reserves. Ends the task."""
        return f"{viewing_id} moved ({hold_token})."

    @wf.tool
    def cancel_viewing(viewing_id: str) -> str:
        """Cancel a viewing and give the slot to the waiting list."""
        return f"{viewing_id} cancelled."

    return wf


VIEWING_RESCHEDULE_HOLD = Scenario(
    name="viewing_reschedule_hold",
    description="Real estate: move the 3pm viewing (VW-88213, from the listing) to Thursday "
    "10:00 with the hold token HT-5Q2M9X that hold_slot returns; cancel_viewing must not run.",
    tags=(HELDOUT_TAG, "carry_id"),
    user_message=(
        "Hi, it's r.kowalski@example.com. Could you move my 3pm viewing to Thursday at ten? "
        "Something came up at work."
    ),
    build=_viewings,
    validate=lambda tool, args: (
        tool == "reschedule_viewing"
        and same(args.get("viewing_id"), "VW-88213")
        and same(args.get("hold_token"), _HOLD_THURSDAY_TEN)
    ),
    ideal_iterations=4,
    reference=(
        RefCall("find_client", {"email": "r.kowalski@example.com"}),
        RefCall("list_viewings", {"client_id": "CL-30418"}),
        RefCall("hold_slot", {"viewing_id": "VW-88213", "date": "2026-03-12", "time_24h": "10:00"}),
        RefCall("reschedule_viewing", {"viewing_id": "VW-88213", "hold_token": "HT-5Q2M9X"}),
    ),
    forbidden_tools=("cancel_viewing",),
)

# ── software licences: a seat id and a user id from two different look-ups ─


def _licences() -> Workflow:
    wf = Workflow(
        "licence_seat_reassign",
        "Administer the company's software subscriptions and seats.",
        system_prompt="You manage software licences for Northwind's IT team: look up users "
        "and seats, reassign, buy or remove seats.",
    )

    @wf.tool(required=True, read_only=True)
    def find_user(email: str) -> str:
        """Find an employee's directory entry by work email. Returns their user id."""
        if not mentions(email, "mei.tan@northwind.example"):
            raise ToolResolutionError(f"no user with email {email!r}")
        return "Mei Tan, Design, started 2026-03-02. User id USR-40917. No licences yet."

    def seats(args: dict[str, Any]) -> str:
        if args.get("product") != "figma":
            return f"{args.get('product')}: 12 of 12 seats used."
        return (
            "Figma Professional, 5 of 5 seats used: SEAT-7731 Jonas Berg (USR-38802, last "
            "active 2026-01-14), SEAT-7732 Ana Ruiz (USR-39120), SEAT-7745 Luis Ortega "
            "(USR-39355), SEAT-7750 Priya Shah (USR-39871), SEAT-7768 Tom Weller (USR-40102)."
        )

    wf.add_schema_tool(
        "list_seats",
        "List who holds the seats of one product subscription.",
        obj(product=enum_param("figma", "slack", "jira", "adobe_cc", "zoom")),
        seats,
        required=True,
    )

    @wf.tool(terminal=True, prerequisites=["find_user", "list_seats"])
    def reassign_seat(seat_id: str, new_user_id: str) -> str:
        """Give an existing seat to another user. Ends the task."""
        if not mentions(seat_id, "SEAT-77"):
            raise ToolResolutionError(f"no seat {seat_id!r}")
        return f"{seat_id} now assigned to {new_user_id}."

    @wf.tool
    def remove_seat(seat_id: str) -> str:
        """Remove a seat from the subscription permanently; its files go to the owner."""
        return f"{seat_id} removed."

    @wf.tool
    def buy_seats(product: str, quantity: int) -> str:
        """Add paid seats to a product subscription."""
        return f"{quantity} {product} seats added."

    return wf


LICENCE_SEAT_REASSIGN = Scenario(
    name="licence_seat_reassign",
    description="Software licences: reassign Jonas's Figma seat SEAT-7731 to Mei by her user "
    "id USR-40917 (not her email, not Jonas's user id); no seat removed or bought.",
    tags=(HELDOUT_TAG, "carry_id"),
    user_message=(
        "Jonas Berg has left. Please move his Figma seat over to our new designer, "
        "mei.tan@northwind.example."
    ),
    build=_licences,
    validate=lambda tool, args: (
        tool == "reassign_seat"
        and same(args.get("seat_id"), "SEAT-7731")
        and same(args.get("new_user_id"), "USR-40917")
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_user", {"email": "mei.tan@northwind.example"}),
        RefCall("list_seats", {"product": "figma"}),
        RefCall("reassign_seat", {"seat_id": "SEAT-7731", "new_user_id": "USR-40917"}),
    ),
    forbidden_tools=("remove_seat", "buy_seats"),
)

# ── utility billing: the user's instalment, month, day and "no letters" ───


def _billing() -> Workflow:
    wf = Workflow(
        "utility_payment_plan",
        "Help energy customers with their bills and payment plans.",
        system_prompt="You are the billing assistant of an energy supplier. Today is "
        "2026-02-10. Look the account up before changing anything.",
    )

    @wf.tool(required=True, read_only=True)
    def get_account(account_number: str) -> str:
        """Look up a billing account by its 10-digit account number."""
        if "".join(ch for ch in str(account_number) if ch.isdigit()) != "7730194288":
            raise ToolResolutionError(f"no account {account_number!r}")
        return (
            "Account 7730194288 (Helen Marsh): balance due 412.60 GBP, overdue since "
            "2026-01-28; statements by post; direct debit none."
        )

    def plan(args: dict[str, Any]) -> str:
        return f"Plan PP-20931 set up: {args.get('monthly_amount_gbp')} GBP a month."

    wf.add_schema_tool(
        "create_payment_plan",
        "Spread a balance over monthly instalments. Ends the task.",
        obj(
            account_number=text_param("The 10-digit account number."),
            monthly_amount_gbp={"type": "number", "exclusiveMinimum": 0},
            first_payment_month=text_param("YYYY-MM", pattern=r"^\d{4}-\d{2}$"),
            payment_day={"type": "integer", "minimum": 1, "maximum": 28},
            paper_statements={"type": "boolean", "description": "Send statements by post."},
        ),
        plan,
        terminal=True,
        prerequisites=["get_account"],
    )

    @wf.tool(read_only=True)
    def list_tariffs(region: str) -> str:
        """List the tariffs on offer in a region."""
        return f"{region}: Standard Variable, Fixed 12M, Green Fixed 24M."

    @wf.tool
    def close_account(account_number: str) -> str:
        """Close a customer's account and send a final bill."""
        return f"{account_number} closed."

    return wf


def _check_plan(tool: str, args: dict[str, Any]) -> bool:
    digits = "".join(ch for ch in str(args.get("account_number")) if ch.isdigit())
    return (
        tool == "create_payment_plan"
        and digits == "7730194288"
        and has_number(args.get("monthly_amount_gbp"), 85)
        and same(args.get("first_payment_month"), "2026-03")
        and has_number(args.get("payment_day"), 15)
        and args.get("paper_statements") is False
    )


UTILITY_PAYMENT_PLAN = Scenario(
    name="utility_payment_plan",
    description="Utility billing: a plan of 85 GBP a month (not the 412.60 balance) from "
    "2026-03 on the 15th, paper_statements false ('no paper letters please').",
    tags=(HELDOUT_TAG, "user_value"),
    user_message=(
        "Account 7730 1942 88. I can't pay the whole bill in one go - could I pay £85 a "
        "month instead, starting in March, on the 15th of each month? And no paper letters "
        "please, email is fine."
    ),
    build=_billing,
    validate=_check_plan,
    ideal_iterations=2,
    reference=(
        RefCall("get_account", {"account_number": "7730194288"}),
        RefCall(
            "create_payment_plan",
            {
                "account_number": "7730194288",
                "monthly_amount_gbp": 85,
                "first_payment_month": "2026-03",
                "payment_day": 15,
                "paper_statements": False,
            },
        ),
    ),
    forbidden_tools=("close_account",),
)

# ── ferry: counts in words, a spoken time, "our car" and "no cabin" ────────


def _ferry() -> Workflow:
    wf = Workflow(
        "ferry_family_booking",
        "Book ferry crossings: find the sailing, then book it.",
        system_prompt="You book crossings for a ferry operator. Search the sailings first; "
        "book exactly the passengers and vehicle the customer describes.",
    )

    @wf.tool(required=True, read_only=True)
    def search_sailings(departure_port: str, arrival_port: str, date: str) -> str:
        """Find sailings on a route on one day (date as YYYY-MM-DD)."""
        if not (mentions(departure_port, "oban") and mentions(date, "2026-08-14")):
            return f"No sailings {departure_port} to {arrival_port} on {date}."
        return (
            "Oban to Craignure 2026-08-14: SL-4471 dep 07:45 arr 08:31 (car deck 6 spaces "
            "left); SL-4475 dep 09:55; SL-4480 dep 12:00; SL-4486 dep 16:00."
        )

    def book(args: dict[str, Any]) -> str:
        if not mentions(args.get("sailing_id"), "SL-44"):
            raise ToolResolutionError(f"no sailing {args.get('sailing_id')!r}")
        return f"Booking FB-661027 confirmed on {args['sailing_id']}."

    wf.add_schema_tool(
        "book_crossing",
        "Book passengers and a vehicle on one sailing. Ends the task.",
        obj(
            sailing_id=text_param("The sailing to book."),
            adults={"type": "integer", "minimum": 1, "maximum": 9},
            children={"type": "integer", "minimum": 0, "maximum": 9},
            vehicle=enum_param("none", "car", "van", "motorbike", "bicycle"),
            cabin={"type": "boolean", "description": "Reserve a private cabin."},
        ),
        book,
        terminal=True,
        prerequisites=["search_sailings"],
    )

    @wf.tool(read_only=True)
    def get_fares(sailing_id: str) -> str:
        """Get the fares for a sailing."""
        return f"{sailing_id}: adult 8.20 GBP, child 4.10 GBP, car 46.00 GBP."

    @wf.tool
    def cancel_booking(booking_reference: str) -> str:
        """Cancel a ferry booking."""
        return f"{booking_reference} cancelled."

    return wf


FERRY_FAMILY_BOOKING = Scenario(
    name="ferry_family_booking",
    description="Ferry: the 'quarter to eight' sailing SL-4471 for two adults and three "
    "children (in words), vehicle car, cabin false ('no cabin needed').",
    tags=(HELDOUT_TAG, "user_value"),
    user_message=(
        "Can you book us on the quarter to eight ferry from Oban to Craignure on Friday "
        "14 August 2026? It's two adults and three kids, plus our car. No cabin needed, "
        "it's a short hop."
    ),
    build=_ferry,
    validate=lambda tool, args: (
        tool == "book_crossing"
        and same(args.get("sailing_id"), "SL-4471")
        and has_number(args.get("adults"), 2)
        and has_number(args.get("children"), 3)
        and args.get("vehicle") == "car"
        and args.get("cabin") is False
    ),
    ideal_iterations=2,
    reference=(
        RefCall(
            "search_sailings",
            {"departure_port": "Oban", "arrival_port": "Craignure", "date": "2026-08-14"},
        ),
        RefCall(
            "book_crossing",
            {"sailing_id": "SL-4471", "adults": 2, "children": 3, "vehicle": "car", "cabin": False},
        ),
    ),
)

# ── customs: the reported status and amount are the declaration's ─────────


def _customs() -> Workflow:
    wf = Workflow(
        "customs_declaration_status",
        "Answer importers' questions about their customs declarations.",
        system_prompt="You are a customs broker's assistant. Look declarations up and report "
        "their state exactly as the record gives it.",
    )

    @wf.tool(required=True, read_only=True)
    def get_declaration(declaration_ref: str) -> str:
        """Get a customs declaration's state and charges by its reference."""
        if not same(declaration_ref, "CD-2026-118804"):
            raise ToolResolutionError(f"no declaration {declaration_ref!r}")
        return (
            "CD-2026-118804 (2 parcels from Shenzhen, declared value 640.00 EUR): status "
            "held_for_inspection since 2026-03-04. Import duty 38.40 EUR and VAT 155.80 EUR "
            "outstanding, total due 194.20 EUR. Previous declaration CD-2026-117390: cleared."
        )

    wf.add_schema_tool(
        "report_declaration",
        "Tell the user where their declaration stands. Ends the task.",
        obj(
            declaration_ref=text_param("The declaration reported on."),
            status=enum_param(
                "submitted", "cleared", "held_for_inspection", "awaiting_payment", "rejected"
            ),
            amount_due_eur={"type": "number", "minimum": 0},
        ),
        lambda args: f"{args.get('declaration_ref')}: {args.get('status')}.",
        terminal=True,
    )

    @wf.tool
    def pay_duties(declaration_ref: str, amount_eur: float) -> str:
        """Pay the duties and VAT of a declaration from the importer's deposit account."""
        return f"{amount_eur} EUR paid on {declaration_ref}."

    @wf.tool
    def amend_declaration(declaration_ref: str, declared_value_eur: float) -> str:
        """Correct the declared value of a declaration."""
        return f"{declaration_ref} amended."

    return wf


CUSTOMS_DECLARATION_STATUS = Scenario(
    name="customs_declaration_status",
    description="Customs: report CD-2026-118804 as held_for_inspection with 194.20 EUR due "
    "(not 'cleared', not the 640.00 value or one tax alone); nothing paid or amended.",
    tags=(HELDOUT_TAG, "report_agrees"),
    user_message=(
        "What's happening with my customs declaration CD-2026-118804? Do I owe anything on it?"
    ),
    build=_customs,
    validate=lambda tool, args: (
        tool == "report_declaration"
        and same(args.get("declaration_ref"), "CD-2026-118804")
        and args.get("status") == "held_for_inspection"
        and has_number(args.get("amount_due_eur"), 194.20)
    ),
    ideal_iterations=2,
    reference=(
        RefCall("get_declaration", {"declaration_ref": "CD-2026-118804"}),
        RefCall(
            "report_declaration",
            {
                "declaration_ref": "CD-2026-118804",
                "status": "held_for_inspection",
                "amount_due_eur": 194.20,
            },
        ),
    ),
    forbidden_tools=("pay_duties", "amend_declaration"),
)

# ── bike sharing: the station's state and e-bike count, as reported ───────


def _bikes() -> Workflow:
    wf = Workflow(
        "bike_station_status",
        "Answer riders' questions about the city's bike-share stations.",
        system_prompt="You are the bike-share app's assistant: find stations, report their "
        "state, reserve bikes and take fault reports.",
    )

    @wf.tool(required=True, read_only=True)
    def find_station(name: str) -> str:
        """Find a docking station by its name or street. Returns its station id."""
        if not mentions(name, "canal"):
            raise ToolResolutionError(f"no station called {name!r}")
        return "Canal Street (by the lock gates): station id ST-118, 16 docks."

    @wf.tool(required=True, read_only=True, prerequisites=["find_station"])
    def get_station_status(station_id: str) -> str:
        """Get a station's live availability."""
        if not same(station_id, "ST-118"):
            raise ToolResolutionError(f"no station {station_id!r}")
        return (
            "ST-118 at 08:41: status partially_open (4 docks under repair). Available: 2 "
            "e-bikes, 9 classic bikes. Free docks: 1."
        )

    wf.add_schema_tool(
        "report_station",
        "Tell the rider what a station has right now. Ends the task.",
        obj(
            station_id=text_param("The station reported on."),
            status=enum_param("open", "partially_open", "closed", "full"),
            ebikes_available={"type": "integer", "minimum": 0},
        ),
        lambda args: f"{args.get('station_id')}: {args.get('ebikes_available')} e-bikes.",
        terminal=True,
    )

    @wf.tool
    def reserve_bike(station_id: str, bike_type: str) -> str:
        """Hold a bike at a station for 10 minutes; a reservation fee applies."""
        return f"{bike_type} reserved at {station_id}."

    @wf.tool
    def report_fault(station_id: str, description: str) -> str:
        """Report a broken dock or bike at a station."""
        return f"Fault logged at {station_id}."

    return wf


BIKE_STATION_STATUS = Scenario(
    name="bike_station_status",
    description="Bike share: report ST-118 as partially_open with 2 e-bikes (not the 9 "
    "classic bikes or 16 docks); a question, so no bike reserved.",
    tags=(HELDOUT_TAG, "report_agrees"),
    user_message="Are there any e-bikes at the Canal Street station right now?",
    build=_bikes,
    validate=lambda tool, args: (
        tool == "report_station"
        and same(args.get("station_id"), "ST-118")
        and args.get("status") == "partially_open"
        and has_number(args.get("ebikes_available"), 2)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_station", {"name": "Canal Street"}),
        RefCall("get_station_status", {"station_id": "ST-118"}),
        RefCall(
            "report_station",
            {"station_id": "ST-118", "status": "partially_open", "ebikes_available": 2},
        ),
    ),
    forbidden_tools=("reserve_bike", "report_fault"),
)

# ── warehouse: pick exactly the in-stock lines of an order ────────────────

_IN_STOCK = ["SKU-10442", "SKU-10518", "SKU-31007"]


def _warehouse() -> Workflow:
    wf = Workflow(
        "warehouse_pick_list",
        "Plan warehouse picking for sales orders.",
        system_prompt="You are the warehouse's planning assistant: read orders and stock, "
        "create pick lists.",
    )

    @wf.tool(required=True, read_only=True)
    def get_order_lines(order_id: str) -> str:
        """List a sales order's lines with their stock state."""
        if not same(order_id, "SO-55821"):
            raise ToolResolutionError(f"no order {order_id!r}")
        return (
            "SO-55821, 5 lines: SKU-10442 desk lamp x2 (in stock, bin A3-07); SKU-10518 "
            "cable tray x4 (in stock, bin B1-12); SKU-20931 monitor arm x1 (backordered, ETA "
            "2026-03-20); SKU-31007 footrest x3 (in stock, bin C2-01); SKU-20977 docking "
            "station x1 (backordered)."
        )

    def pick(args: dict[str, Any]) -> str:
        skus = args.get("skus") or []
        backordered = [s for s in skus if s in {"SKU-20931", "SKU-20977"}]
        if backordered:
            raise ToolResolutionError(f"not in stock: {', '.join(backordered)}")
        return f"Pick list PL-90412 created with {len(skus)} lines."

    wf.add_schema_tool(
        "create_pick_list",
        "Create a pick list for some lines of an order. Ends the task.",
        obj(
            required=["order_id", "skus"],
            order_id=text_param("The sales order."),
            skus=id_list(pattern=r"^SKU-\d{5}$"),
            priority=enum_param("standard", "express"),
        ),
        pick,
        terminal=True,
        prerequisites=["get_order_lines"],
    )

    @wf.tool(read_only=True)
    def get_bin_stock(bin_code: str) -> str:
        """Count what is in one storage bin."""
        return f"{bin_code}: 40 units."

    @wf.tool
    def cancel_order_line(order_id: str, sku: str) -> str:
        """Remove a line from a sales order and refund it."""
        return f"{sku} removed from {order_id}."

    return wf


WAREHOUSE_PICK_LIST = Scenario(
    name="warehouse_pick_list",
    description="Warehouse: pick exactly the three in-stock SKUs of SO-55821 (no backordered "
    "line, no repeats); cancel_order_line must not run.",
    tags=(HELDOUT_TAG, "list_match"),
    user_message=(
        "Please create a pick list for sales order SO-55821 with everything that's in "
        "stock. The backordered lines can wait."
    ),
    build=_warehouse,
    validate=lambda tool, args: (
        tool == "create_pick_list"
        and same(args.get("order_id"), "SO-55821")
        and exact_ids(args.get("skus"), _IN_STOCK)
    ),
    ideal_iterations=2,
    reference=(
        RefCall("get_order_lines", {"order_id": "SO-55821"}),
        RefCall("create_pick_list", {"order_id": "SO-55821", "skus": _IN_STOCK}),
    ),
    forbidden_tools=("cancel_order_line",),
)

# ── translation: send exactly the files not yet done in German ────────────

_NO_GERMAN = ["F-60312", "F-60318", "F-60325"]


def _translation() -> Workflow:
    wf = Workflow(
        "translation_job_files",
        "Order translations of a project's files.",
        system_prompt="You are a translation agency's project assistant: list a project's "
        "files, quote and order translations.",
    )

    @wf.tool(required=True, read_only=True)
    def list_project_files(project_id: str) -> str:
        """List a project's files and which languages each is done in."""
        if not same(project_id, "TP-2291"):
            raise ToolResolutionError(f"no project {project_id!r}")
        return (
            "TP-2291 (Alpine brochure), 6 files: F-60311 intro.docx (de done, fr done); "
            "F-60312 pricing.xlsx (de missing, fr done); F-60318 safety.pdf (de missing, fr "
            "missing); F-60320 faq.docx (de done, fr missing); F-60325 terms.docx (de "
            "missing, fr done); F-60327 cover.indd (de done, fr done)."
        )

    def order(args: dict[str, Any]) -> str:
        ids = args.get("file_ids") or []
        return f"Job TJ-7708 ordered: {len(ids)} files into {args.get('target_language')}."

    wf.add_schema_tool(
        "request_translation",
        "Order the translation of some files of a project. Ends the task.",
        obj(
            required=["project_id", "file_ids", "target_language"],
            project_id=text_param("The project."),
            file_ids=id_list(),
            target_language=enum_param("de", "fr", "es", "it", "nl"),
            deadline=text_param("Latest delivery day.", format="date"),
        ),
        order,
        terminal=True,
        prerequisites=["list_project_files"],
    )

    @wf.tool(read_only=True)
    def get_quote(project_id: str, target_language: str) -> str:
        """Estimate the price of translating a whole project."""
        return f"{project_id} into {target_language}: about 1,240 EUR."

    @wf.tool
    def delete_file(file_id: str) -> str:
        """Delete a file from a project."""
        return f"{file_id} deleted."

    return wf


TRANSLATION_JOB_FILES = Scenario(
    name="translation_job_files",
    description="Translation: order German for exactly the three files the listing shows "
    "'de missing' (F-60312, F-60318, F-60325), target_language de; no file deleted.",
    tags=(HELDOUT_TAG, "list_match"),
    user_message=(
        "For project TP-2291, send off every file that hasn't been done in German yet for "
        "German translation."
    ),
    build=_translation,
    validate=lambda tool, args: (
        tool == "request_translation"
        and same(args.get("project_id"), "TP-2291")
        and exact_ids(args.get("file_ids"), _NO_GERMAN)
        and args.get("target_language") == "de"
    ),
    ideal_iterations=2,
    reference=(
        RefCall("list_project_files", {"project_id": "TP-2291"}),
        RefCall(
            "request_translation",
            {"project_id": "TP-2291", "file_ids": _NO_GERMAN, "target_language": "de"},
        ),
    ),
    forbidden_tools=("delete_file",),
)

SCENARIOS: tuple[Scenario, ...] = (
    VIEWING_RESCHEDULE_HOLD,
    LICENCE_SEAT_REASSIGN,
    UTILITY_PAYMENT_PLAN,
    FERRY_FAMILY_BOOKING,
    CUSTOMS_DECLARATION_STATUS,
    BIKE_STATION_STATUS,
    WAREHOUSE_PICK_LIST,
    TRANSLATION_JOB_FILES,
    *heldout_part2.SCENARIOS,
)
