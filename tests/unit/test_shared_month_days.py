"""Days that share one month name (guardrails/dates.py `dates_in`).

dateparser reads "14th/15th November" as 14 November 2115: the second day
becomes a year. Each day is written with its month before it reads them.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from forge_core.guardrails.dates import dates_in

TODAY = datetime(2026, 9, 29)


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("the weekend of 14th/15th November - both days", ["2026-11-14", "2026-11-15"]),
        ("on 14th and 15th November", ["2026-11-14", "2026-11-15"]),
        ("the 3rd, 4th and 5th of October", ["2026-10-03", "2026-10-04", "2026-10-05"]),
        ("November 14th and 23rd", ["2026-11-14", "2026-11-23"]),
        ("Sat 14 and Sun 15 November", ["2026-11-14", "2026-11-15"]),
        # A range keeps its ends.
        ("12-14 December", ["2026-12-12", "2026-12-14"]),
    ],
)
def test_each_day_of_a_shared_month_is_read_with_it(text: str, days: list[str]) -> None:
    assert [d.date().isoformat() for d in dates_in(text, TODAY)] == days


def test_a_clock_time_before_a_date_is_no_day_of_it() -> None:
    assert [d.date().isoformat() for d in dates_in("at 10.30 and 11 November", TODAY)] == [
        "2026-11-11"
    ]


def test_a_year_far_off_that_the_text_does_not_write_is_dropped() -> None:
    # dateparser alone reads this as 12 June 2113.
    assert all(d.year < 2100 for d in dates_in("June 12 and 13", TODAY))
    assert [d.year for d in dates_in("on 2 May 2031", TODAY)] == [2031]
