"""The differential harness's own pieces (no node needed): corpus, normalisation, table.

The comparison itself runs in `nox -s differential`, beside the reference client.
"""

from __future__ import annotations

import categories
import compare
import corpus
import pytest


def test_a_seed_names_the_whole_corpus() -> None:
    if not corpus.FIXTURES.is_dir():
        pytest.skip(f"no conformance fixtures at {corpus.FIXTURES}")
    first, again, other = corpus.cases(7, 300), corpus.cases(7, 300), corpus.cases(8, 300)
    assert [c.stream for c in first] == [c.stream for c in again]
    assert [c.stream for c in first] != [c.stream for c in other]
    used = {name for c in corpus.cases(7, 2000) for name in c.mutations}
    assert used == set(corpus.OPERATORS)


def test_ids_minted_by_a_translation_compare_by_position() -> None:
    wire = {"m1"}
    ours = compare.unmint([{"id": "thinking-1"}, {"id": "m1"}], wire)
    theirs = compare.unmint([{"id": "5d1c-uuid"}, {"id": "m1"}], wire)
    assert ours == theirs == [{"id": "<minted-1>"}, {"id": "m1"}]
    assert compare.canonical(1.0) == compare.canonical(1) != compare.canonical(True)


def test_the_client_run_statuses_follow_its_delivered_events() -> None:
    started = {"type": "RUN_STARTED"}
    interrupted = {"type": "RUN_FINISHED", "outcome": {"type": "interrupt"}}
    assert compare.run_statuses([started, interrupted], accepted=True) == ["interrupted"]
    assert compare.run_statuses([{"type": "RUN_ERROR"}], accepted=True) == ["failed"]
    # a run still open when runAgent() resolved: the client told its caller it succeeded
    assert compare.run_statuses([started], accepted=True) == ["completed"]
    assert compare.run_statuses([started], accepted=False) == ["active"]


def test_every_row_names_its_page_sentence_and_side() -> None:
    names = [c.name for c in categories.CATEGORIES]
    assert len(names) == len(set(names))
    for row in categories.CATEGORIES:
        assert row.page
        assert row.sentence
        assert row.explains
        assert row.favours in (
            categories.FAVOURS_US,
            categories.FAVOURS_REFERENCE,
            categories.SILENT,
        )
        assert not row.expected_fix or row.favours == categories.FAVOURS_REFERENCE


def test_a_truncated_stream_read_as_success_falls_in_its_row() -> None:
    case = corpus.Case(
        0, "probe", ["cut"], [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    )
    ours = compare.View("rejected", None, ["RUN_STARTED"], [], {}, ["truncated"], "truncated")
    ref = compare.View("accepted", None, ["RUN_STARTED"], [], {}, ["completed"])
    item = categories.Disagreement(case, ours, ref, compare.differences(ours, ref))
    held = [c.name for c in categories.CATEGORIES if c.test(item)]
    assert held == ["truncated-read-as-success"]
    # the same stream with the verdicts the other way round is in no row
    item = categories.Disagreement(case, ref, ours, compare.differences(ref, ours))
    assert [c.name for c in categories.CATEGORIES if c.test(item)] == []
