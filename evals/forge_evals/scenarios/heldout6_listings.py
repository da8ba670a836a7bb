"""Held out, sixth group (see heldout6): the four scenarios whose answer is
read off a tool's result: an auction house's sale results and a gas
engineer's landlord safety record (report_agrees), a dance school's exam
entries and a record shop's wants list (list_match)."""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios._domain_schema import HELDOUT6_TAG, alnum, exact_ids


def _by_key(items: Any, key: str) -> dict[str, dict[str, Any]]:
    """A list of objects keyed by one field (as trimmed text); {} if not such a list."""
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return {}
    return {str(i.get(key)).strip().lower(): i for i in items}


# ── auction house: the vase sold at 1,450, the candlesticks were bought in ─

_SALE_RESULTS = (
    "Sale SL-2604 (Spring Fine Art & Antiques, Tue 2026-04-14), consignment CN-8812:\n"
    "- Lot 212 Moorcroft 'Pomegranate' vase (est. 800-1,200): SOLD, hammer 1,450 GBP "
    "(buyer paid 1,812.50 GBP with 25% premium)\n"
    "- Lot 213 Victorian mahogany tea caddy (est. 150-250): SOLD, hammer 120 GBP at your "
    "discretionary reserve\n"
    "- Lot 214 pair of George III silver candlesticks (est. 2,000-3,000): UNSOLD (bought in), "
    "highest bid 1,700 GBP against a reserve of 1,900 GBP; offered post-sale until 2026-04-28\n"
    "Seller's statement ST-55190: hammer total 1,570.00 GBP; commission 15% + VAT 282.60; "
    "lotting fees 3 x 6.00 + VAT 21.60; NET DUE TO SELLER 1,265.80 GBP, paid by BACS on "
    "2026-05-05 once buyers have settled."
)

_LOT = {
    "type": "object",
    "properties": {
        "lot_number": {"type": "integer", "minimum": 1},
        "status": {"type": "string", "enum": ["sold", "unsold", "withdrawn", "sold_post_sale"]},
        "hammer_price_gbp": {
            "type": "number",
            "minimum": 0,
            "description": "Only for a lot that sold.",
        },
    },
    "required": ["lot_number", "status"],
    "additionalProperties": False,
}
_SALE_REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sale_id": {"type": "string", "pattern": "^SL-[0-9]{4}$"},
        "lots": {"type": "array", "items": _LOT, "minItems": 1},
        "net_payable_gbp": {"type": "number", "minimum": 0},
        "payment_date": {"type": "string", "format": "date"},
    },
    "required": ["sale_id", "lots", "net_payable_gbp", "payment_date"],
    "additionalProperties": False,
}


def _auction_house() -> Workflow:
    wf = Workflow(
        "auction_sale_results",
        "Answer sellers of an auction house about how their lots did.",
        system_prompt="You are the seller services assistant of Hartley Vane Auctions, "
        "Cirencester. Find the seller's consignment, read its sale results and report them. "
        "Today is Friday 2026-04-17.",
    )

    @wf.tool(required=True, read_only=True)
    def find_seller_consignments(seller_number: str) -> str:
        """Find a seller's consignments by seller number (S- and five digits)."""
        if alnum(seller_number) != "S30417":
            raise ToolResolutionError(f"no seller {seller_number!r}; numbers look like S-12345")
        return (
            "Seller S-30417, Mr D. Pemberton. Consignment CN-8812, received 2026-03-02, "
            "entered in sale SL-2604 (Tue 2026-04-14): lots 212, 213, 214. Consignment "
            "CN-7705 (2025), settled."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_seller_consignments"])
    def get_consignment_results(consignment_id: str) -> str:
        """A consignment's results in its sale: each lot's outcome and the seller's statement."""
        key = alnum(consignment_id)
        if key == "CN7705":
            return "CN-7705: sale SL-2511, settled 2025-12-02, 3 lots sold, 640.00 GBP paid."
        if key != "CN8812":
            raise ToolResolutionError(f"unknown consignment {consignment_id!r}")
        return _SALE_RESULTS

    wf.add_schema_tool(
        "report_sale_outcome",
        "Tell the seller how their lots did and what they will be paid. Ends the task.",
        _SALE_REPORT_SCHEMA,
        lambda args: f"Sale summary for {args.get('sale_id')} sent to the seller.",
        terminal=True,
        prerequisites=["get_consignment_results"],
    )

    @wf.tool
    def reoffer_unsold_lot(lot_number: int, sale_id: str, new_reserve_gbp: int) -> str:
        """Enter an unsold lot in a later sale with a new reserve."""
        return f"Lot {lot_number} re-entered in {sale_id} at {new_reserve_gbp} GBP."

    @wf.tool
    def arrange_lot_collection(lot_number: int, date: str) -> str:
        """Book the seller to collect an unsold lot from the saleroom."""
        return f"Collection of lot {lot_number} on {date} booked."

    return wf


def _lot_is(lot: dict[str, Any], status: str, hammer: float) -> bool:
    """The lot's status, and its hammer price if it gives one."""
    price = lot.get("hammer_price_gbp")
    return lot.get("status") == status and (price is None or has_number(price, hammer))


def _check_sale(tool: str, args: dict[str, Any]) -> bool:
    lots = _by_key(args.get("lots"), "lot_number")
    vase, sticks, caddy = lots.get("212"), lots.get("214"), lots.get("213")
    return (
        tool == "report_sale_outcome"
        and same(args.get("sale_id"), "SL-2604")
        and set(lots) <= {"212", "213", "214"}
        and vase is not None
        and vase.get("status") == "sold"
        and has_number(vase.get("hammer_price_gbp"), 1450)
        and sticks is not None
        and sticks.get("status") == "unsold"
        and sticks.get("hammer_price_gbp") in (None, 0)
        and (caddy is None or _lot_is(caddy, "sold", 120))
        and has_number(args.get("net_payable_gbp"), 1265.80)
        and args.get("payment_date") == "2026-05-05"
    )


_SALE: dict[str, Any] = {
    "sale_id": "SL-2604",
    "lots": [
        {"lot_number": 212, "status": "sold", "hammer_price_gbp": 1450},
        {"lot_number": 214, "status": "unsold"},
    ],
    "net_payable_gbp": 1265.80,
    "payment_date": "2026-05-05",
}

AUCTION_SALE_RESULTS = Scenario(
    name="auction_sale_results",
    description="Auction house: lot 212 (the vase) sold at a 1,450 hammer (not the 1,812.50 "
    "the buyer paid), lot 214 (the candlesticks) unsold with no hammer price (not the 1,700 "
    "bid), net 1,265.80 GBP (not the 1,570 hammer total) paid 2026-05-05, sale SL-2604.",
    tags=(HELDOUT6_TAG, "report_agrees"),
    user_message=(
        "Hello, Dan Pemberton here, seller number S-30417. How did my bits get on in "
        "Tuesday's sale? I'm mostly wondering about the Moorcroft vase and the pair of silver "
        "candlesticks, did they go, and for how much? And what's actually coming to me at "
        "the end of it all, and when?"
    ),
    build=_auction_house,
    validate=_check_sale,
    ideal_iterations=3,
    reference=(
        RefCall("find_seller_consignments", {"seller_number": "S-30417"}),
        RefCall("get_consignment_results", {"consignment_id": "CN-8812"}),
        RefCall("report_sale_outcome", dict(_SALE)),
    ),
    forbidden_tools=("reoffer_unsold_lot",),
)

# ── gas safety: yesterday's record, the hob at risk and off, the fire NCS ──

_RECORDS = {
    "CP12-2026-04471": (
        "Landlord Gas Safety Record CP12-2026-04471, Flat 2B, 17 Wellington Road, inspected "
        "Tue 2026-05-12 by R. Kaur (Gas Safe 514872).\n"
        "1. Worcester Greenstar 30i combi boiler (kitchen): PASS, flue flow and spillage "
        "pass, CO 12 ppm. Safe to use.\n"
        "2. Bosch PGP6B5B60 gas hob (kitchen): AT RISK, poor flame picture on two burners. "
        "Turned OFF with the tenant's consent; warning notice WN-3381 issued.\n"
        "3. Valor Homeflame gas fire (living room): NOT TO CURRENT STANDARDS, no "
        "flame-supervision device. Safe to use; replacement advised.\n"
        "Outcome: defects recorded. Next safety check due by 2027-05-11."
    ),
    "CP12-2025-03908": (
        "Landlord Gas Safety Record CP12-2025-03908, Flat 2B, 17 Wellington Road, inspected "
        "2025-05-20: boiler PASS, hob PASS, gas fire PASS. Next check due by 2026-05-19."
    ),
}

_APPLIANCE = {
    "type": "object",
    "properties": {
        "appliance": {
            "type": "string",
            "enum": ["boiler", "hob", "cooker", "gas_fire", "water_heater", "other"],
        },
        "classification": {
            "type": "string",
            "enum": ["pass", "not_to_current_standards", "at_risk", "immediately_dangerous"],
        },
        "in_use": {"type": "boolean", "description": "false if the engineer turned it off"},
    },
    "required": ["appliance", "classification", "in_use"],
    "additionalProperties": False,
}
_GAS_REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "record_number": {"type": "string", "pattern": "^CP12-[0-9]{4}-[0-9]{5}$"},
        "inspection_date": {"type": "string", "format": "date"},
        "appliances": {"type": "array", "items": _APPLIANCE, "minItems": 1, "maxItems": 8},
        "next_check_due": {"type": "string", "format": "date"},
    },
    "required": ["record_number", "inspection_date", "appliances", "next_check_due"],
    "additionalProperties": False,
}


def _gas_engineers() -> Workflow:
    wf = Workflow(
        "landlord_gas_safety_report",
        "Answer landlords about the gas safety checks done at their properties.",
        system_prompt="You are the landlord portal assistant of Flameguard Gas Services, "
        "Leeds. Find the landlord's property, read its gas safety record and report it. "
        "Today is Wednesday 2026-05-13.",
    )

    @wf.tool(required=True, read_only=True)
    def find_landlord_property(account_number: str, address: str) -> str:
        """Find one of a landlord's properties. Returns the property id and its records."""
        if alnum(account_number) != "LL7731":
            raise ToolResolutionError(f"no landlord account {account_number!r}")
        if not mentions(address, "2b") or not mentions(address, "wellington"):
            raise ToolResolutionError(
                f"account LL-7731 has no property at {address!r}; it has Flat 2B and "
                "Flat 3A, 17 Wellington Road"
            )
        return (
            "Property PRP-20418, Flat 2B, 17 Wellington Road, Leeds LS6 2DQ. Gas safety "
            "records: CP12-2026-04471 (inspected 2026-05-12); CP12-2025-03908 (inspected "
            "2025-05-20)."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_landlord_property"])
    def get_gas_safety_record(record_number: str) -> str:
        """One landlord gas safety record (CP12): each appliance's result and the next due date."""
        key = record_number.strip().upper()
        if key not in _RECORDS:
            raise ToolResolutionError(
                f"no record {record_number!r}; numbers look like CP12-2026-04471"
            )
        return _RECORDS[key]

    wf.add_schema_tool(
        "report_gas_safety_result",
        "Send the landlord the result of a gas safety check. Ends the task.",
        _GAS_REPORT_SCHEMA,
        lambda args: f"Gas safety summary {args.get('record_number')} sent.",
        terminal=True,
        prerequisites=["get_gas_safety_record"],
    )

    @wf.tool
    def book_appliance_replacement(property_id: str, appliance: str) -> str:
        """Book an engineer to replace an appliance (quote sent first)."""
        return f"Replacement of the {appliance} at {property_id} booked."

    @wf.tool
    def book_gas_safety_check(property_id: str, date: str) -> str:
        """Book the next annual gas safety check."""
        return f"Check at {property_id} booked for {date}."

    return wf


def _check_gas(tool: str, args: dict[str, Any]) -> bool:
    items = args.get("appliances")
    found = _by_key(items, "appliance")
    want = {
        "boiler": ("pass", True),
        "hob": ("at_risk", False),
        "gas_fire": ("not_to_current_standards", True),
    }
    return (
        tool == "report_gas_safety_result"
        and same(args.get("record_number"), "CP12-2026-04471")
        and args.get("inspection_date") == "2026-05-12"
        and isinstance(items, list)
        and len(items) == len(found) == 3
        and all(
            (found.get(k) or {}).get("classification") == c
            and (found.get(k) or {}).get("in_use") is u
            for k, (c, u) in want.items()
        )
        and args.get("next_check_due") == "2027-05-11"
    )


_GAS: dict[str, Any] = {
    "record_number": "CP12-2026-04471",
    "inspection_date": "2026-05-12",
    "appliances": [
        {"appliance": "boiler", "classification": "pass", "in_use": True},
        {"appliance": "hob", "classification": "at_risk", "in_use": False},
        {"appliance": "gas_fire", "classification": "not_to_current_standards", "in_use": True},
    ],
    "next_check_due": "2027-05-11",
}

LANDLORD_GAS_SAFETY_REPORT = Scenario(
    name="landlord_gas_safety_report",
    description="Gas safety: yesterday's record CP12-2026-04471 (not last year's all-pass), "
    "boiler pass and in use, hob at_risk and turned off, gas fire not_to_current_standards "
    "but in use, next check due 2027-05-11 (not 2026-05-19).",
    tags=(HELDOUT6_TAG, "report_agrees"),
    user_message=(
        "Hi, Marcus Webb, landlord account LL-7731. Your engineer was at Flat 2B, 17 "
        "Wellington Road yesterday. Did it all pass? If anything failed I need to know what "
        "was wrong with each appliance and whether the tenant can still use it, plus when "
        "the next one's due, so I can tell the letting agent."
    ),
    build=_gas_engineers,
    validate=_check_gas,
    ideal_iterations=3,
    reference=(
        RefCall(
            "find_landlord_property",
            {"account_number": "LL-7731", "address": "Flat 2B, 17 Wellington Road"},
        ),
        RefCall("get_gas_safety_record", {"record_number": "CP12-2026-04471"}),
        RefCall("report_gas_safety_result", dict(_GAS)),
    ),
    forbidden_tools=("book_appliance_replacement",),
)

# ── dance school: enter the pupils marked ready who aren't entered yet ───

_READY_NOT_ENTERED = ["PUP-1182", "PUP-1207", "PUP-1211"]


def _dance_school() -> Workflow:
    wf = Workflow(
        "dance_exam_entries",
        "Help the teachers of a dance school with classes and exam entries.",
        system_prompt="You are the office assistant of Pointe & Flex Dance Academy, "
        "Chelmsford. Teachers ask you to enter their pupils for graded exams. "
        "Today is Monday 2026-01-19.",
    )

    @wf.tool(required=True, read_only=True)
    def get_class_register(class_name: str) -> str:
        """A class's register: each pupil's id, age and exam readiness as the teacher marked it."""
        if not (mentions(class_name, "ballet") and mentions(class_name, "3", "three")):
            raise ToolResolutionError(
                f"no class {class_name!r}; classes are named like 'Grade 3 Ballet (Sat)'"
            )
        return (
            "Class BAL-G3-SAT, Grade 3 Ballet, Saturdays 10:00, teacher A. Kowalczyk:\n"
            "- PUP-1182 Amara Osei, 9: exam readiness READY\n"
            "- PUP-1190 Isla McBride, 10: READY, already entered (EXE-5530, spring session)\n"
            "- PUP-1203 Freddie Lam, 9: NOT YET, retake next term\n"
            "- PUP-1207 Sofia Rinaldi, 10: READY\n"
            "- PUP-1211 Noah Brennan-Cole, 9: READY\n"
            "- PUP-1215 Maisie Hartigan, 8: withdrawn from class 2026-01-05\n"
            "- PUP-1221 Priya Desai, 9: NOT YET"
        )

    @wf.tool(required=True, read_only=True)
    def list_exam_sessions() -> str:
        """The coming exam sessions with ids, syllabus and entry deadlines."""
        return (
            "Exam sessions:\n"
            "- EXS-2603-BAL ballet (RAD), Sat 2026-03-21, Primary to Grade 5, entries close "
            "2026-02-06\n"
            "- EXS-2603-TAP tap (ISTD), Sun 2026-03-22, entries close 2026-02-06\n"
            "- EXS-2606-BAL ballet (RAD), Sat 2026-06-20, entries open 2026-03-01"
        )

    wf.add_schema_tool(
        "enter_exam_candidates",
        "Enter pupils for a grade in an exam session; the exam fee is invoiced to each "
        "family. Ends the task.",
        {
            "type": "object",
            "properties": {
                "session_id": {"type": "string", "pattern": "^EXS-[0-9]{4}-[A-Z]{3}$"},
                "grade": {
                    "type": "string",
                    "enum": ["primary", "grade_1", "grade_2", "grade_3", "grade_4", "grade_5"],
                },
                "pupil_ids": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^PUP-[0-9]{4}$"},
                    "minItems": 1,
                    "maxItems": 20,
                    "uniqueItems": True,
                },
            },
            "required": ["session_id", "grade", "pupil_ids"],
            "additionalProperties": False,
        },
        lambda args: (
            f"{len(args.get('pupil_ids') or [])} pupils entered in {args.get('session_id')}."
        ),
        terminal=True,
        prerequisites=["get_class_register", "list_exam_sessions"],
    )

    @wf.tool
    def remove_pupil_from_class(pupil_id: str, class_code: str) -> str:
        """Take a pupil off a class register and stop their term fees."""
        return f"{pupil_id} removed from {class_code}."

    @wf.tool
    def email_class_parents(class_code: str, subject: str, body: str) -> str:
        """Email the parents of every pupil in a class."""
        return f"Email '{subject}' sent to {class_code} parents."

    return wf


DANCE_EXAM_ENTRIES = Scenario(
    name="dance_exam_entries",
    description="Dance school: spring ballet session EXS-2603-BAL, grade_3, exactly the "
    "pupils marked READY and not yet entered, PUP-1182, PUP-1207, PUP-1211 (not Isla "
    "already entered, the NOT YETs or the withdrawn pupil).",
    tags=(HELDOUT6_TAG, "list_match"),
    user_message=(
        "Hi, it's Miss Kowalczyk. Can you enter my Saturday Grade 3 ballet lot for the spring "
        "exams? Just the ones I've marked as ready, please. Isla's mum has already sorted "
        "hers, so don't put her in twice."
    ),
    build=_dance_school,
    validate=lambda tool, args: (
        tool == "enter_exam_candidates"
        and same(args.get("session_id"), "EXS-2603-BAL")
        and args.get("grade") == "grade_3"
        and exact_ids(args.get("pupil_ids"), _READY_NOT_ENTERED)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("get_class_register", {"class_name": "Grade 3 Ballet (Sat)"}),
        RefCall("list_exam_sessions", {}),
        RefCall(
            "enter_exam_candidates",
            {"session_id": "EXS-2603-BAL", "grade": "grade_3", "pupil_ids": _READY_NOT_ENTERED},
        ),
    ),
    forbidden_tools=("remove_pupil_from_class",),
)

# ── record shop: wants-list copies at VG+ or better and forty pounds or less

_CUSTOMER = "CUS-40912"
_PUT_ASIDE = ["STK-77104", "STK-77162", "STK-77190", "STK-77215"]
# Saturday, when he collects, up to the shop's seven days.
_HOLD_DAYS = {f"2026-09-{day}" for day in range(12, 18)}


def _record_shop() -> Workflow:
    wf = Workflow(
        "record_wantlist_hold",
        "Help customers of a second-hand record shop with their wants lists.",
        system_prompt="You are the assistant of Groove Cellar Records, Bristol. Grades, best "
        "first: M, NM, VG+, VG, G+, G. Records can be held behind the counter for up to 7 "
        "days. Today is Thursday 2026-09-10.",
    )

    @wf.tool(required=True, read_only=True)
    def get_customer_wantlist(email: str) -> str:
        """A customer's id and the records on their wants list."""
        if not same(email, "jonno.reyes@proton.example"):
            raise ToolResolutionError(f"no customer with email {email!r}")
        return (
            f"Customer {_CUSTOMER} Jonathan Reyes. Wants list: Nick Drake - Pink Moon (ILPS "
            "9184); Talk Talk - Spirit of Eden (PCSD 105); Can - Ege Bamyasi (UAS 29414); "
            "Joni Mitchell - Hejira (K 53053); Broadcast - Tender Buttons (WARPLP 136); "
            "Alice Coltrane - Journey in Satchidananda (AS-9203)."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["get_customer_wantlist"])
    def check_wantlist_stock(customer_id: str) -> str:
        """Copies in stock now of the records on a customer's wants list, with grade and price."""
        if customer_id.strip().upper() != _CUSTOMER:
            raise ToolResolutionError(f"unknown customer_id {customer_id!r}")
        return (
            "In stock for CUS-40912's wants list:\n"
            "- STK-77104 Nick Drake, Pink Moon (ILPS 9184, 1974 pressing), grade VG+, 32.00 GBP\n"
            "- STK-77131 Nick Drake, Pink Moon (ILPS 9184), grade VG, 18.00 GBP\n"
            "- STK-77158 Talk Talk, Spirit of Eden (PCSD 105), grade NM, 65.00 GBP\n"
            "- STK-77162 Joni Mitchell, Hejira (K 53053), grade NM, 22.00 GBP\n"
            "- STK-77190 Broadcast, Tender Buttons (WARPLP 136), grade M (sealed), 28.00 GBP\n"
            "- STK-77203 Alice Coltrane, Journey in Satchidananda (AS-9203), grade G+, 24.00 GBP\n"
            "- STK-77215 Can, Ege Bamyasi (UAS 29414, Spoon reissue), grade VG+, 38.00 GBP"
        )

    wf.add_schema_tool(
        "hold_records_for_collection",
        "Put copies behind the counter for a customer to pay for and collect. Ends the task.",
        {
            "type": "object",
            "properties": {
                "customer_id": {"type": "string", "pattern": "^CUS-[0-9]{5}$"},
                "stock_ids": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^STK-[0-9]{5}$"},
                    "minItems": 1,
                    "uniqueItems": True,
                },
                "hold_until": {
                    "type": "string",
                    "format": "date",
                    "description": "Last day to collect; at most 7 days from today.",
                },
            },
            "required": ["customer_id", "stock_ids", "hold_until"],
            "additionalProperties": False,
        },
        lambda args: f"{len(args.get('stock_ids') or [])} records held.",
        terminal=True,
        prerequisites=["check_wantlist_stock"],
    )

    @wf.tool
    def remove_from_wantlist(customer_id: str, catalogue_number: str) -> str:
        """Take a record off a customer's wants list."""
        return f"{catalogue_number} removed from {customer_id}'s wants list."

    @wf.tool
    def sell_records_to_card_on_file(customer_id: str, stock_ids: list[str]) -> str:
        """Charge the customer's saved card for copies and post them out."""
        return f"{len(stock_ids)} records charged and posted."

    return wf


RECORD_WANTLIST_HOLD = Scenario(
    name="record_wantlist_hold",
    description="Record shop: hold exactly the wants-list copies at VG+ or better and at most "
    "40 GBP, STK-77104, STK-77162, STK-77190, STK-77215 (not the VG Pink Moon, the G+ "
    "Coltrane or the 65 GBP Talk Talk) for CUS-40912, until Saturday 2026-09-12 or later.",
    tags=(HELDOUT6_TAG, "list_match"),
    user_message=(
        "Hiya, Jonno here (jonno.reyes@proton.example). Could you stick aside anything off my "
        "wants list that you've got in at the moment? Only VG+ or better mind, and nothing "
        "over forty quid a record. I'll swing by on Saturday to pick them up."
    ),
    build=_record_shop,
    validate=lambda tool, args: (
        tool == "hold_records_for_collection"
        and same(args.get("customer_id"), _CUSTOMER)
        and exact_ids(args.get("stock_ids"), _PUT_ASIDE)
        and args.get("hold_until") in _HOLD_DAYS
    ),
    ideal_iterations=3,
    reference=(
        RefCall("get_customer_wantlist", {"email": "jonno.reyes@proton.example"}),
        RefCall("check_wantlist_stock", {"customer_id": _CUSTOMER}),
        RefCall(
            "hold_records_for_collection",
            {"customer_id": _CUSTOMER, "stock_ids": _PUT_ASIDE, "hold_until": "2026-09-12"},
        ),
    ),
    forbidden_tools=("remove_from_wantlist", "sell_records_to_card_on_file"),
)


SCENARIOS: tuple[Scenario, ...] = (
    AUCTION_SALE_RESULTS,
    LANDLORD_GAS_SAFETY_REPORT,
    DANCE_EXAM_ENTRIES,
    RECORD_WANTLIST_HOLD,
)
