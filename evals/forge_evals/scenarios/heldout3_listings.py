"""Held out, third group (see heldout3): the four scenarios whose answer is
read off a tool's result: a visa centre's stage and an ocean container's
status (report_agrees), a letting agent's arrears and a recipe box's choices
(list_match)."""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios._domain_schema import HELDOUT3_TAG, enum_param, exact_ids, obj


def _alnum(value: Any) -> str:
    """`value` with only its letters and digits, upper case ("MSKU 481236-1" -> "MSKU4812361")."""
    return "".join(ch for ch in str(value) if ch.isalnum()).upper()


# ── visa centre: the latest stage of the timeline, not an earlier one ─────


def _visa() -> Workflow:
    wf = Workflow(
        "visa_application_stage",
        "Answer applicants at a visa application centre.",
        system_prompt="You are the applicant helpdesk of the visa application centre. Look "
        "the application up and tell the applicant where it stands. "
        "Today is Thursday 2026-04-30.",
    )

    @wf.tool(required=True, read_only=True)
    def track_application(reference: str, date_of_birth: str) -> str:
        """Read an application's tracking record (needs the applicant's date of birth)."""
        if not mentions(reference, "044817") or not mentions(date_of_birth, "1991"):
            raise ToolResolutionError(f"no application {reference!r} for that date of birth")
        return (
            "VAC-LDN-2026-044817, skilled worker visa, applicant R. Mensah. Timeline: "
            "2026-04-02 submitted; 2026-04-09 biometrics_completed; 2026-04-16 under_review; "
            "2026-04-28 documents_requested: 2 outstanding (bank statement for March, signed "
            "employer letter), upload by 2026-05-12. Fees paid: 719.00 GBP. Passport: with "
            "applicant."
        )

    wf.add_schema_tool(
        "reply_application_stage",
        "Tell the applicant their application's stage and what is still needed. Ends the task.",
        obj(
            reference={"type": "string"},
            stage=enum_param(
                "submitted",
                "biometrics_completed",
                "under_review",
                "documents_requested",
                "decision_made",
                "passport_ready",
            ),
            outstanding_documents={"type": "integer", "minimum": 0},
            upload_deadline={"type": "string", "format": "date"},
        ),
        lambda args: f"{args.get('reference')}: {args.get('stage')}.",
        terminal=True,
        prerequisites=["track_application"],
    )

    @wf.tool
    def upload_document(reference: str, document_type: str) -> str:
        """Attach a document the applicant sent to their application."""
        return f"{document_type} attached to {reference}."

    @wf.tool
    def withdraw_application(reference: str) -> str:
        """Withdraw an application; fees are not refunded."""
        return f"{reference} withdrawn."

    return wf


_STAGE = {
    "reference": "VAC-LDN-2026-044817",
    "stage": "documents_requested",
    "outstanding_documents": 2,
    "upload_deadline": "2026-05-12",
}

VISA_APPLICATION_STAGE = Scenario(
    name="visa_application_stage",
    description="Visa centre: the latest stage documents_requested (not under_review or "
    "an earlier one), 2 documents outstanding, upload deadline 2026-05-12.",
    tags=(HELDOUT3_TAG, "report_agrees"),
    user_message=(
        "Hello, my visa application is VAC-LDN-2026-044817, date of birth 14 March 1991. "
        "It's been weeks. What stage is it at, and do you need anything else from me?"
    ),
    build=_visa,
    validate=lambda tool, args: (
        tool == "reply_application_stage"
        and mentions(args.get("reference"), "044817")
        and args.get("stage") == "documents_requested"
        and has_number(args.get("outstanding_documents"), 2)
        and args.get("upload_deadline") == "2026-05-12"
    ),
    ideal_iterations=2,
    reference=(
        RefCall(
            "track_application",
            {"reference": "VAC-LDN-2026-044817", "date_of_birth": "1991-03-14"},
        ),
        RefCall("reply_application_stage", dict(_STAGE)),
    ),
    forbidden_tools=("upload_document", "withdraw_application"),
)

# ── ocean freight: the 20ft container's customs hold and free days left ──

_CONTAINER_20FT = "MSKU4812361"


def _freight() -> Workflow:
    wf = Workflow(
        "container_customs_hold",
        "Track ocean freight containers for a freight forwarder's customers.",
        system_prompt="You answer importers for Meridian Freight. Find the booking, read the "
        "container's events and report where it is. Today is Friday 2026-06-19.",
    )

    @wf.tool(required=True, read_only=True)
    def find_shipment(booking_ref: str) -> str:
        """Find a shipment by booking reference. Returns its container numbers."""
        if not mentions(booking_ref, "77031"):
            raise ToolResolutionError(f"no booking {booking_ref!r}")
        return (
            "Booking MF-BK-77031, importer Kestrel Home Ltd, vessel Maersk Elba, Ningbo to "
            "Felixstowe. Containers: MSKU 481220-7 (40ft, furniture), MSKU 481236-1 (20ft, "
            "lighting)."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_shipment"])
    def get_container_events(container_number: str) -> str:
        """List a container's tracking events, oldest first, and its terminal storage."""
        number = _alnum(container_number)
        if number == "MSKU4812207":
            return (
                "MSKU 481220-7: 2026-05-21 loaded Ningbo (in_transit); 2026-06-16 "
                "discharged Felixstowe (at_port); 2026-06-18 released by customs (released); "
                "delivery booked 2026-06-22."
            )
        if number != _CONTAINER_20FT:
            raise ToolResolutionError(f"no container {container_number!r}")
        return (
            "MSKU 481236-1: 2026-05-21 loaded Ningbo (in_transit); 2026-06-16 discharged "
            "Felixstowe (at_port); 2026-06-17 examination ordered by HMRC (customs_hold). "
            "Free storage days left: 3, then 95.00 GBP a day."
        )

    wf.add_schema_tool(
        "report_container_status",
        "Tell the importer a container's current status. Ends the task.",
        obj(
            container_number={"type": "string"},
            status=enum_param(
                "booked", "in_transit", "at_port", "customs_hold", "released", "delivered"
            ),
            free_storage_days_left={"type": "integer", "minimum": 0},
        ),
        lambda args: f"{args.get('container_number')}: {args.get('status')}.",
        terminal=True,
        prerequisites=["get_container_events"],
    )

    @wf.tool
    def pay_terminal_storage(container_number: str, days: int) -> str:
        """Prepay terminal storage for a container, charged to the importer."""
        return f"{days} days of storage paid for {container_number}."

    @wf.tool
    def amend_delivery_booking(container_number: str, date: str) -> str:
        """Move a container's haulage delivery to another date."""
        return f"{container_number} delivery moved to {date}."

    return wf


CONTAINER_CUSTOMS_HOLD = Scenario(
    name="container_customs_hold",
    description="Freight: the 20ft container MSKU4812361 is customs_hold (not at_port, not "
    "the 40ft's released) with 3 free storage days left (not 95).",
    tags=(HELDOUT3_TAG, "report_agrees"),
    user_message=(
        "Any news on our 20-foot container on booking MF-BK-77031? Has it cleared yet, and "
        "how long before we start paying storage on it?"
    ),
    build=_freight,
    validate=lambda tool, args: (
        tool == "report_container_status"
        and _alnum(args.get("container_number")) == _CONTAINER_20FT
        and args.get("status") == "customs_hold"
        and has_number(args.get("free_storage_days_left"), 3)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_shipment", {"booking_ref": "MF-BK-77031"}),
        RefCall("get_container_events", {"container_number": "MSKU 481236-1"}),
        RefCall(
            "report_container_status",
            {
                "container_number": "MSKU 481236-1",
                "status": "customs_hold",
                "free_storage_days_left": 3,
            },
        ),
    ),
    forbidden_tools=("pay_terminal_storage", "amend_delivery_booking"),
)

# ── letting agent: reminders to exactly the tenancies that owe rent ──────

_IN_ARREARS = ["TEN-3302", "TEN-3309", "TEN-3318"]


def _lettings() -> Workflow:
    wf = Workflow(
        "rent_arrears_reminders",
        "Manage residential tenancies for a letting agent.",
        system_prompt="You assist the property managers of Cobalt Lettings. "
        "Today is Monday 2026-11-02.",
    )

    @wf.tool(required=True, read_only=True)
    def list_tenancies(building: str) -> str:
        """List a building's tenancies with their tenancy ids and rent balances."""
        if not mentions(building, "maple"):
            raise ToolResolutionError(f"no building {building!r}")
        return (
            "Maple Court (BLD-114), rent due on the 1st. TEN-3301 flat 1, A. Novak, balance "
            "0.00 GBP; TEN-3302 flat 2, J. Reyes, owes 850.00 GBP; TEN-3304 flat 3, K. Ito, "
            "in credit 120.00 GBP; TEN-3307 flat 4, vacant since 2026-09-30; TEN-3309 flat 5, "
            "P. Sandhu, owes 425.50 GBP; TEN-3312 flat 6, M. Doyle, balance 0.00 GBP; "
            "TEN-3318 flat 7, E. Byrne, owes 1,700.00 GBP; TEN-3320 flat 8, S. Adeyemi, "
            "balance 0.00 GBP (paid 2026-11-01)."
        )

    wf.add_schema_tool(
        "send_arrears_reminders",
        "Send a rent arrears reminder to each listed tenancy's tenants. Ends the task.",
        obj(
            tenancy_ids={
                "type": "array",
                "items": {"type": "string", "pattern": r"^TEN-\d{4}$"},
                "minItems": 1,
                "maxItems": 20,
                "uniqueItems": True,
            },
            channel=enum_param("email", "letter", "sms"),
            attach_statement={"type": "boolean"},
        ),
        lambda args: f"{len(args.get('tenancy_ids') or [])} reminders queued.",
        terminal=True,
        prerequisites=["list_tenancies"],
    )

    @wf.tool(read_only=True)
    def get_tenancy_statement(tenancy_id: str) -> str:
        """Show a tenancy's rent statement for the last six months."""
        return f"{tenancy_id}: statement of charges and payments."

    @wf.tool
    def serve_notice(tenancy_id: str) -> str:
        """Serve the tenants a formal notice to end the tenancy."""
        return f"Notice served on {tenancy_id}."

    @wf.tool
    def record_payment(tenancy_id: str, amount_gbp: float) -> str:
        """Record a rent payment received for a tenancy."""
        return f"{amount_gbp} GBP recorded on {tenancy_id}."

    return wf


RENT_ARREARS_REMINDERS = Scenario(
    name="rent_arrears_reminders",
    description="Lettings: remind exactly the three tenancies that owe rent, TEN-3302, "
    "TEN-3309, TEN-3318 (not the one in credit, no zero balances), by email, statement on.",
    tags=(HELDOUT3_TAG, "list_match"),
    user_message=(
        "Could you send a rent reminder to everyone at Maple Court who's behind on their "
        "rent? Email is fine, and attach their statement so they can see what's owed."
    ),
    build=_lettings,
    validate=lambda tool, args: (
        tool == "send_arrears_reminders"
        and exact_ids(args.get("tenancy_ids"), _IN_ARREARS)
        and args.get("channel") == "email"
        and args.get("attach_statement") is True
    ),
    ideal_iterations=2,
    reference=(
        RefCall("list_tenancies", {"building": "Maple Court"}),
        RefCall(
            "send_arrears_reminders",
            {"tenancy_ids": _IN_ARREARS, "channel": "email", "attach_statement": True},
        ),
    ),
    forbidden_tools=("serve_notice", "record_payment"),
)

# ── recipe box: three of the menu's recipes; the lasagne is not on it ────

_SERVINGS = {"R-2312": 2, "R-2313": 2, "R-2315": 4}


def _recipe_box() -> Workflow:
    wf = Workflow(
        "recipe_box_choices",
        "Manage weekly recipe-box subscriptions.",
        system_prompt="You help Pantry Box subscribers choose their recipes. A box holds two "
        "to five recipes, each for 2 or 4 servings. Today is Thursday 2026-03-19.",
    )

    @wf.tool(required=True, read_only=True)
    def find_subscription(email: str) -> str:
        """Find a subscription by the subscriber's email. Returns its id and next box."""
        if not same(email, "ola.brandt@postbox.example"):
            raise ToolResolutionError(f"no subscription for {email!r}")
        return (
            "Subscription SUB-20931-PB (Ola Brandt), usually 3 recipes for 2 people. Next box: "
            "week starting Monday 2026-03-23, choices close Friday 2026-03-20 23:59."
        )

    @wf.tool(required=True, read_only=True)
    def list_menu(week_start: str) -> str:
        """List the recipes on a week's menu (week_start: that Monday, YYYY-MM-DD)."""
        if not mentions(week_start, "2026-03-23"):
            raise ToolResolutionError(f"no open menu for the week starting {week_start!r}")
        return (
            "Week of 2026-03-23: R-2312 Thai green chicken curry; R-2313 mushroom and thyme "
            "risotto (V); R-2315 crispy halloumi tacos (V); R-2318 beef ragu rigatoni; "
            "R-2320 miso salmon bowl; R-2321 sweet potato dal (VG)."
        )

    recipe = obj(
        recipe_code={"type": "string", "pattern": r"^R-\d{4}$"},
        servings={"type": "integer", "minimum": 2, "maximum": 4, "multipleOf": 2},
    )
    wf.add_schema_tool(
        "choose_recipes",
        "Set the recipes in a subscription's box for a week. Ends the task.",
        obj(
            subscription_id={"type": "string", "pattern": r"^SUB-\d{5}-[A-Z]{2}$"},
            week_start={"type": "string", "format": "date"},
            recipes={"type": "array", "items": recipe, "minItems": 2, "maxItems": 5},
        ),
        lambda args: f"{len(args.get('recipes') or [])} recipes saved.",
        terminal=True,
        prerequisites=["find_subscription", "list_menu"],
    )

    @wf.tool
    def skip_week(subscription_id: str, week_start: str) -> str:
        """Skip a week: no box is delivered or charged."""
        return f"{subscription_id} skips {week_start}."

    @wf.tool
    def cancel_subscription(subscription_id: str) -> str:
        """End a subscription after the boxes already paid for."""
        return f"{subscription_id} cancelled."

    return wf


def _check_recipes(tool: str, args: dict[str, Any]) -> bool:
    recipes = args.get("recipes")
    if tool != "choose_recipes" or not isinstance(recipes, list):
        return False
    servings = {str(r.get("recipe_code")).strip(): r.get("servings") for r in recipes}
    return (
        same(args.get("subscription_id"), "SUB-20931-PB")
        and args.get("week_start") == "2026-03-23"
        and len(recipes) == len(servings) == len(_SERVINGS)
        and set(servings) == set(_SERVINGS)
        and all(has_number(servings[code], n) for code, n in _SERVINGS.items())
    )


RECIPE_BOX_CHOICES = Scenario(
    name="recipe_box_choices",
    description="Recipe box: week 2026-03-23, exactly R-2312 x2, R-2313 x2, R-2315 x4 (the "
    "lasagne is not on the menu: nothing in its place, no repeats, codes not names).",
    tags=(HELDOUT3_TAG, "list_match"),
    user_message=(
        "Hi, it's ola.brandt@postbox.example. For next week's box I'd like the Thai curry, "
        "the risotto and the halloumi tacos, plus the lasagne if it's on. Four servings of "
        "the tacos please, the usual two for the rest."
    ),
    build=_recipe_box,
    validate=_check_recipes,
    ideal_iterations=3,
    reference=(
        RefCall("find_subscription", {"email": "ola.brandt@postbox.example"}),
        RefCall("list_menu", {"week_start": "2026-03-23"}),
        RefCall(
            "choose_recipes",
            {
                "subscription_id": "SUB-20931-PB",
                "week_start": "2026-03-23",
                "recipes": [{"recipe_code": c, "servings": n} for c, n in _SERVINGS.items()],
            },
        ),
    ),
    forbidden_tools=("skip_week", "cancel_subscription"),
)


SCENARIOS: tuple[Scenario, ...] = (
    VISA_APPLICATION_STAGE,
    CONTAINER_CUSTOMS_HOLD,
    RENT_ARREARS_REMINDERS,
    RECIPE_BOX_CHOICES,
)
