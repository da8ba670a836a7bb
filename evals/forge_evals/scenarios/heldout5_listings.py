"""Held out, fifth group (see heldout5): the four scenarios whose answer is
read off a tool's result: an MOT history app and a soil laboratory
(report_agrees), a pottery studio's kiln firings and a coffee roaster's
subscription (list_match)."""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios._domain_schema import HELDOUT5_TAG, alnum, exact, exact_ids


def _counts(value: Any, **expected: int) -> bool:
    return isinstance(value, dict) and all(has_number(value.get(k), n) for k, n in expected.items())


# ── MOT history: today's failed test, not last year's pass ──────────────


_COUNT = {"type": "integer", "minimum": 0}
_MOT_REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "registration": {"type": "string"},
        "latest_test": {
            "type": "object",
            "properties": {
                "test_number": {"type": "string", "pattern": "^MT-[0-9]{2}-[0-9]{7}$"},
                "date": {"type": "string", "format": "date"},
                "result": {
                    "type": "string",
                    "enum": ["pass", "pass_with_advisories", "fail", "abandoned"],
                },
                "odometer_miles": {"type": "integer", "minimum": 0},
            },
            "required": ["test_number", "date", "result", "odometer_miles"],
            "additionalProperties": False,
        },
        "defects": {
            "type": "object",
            "properties": {"dangerous": _COUNT, "major": _COUNT, "minor": _COUNT},
            "required": ["dangerous", "major", "minor"],
            "additionalProperties": False,
        },
        "free_retest_by": {"type": "string", "format": "date"},
    },
    "required": ["registration", "latest_test", "defects", "free_retest_by"],
    "additionalProperties": False,
}


def _mot_app() -> Workflow:
    wf = Workflow(
        "mot_result_summary",
        "Answer drivers about their car's MOT tests in a car-care app.",
        system_prompt="You are the assistant in the Motorwise car-care app. Find the "
        "driver's vehicle, read its MOT history and answer. Today is Thursday 2026-06-18.",
    )

    @wf.tool(required=True, read_only=True)
    def find_vehicle_by_registration(registration: str) -> str:
        """Find a vehicle by its number plate. Returns the vehicle id."""
        if alnum(registration) != "LK68WDX":
            raise ToolResolutionError(f"no vehicle registered as {registration!r}")
        return (
            "Vehicle VEH-5520193: LK68 WDX, Volkswagen Golf 1.5 TSI, petrol, first registered "
            "2018-07-09. MOT certificate expires 2026-06-30. Tax due 2026-09-01."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_vehicle_by_registration"])
    def get_mot_history(vehicle_id: str) -> str:
        """A vehicle's MOT tests, newest first, with mileage, result and defects."""
        if not mentions(vehicle_id, "5520193"):
            raise ToolResolutionError(f"unknown vehicle_id {vehicle_id!r}")
        return (
            "MOT history for LK68 WDX:\n"
            "1. Test MT-26-1184502, 2026-06-18, Kwik Test Centre Lewisham: FAIL. Odometer "
            "84,312 miles. Dangerous (1): nearside front brake hose chafed. Major (2): offside "
            "rear tyre tread below 1.6 mm; headlamp aim too high. Minor (1): rear number plate "
            "lamp inoperative. Advisories (2): front discs worn; oil leak. Free partial retest "
            "at the same centre if back by 2026-07-02. Do not drive until the dangerous defect "
            "is repaired.\n"
            "2. Test MT-25-0972210, 2025-06-20, same centre: PASS with advisories. Odometer "
            "77,950 miles. Advisories (2): front discs worn; tyre near limit.\n"
            "3. Test MT-24-0855127, 2024-06-25: PASS. Odometer 70,104 miles."
        )

    wf.add_schema_tool(
        "report_mot_result",
        "Tell the driver the result of their latest MOT test. Ends the task.",
        _MOT_REPORT_SCHEMA,
        lambda args: f"Sent the MOT summary for {args.get('registration')}.",
        terminal=True,
        prerequisites=["get_mot_history"],
    )

    @wf.tool
    def book_mot_retest(vehicle_id: str, date: str) -> str:
        """Book a retest at the centre that did the last test."""
        return f"Retest booked for {vehicle_id} on {date}."

    @wf.tool
    def set_mot_reminder(vehicle_id: str, days_before: int) -> str:
        """Remind the driver before the MOT certificate expires."""
        return f"Reminder set {days_before} days before expiry."

    return wf


_MOT: dict[str, Any] = {
    "registration": "LK68 WDX",
    "latest_test": {
        "test_number": "MT-26-1184502",
        "date": "2026-06-18",
        "result": "fail",
        "odometer_miles": 84312,
    },
    "defects": {"dangerous": 1, "major": 2, "minor": 1},
    "free_retest_by": "2026-07-02",
}


def _check_mot(tool: str, args: dict[str, Any]) -> bool:
    test = args.get("latest_test")
    return (
        tool == "report_mot_result"
        and alnum(args.get("registration")) == "LK68WDX"
        and isinstance(test, dict)
        and same(test.get("test_number"), "MT-26-1184502")
        and test.get("date") == "2026-06-18"
        and test.get("result") == "fail"
        and has_number(test.get("odometer_miles"), 84312)
        and _counts(args.get("defects"), dangerous=1, major=2, minor=1)
        and args.get("free_retest_by") == "2026-07-02"
    )


MOT_RESULT_SUMMARY = Scenario(
    name="mot_result_summary",
    description="MOT: today's test MT-26-1184502 failed (not last year's pass with "
    "advisories), 84,312 miles (not 77,950), defects 1 dangerous / 2 major / 1 minor (the "
    "advisories are not defects), free retest by 2026-07-02 (not the 06-30 expiry).",
    tags=(HELDOUT5_TAG, "report_agrees"),
    user_message=(
        "My Golf went in for its MOT this morning, reg LK68 WDX. Did it pass? What mileage "
        "did they record, how many defects of each kind did they find, and until when can I "
        "get the free retest?"
    ),
    build=_mot_app,
    validate=_check_mot,
    ideal_iterations=3,
    reference=(
        RefCall("find_vehicle_by_registration", {"registration": "LK68 WDX"}),
        RefCall("get_mot_history", {"vehicle_id": "VEH-5520193"}),
        RefCall("report_mot_result", dict(_MOT)),
    ),
    forbidden_tools=("book_mot_retest",),
)

# ── soil lab: Long Acre's sample of three, its indices and lime ──────────

_SAMPLES = {
    "SMP-88201": "North Meadow (grassland): pH 6.4 (target 6.0). Phosphorus 22 mg/l, index 2. "
    "Potassium 180 mg/l, index 2-. Magnesium 75 mg/l, index 2. Lime requirement: none.",
    "SMP-88202": "Long Acre (winter wheat): pH 5.8 (target 6.5). Phosphorus 14 mg/l, index 1 "
    "(target 2). Potassium 145 mg/l, index 2- (target 2-). Magnesium 62 mg/l, index 2. Lime "
    "requirement: 5.0 t/ha ground limestone.",
    "SMP-88203": "Top Field (spring barley): pH 5.9 (target 6.5). Phosphorus 30 mg/l, index 3. "
    "Potassium 250 mg/l, index 2+. Magnesium 45 mg/l, index 1. Lime requirement: 4.0 t/ha "
    "ground limestone.",
}


_INDEX = {"type": "integer", "minimum": 0, "maximum": 9}
_K_INDEX = ["0", "1", "2-", "2+", "3", "4", "5", "6", "7", "8", "9"]
_SOIL_REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sample_id": {"type": "string", "pattern": "^SMP-[0-9]{5}$"},
        "field_name": {"type": "string"},
        "ph": {"type": "number", "minimum": 3, "maximum": 10},
        "indices": {
            "type": "object",
            "properties": {
                "phosphorus": _INDEX,
                "potassium": {"type": "string", "enum": _K_INDEX},
                "magnesium": _INDEX,
            },
            "required": ["phosphorus", "potassium", "magnesium"],
            "additionalProperties": False,
        },
        "lime_t_per_ha": {"type": "number", "minimum": 0},
    },
    "required": ["sample_id", "field_name", "ph", "indices", "lime_t_per_ha"],
    "additionalProperties": False,
}


def _soil_lab() -> Workflow:
    wf = Workflow(
        "soil_analysis_report",
        "Answer farmers about their soil analysis results.",
        system_prompt="You answer customers of Fieldtest Soil Laboratories about their "
        "results. Find the submission, read the sample's analysis and report it. "
        "Today is Monday 2026-03-09.",
    )

    @wf.tool(required=True, read_only=True)
    def find_soil_submission(reference: str) -> str:
        """Find a submission by its reference. Returns its samples' ids and fields."""
        if alnum(reference) != "FT11482":
            raise ToolResolutionError(f"no submission {reference!r}")
        return (
            "Submission FT-11482, Holloway Farm (agronomist J. Okafor), received 2026-03-02, "
            "reported 2026-03-06. Samples: SMP-88201 North Meadow; SMP-88202 Long Acre; "
            "SMP-88203 Top Field."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_soil_submission"])
    def get_sample_analysis(sample_id: str) -> str:
        """One sample's analysis: pH, P, K and Mg (mg/l and index) and lime requirement."""
        key = sample_id.strip().upper()
        if key not in _SAMPLES:
            raise ToolResolutionError(f"no sample {sample_id!r}; ids look like SMP-88201")
        return f"{key}, {_SAMPLES[key]}"

    wf.add_schema_tool(
        "report_soil_analysis",
        "Send the customer one sample's results. Ends the task.",
        _SOIL_REPORT_SCHEMA,
        lambda args: f"Results for {args.get('sample_id')} sent.",
        terminal=True,
        prerequisites=["get_sample_analysis"],
    )

    @wf.tool
    def order_trace_element_analysis(sample_id: str) -> str:
        """Add a trace element analysis to a sample (28 GBP)."""
        return f"Trace elements ordered for {sample_id}."

    @wf.tool
    def send_sampling_kit(address: str, bags: int) -> str:
        """Post empty sample bags and a prepaid return box."""
        return f"{bags} bags posted to {address}."

    return wf


_SOIL: dict[str, Any] = {
    "sample_id": "SMP-88202",
    "field_name": "Long Acre",
    "ph": 5.8,
    "indices": {"phosphorus": 1, "potassium": "2-", "magnesium": 2},
    "lime_t_per_ha": 5.0,
}


def _check_soil(tool: str, args: dict[str, Any]) -> bool:
    indices = args.get("indices")
    return (
        tool == "report_soil_analysis"
        and same(args.get("sample_id"), "SMP-88202")
        and has_number(args.get("ph"), 5.8)
        and _counts(indices, phosphorus=1, magnesium=2)
        and isinstance(indices, dict)
        and str(indices.get("potassium")).strip() == "2-"
        and has_number(args.get("lime_t_per_ha"), 5.0)
    )


SOIL_ANALYSIS_REPORT = Scenario(
    name="soil_analysis_report",
    description="Soil lab: Long Acre is SMP-88202: pH 5.8 (not the 6.5 target or another "
    "field's), P index 1, K index '2-' (not 2+), Mg index 2, lime 5.0 t/ha (not Top Field's 4).",
    tags=(HELDOUT5_TAG, "report_agrees"),
    user_message=(
        "Hi, Tom at Holloway Farm. Our results for submission FT-11482 should be in. What did "
        "Long Acre come back as? I need the pH, the P, K and Mg indices, and how much lime it "
        "wants."
    ),
    build=_soil_lab,
    validate=_check_soil,
    ideal_iterations=3,
    reference=(
        RefCall("find_soil_submission", {"reference": "FT-11482"}),
        RefCall("get_sample_analysis", {"sample_id": "SMP-88202"}),
        RefCall("report_soil_analysis", dict(_SOIL)),
    ),
    forbidden_tools=("order_trace_element_analysis",),
)

# ── pottery studio: the glazed pieces that may go in a cone 6 firing ─────

_CONE6_READY = ["PC-4471", "PC-4472", "PC-4475"]


def _pottery() -> Workflow:
    wf = Workflow(
        "pottery_glaze_firing",
        "Help members of a pottery studio get their pieces fired.",
        system_prompt="You are the assistant of Clayhouse Studio, a members' pottery studio. "
        "Members ask you to load their pieces into the studio's kiln firings. "
        "Today is Wednesday 2026-05-13.",
    )

    @wf.tool(required=True, read_only=True)
    def list_shelf_pieces(member_email: str) -> str:
        """List the pieces on a member's shelf with their clay body and stage."""
        if not same(member_email, "joel.armitage@fastmail.example"):
            raise ToolResolutionError(f"no member with email {member_email!r}")
        return (
            "Member MBR-2214 Joel Armitage, shelf B7:\n"
            "- PC-4471 mug, stoneware, glazed (celadon), ready for glaze firing\n"
            "- PC-4472 mug, stoneware, glazed (tenmoku), ready for glaze firing\n"
            "- PC-4475 bowl, porcelain, glazed (clear), ready for glaze firing\n"
            "- PC-4478 plate, red earthenware, glazed (majolica), ready for glaze firing\n"
            "- PC-4480 vase, stoneware, bisque fired, not glazed yet\n"
            "- PC-4483 jug, stoneware, greenware, drying"
        )

    @wf.tool(required=True, read_only=True)
    def list_kiln_firings() -> str:
        """The studio's upcoming kiln firings with ids and what may go in them."""
        return (
            "Upcoming firings:\n"
            "- KF-0611 Thu 2026-05-14, bisque, cone 04, all clay bodies\n"
            "- KF-0612 Fri 2026-05-15, glaze, cone 6: stoneware and porcelain only "
            "(earthenware melts at cone 6)\n"
            "- KF-0614 Tue 2026-05-19, glaze, cone 04: earthenware only"
        )

    wf.add_schema_tool(
        "load_pieces_into_firing",
        "Put a member's pieces on the loading list of a firing (3 GBP a piece). Ends the task.",
        {
            "type": "object",
            "properties": {
                "firing_id": {"type": "string", "pattern": "^KF-[0-9]{4}$"},
                "member_id": {"type": "string", "pattern": "^MBR-[0-9]{4}$"},
                "piece_ids": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^PC-[0-9]{4}$"},
                    "minItems": 1,
                    "maxItems": 12,
                    "uniqueItems": True,
                },
            },
            "required": ["firing_id", "member_id", "piece_ids"],
            "additionalProperties": False,
        },
        lambda args: f"{len(args.get('piece_ids') or [])} pieces on {args.get('firing_id')}.",
        terminal=True,
        prerequisites=["list_shelf_pieces", "list_kiln_firings"],
    )

    @wf.tool
    def discard_piece(piece_id: str) -> str:
        """Clear a piece off the member's shelf into the reclaim bin."""
        return f"{piece_id} discarded."

    @wf.tool
    def book_wheel_session(member_id: str, date: str) -> str:
        """Book a throwing wheel for a three-hour session."""
        return f"Wheel booked for {member_id} on {date}."

    return wf


POTTERY_GLAZE_FIRING = Scenario(
    name="pottery_glaze_firing",
    description="Pottery studio: Friday's cone 6 glaze firing KF-0612 gets exactly the glazed "
    "stoneware and porcelain PC-4471, PC-4472, PC-4475 (not the earthenware plate, nor the "
    "unglazed vase or greenware jug), member MBR-2214.",
    tags=(HELDOUT5_TAG, "list_match"),
    user_message=(
        "Hi, it's Joel, joel.armitage@fastmail.example. Could you put my glazed pieces into "
        "Friday's glaze firing, please? Only the ones that are allowed in it, obviously."
    ),
    build=_pottery,
    validate=lambda tool, args: (
        tool == "load_pieces_into_firing"
        and same(args.get("firing_id"), "KF-0612")
        and same(args.get("member_id"), "MBR-2214")
        and exact_ids(args.get("piece_ids"), _CONE6_READY)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("list_shelf_pieces", {"member_email": "joel.armitage@fastmail.example"}),
        RefCall("list_kiln_firings", {}),
        RefCall(
            "load_pieces_into_firing",
            {"firing_id": "KF-0612", "member_id": "MBR-2214", "piece_ids": _CONE6_READY},
        ),
    ),
    forbidden_tools=("discard_piece",),
)

# ── coffee subscription: washed light roasts not sent before ─────────────

_SUBSCRIPTION = "sub_8KqL2vXw"
_NEW_WASHED_LIGHT = ["RB-ETH-2611", "RB-RWA-2622", "RB-PAN-2630"]


def _roastery() -> Workflow:
    wf = Workflow(
        "coffee_subscription_queue",
        "Manage subscriptions of a speciality coffee roaster.",
        system_prompt="You help subscribers of Ridgeback Roasters choose what goes in their "
        "coming deliveries. Today is Tuesday 2026-11-24.",
    )

    @wf.tool(required=True, read_only=True)
    def find_coffee_subscription(email: str) -> str:
        """Find a subscriber's subscription by email, with the coffees sent so far."""
        if not same(email, "anika.brandt@postbox.example"):
            raise ToolResolutionError(f"no subscription for {email!r}")
        return (
            f"Subscription {_SUBSCRIPTION} (Anika Brandt, customer cus_55120): 2 x 250 g every "
            "2 weeks, whole bean, next roast 2026-11-30. Sent so far: RB-KEN-2604 Kenya Kiambu "
            "AA (2026-10-27), RB-BRA-2608 Brazil Cerrado (2026-11-10)."
        )

    @wf.tool(required=True, read_only=True)
    def list_coffee_menu() -> str:
        """This month's coffees with ids, process and roast."""
        return (
            "November coffees:\n"
            "- RB-ETH-2611 Ethiopia Guji Hambela, washed, light roast\n"
            "- RB-KEN-2604 Kenya Kiambu AA, washed, light roast\n"
            "- RB-COL-2619 Colombia Huila, washed, medium roast\n"
            "- RB-RWA-2622 Rwanda Nyamasheke, washed, light roast\n"
            "- RB-BRA-2608 Brazil Cerrado, natural, medium-dark roast\n"
            "- RB-ETH-2615 Ethiopia Sidamo Bensa, natural, light roast\n"
            "- RB-PAN-2630 Panama Boquete Geisha, washed, light roast (+4.00 GBP a bag)\n"
            "- RB-MEX-2633 Mexico Chiapas decaf, washed, medium roast"
        )

    wf.add_schema_tool(
        "set_delivery_queue",
        "Replace the coffees queued for a subscription's next deliveries. Ends the task.",
        {
            "type": "object",
            "properties": {
                "subscription_id": {"type": "string", "pattern": "^sub_[A-Za-z0-9]{8}$"},
                "coffee_ids": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^RB-[A-Z]{3}-[0-9]{4}$"},
                    "minItems": 1,
                    "maxItems": 8,
                    "uniqueItems": True,
                },
                "grind": {
                    "type": "string",
                    "enum": ["whole_bean", "espresso", "filter", "cafetiere", "aeropress"],
                },
            },
            "required": ["subscription_id", "coffee_ids", "grind"],
            "additionalProperties": False,
        },
        lambda args: f"{len(args.get('coffee_ids') or [])} coffees queued.",
        terminal=True,
        prerequisites=["find_coffee_subscription", "list_coffee_menu"],
    )

    @wf.tool
    def cancel_coffee_subscription(subscription_id: str) -> str:
        """Cancel a subscription after the next delivery."""
        return f"{subscription_id} cancelled."

    @wf.tool
    def skip_next_delivery(subscription_id: str) -> str:
        """Skip the subscription's next delivery."""
        return f"Next delivery of {subscription_id} skipped."

    return wf


COFFEE_SUBSCRIPTION_QUEUE = Scenario(
    name="coffee_subscription_queue",
    description="Coffee subscription: queue exactly the washed light roasts not sent before, "
    "RB-ETH-2611, RB-RWA-2622, RB-PAN-2630 (not the Kenya already sent, not the natural "
    "Sidamo or a medium roast) on sub_8KqL2vXw, whole bean.",
    tags=(HELDOUT5_TAG, "list_match"),
    user_message=(
        "Hello, anika.brandt@postbox.example here. For my next deliveries, could you queue up "
        "all the washed light roasts I haven't had yet? Whole bean as always."
    ),
    build=_roastery,
    validate=lambda tool, args: (
        tool == "set_delivery_queue"
        and exact(args.get("subscription_id"), _SUBSCRIPTION)
        and exact_ids(args.get("coffee_ids"), _NEW_WASHED_LIGHT)
        and args.get("grind") == "whole_bean"
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_coffee_subscription", {"email": "anika.brandt@postbox.example"}),
        RefCall("list_coffee_menu", {}),
        RefCall(
            "set_delivery_queue",
            {
                "subscription_id": _SUBSCRIPTION,
                "coffee_ids": _NEW_WASHED_LIGHT,
                "grind": "whole_bean",
            },
        ),
    ),
    forbidden_tools=("cancel_coffee_subscription", "skip_next_delivery"),
)


SCENARIOS: tuple[Scenario, ...] = (
    MOT_RESULT_SUMMARY,
    SOIL_ANALYSIS_REPORT,
    POTTERY_GLAZE_FIRING,
    COFFEE_SUBSCRIPTION_QUEUE,
)
