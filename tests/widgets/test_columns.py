"""Column priority, middle-cut ids and the footer's fitting, as plain functions."""

from __future__ import annotations

from widgets.columns import Fit, fit_widths
from widgets.footer import fitted
from widgets.words import apart, middle

COLUMNS = (
    Fit("id", "Id", 12, give=1),
    Fit("title", "Title", 8, give=3, fill=True),
    Fit("tool", "Tool", 6, give=2),
)


def test_an_id_is_cut_in_the_middle_keeping_both_ends() -> None:
    assert middle("deploy-gateway-eu", 14) == "deploy-…way-eu"
    assert middle("short", 14) == "short"


def test_cut_ids_stay_apart_and_keep_both_ends() -> None:
    ids = ["deploy-gateway-2-staging", "deploy-gateway-3-staging", "deploy-gateway-staging"]
    forms = apart(ids, 14)
    assert len(set(forms.values())) == 3
    for real, form in forms.items():
        start, end = form.split("…")
        assert len(form) == 14 and real.startswith(start) and real.endswith(end)
        assert len(start) >= 3 and len(end) >= 3


def test_narrow_columns_give_up_width_by_priority_ids_last() -> None:
    natural = {"id": 24, "title": 40, "tool": 12}
    assert fit_widths(COLUMNS, natural, 80) == {"id": 24, "title": 40, "tool": 12}
    # the title goes to its least first, then the tool, then the id (never below 12)
    assert fit_widths(COLUMNS, natural, 44) == {"id": 24, "title": 8, "tool": 12}
    assert fit_widths(COLUMNS, natural, 36) == {"id": 22, "title": 8, "tool": 6}
    assert fit_widths(COLUMNS, natural, 10) == {"id": 12, "title": 8, "tool": 6}


def test_a_wide_row_leaves_its_spare_room_at_the_end() -> None:
    widths = fit_widths(COLUMNS, {"id": 10, "title": 20, "tool": 5}, 200)
    assert widths == {"id": 10, "title": 20, "tool": 5}


def test_the_footer_drops_the_lowest_priority_keys_first_and_keeps_rank_0() -> None:
    widths = [10, 10, 10, 7, 7]
    ranks = [2, 1, 3, 0, 0]  # the two rank-0 keys are ? and q
    assert fitted(widths, ranks, 34) == [0, 1, 3, 4]
    assert fitted(widths, ranks, 24) == [1, 3, 4]
    assert fitted(widths, ranks, 5) == [3, 4]  # ? and q even when nothing fits


def test_a_bar_gives_up_its_width_before_the_title_is_cut() -> None:
    columns = (*COLUMNS, Fit("bar", "Bar", 6, 16, give=6))
    natural = {"id": 5, "title": 28, "tool": 6}
    widths = fit_widths(columns, natural, 50)
    assert widths == {"id": 5, "title": 28, "tool": 6, "bar": 11}
