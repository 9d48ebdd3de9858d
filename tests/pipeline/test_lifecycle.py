"""The run lifecycle, as a consumer enforces it (AG-UI 1.1, page events/lifecycle.mdx).

MUST map
========

Each row is one sentence of events/lifecycle.mdx that says MUST or MUST NOT. The
sentence is named by a few of its own words and paraphrased. "rule" is the
``ProtocolViolation.rule`` that a violating stream is rejected with. "accept" and
"reject" name the tests below: a conformant stream that passes, and a violating
stream rejected at the right index with the events before it delivered.

==== ========================================================== ================
 #    sentence (quoted words, then paraphrase)                    rule
==== ========================================================== ================
L1   "A stream MUST begin": the first event is RUN_STARTED or     first-event
     RUN_ERROR.
     accept: test_stream_may_open_with_run_started,
             test_stream_may_open_with_run_error_and_a_new_run_may_follow,
             test_stream_may_consist_of_a_single_run_error
     reject: test_stream_opening_with_another_event_is_rejected
L2   "MUST NOT emit any other": the producer leads with nothing   first-event
     else, and the consumer treats a stream that opens otherwise
     as a protocol violation.
     accept/reject: as L1, plus
             test_unknown_event_before_run_started_is_dropped_not_judged
             (the verdict falls on the first event that survives enforcement)
L3   "MUST NOT send an outcome value": no outcome type outside    (none: stripped)
     the schema. Producer duty. A consumer cannot tell such a
     value from one a newer version added, and the same section
     says to strip an unrecognised outcome, so it is not a
     rejection.
     accept: test_unknown_outcome_type_is_stripped_with_a_warning
L4   "MUST close it with": a run stopped for a non-failure reason  -
     ends with RUN_FINISHED carrying the cancelled outcome.
     Producer duty, not observable by a consumer (it cannot see
     why a run ended).
L5   "MUST NOT report a stopped run": no success, not even by     -
     omission, for a stopped run. Producer duty, not observable
     by a consumer.
L6   "MUST close what the run": everything opened is closed       open-at-run-
     before a cancelling RUN_FINISHED, as before any other.       finished
     accept: test_run_finished_after_items_closed_is_accepted (every outcome)
     reject: test_run_finished_with_an_open_item_is_rejected (every outcome
             and every kind of item)
L7   "MUST NOT present a cancelled run": not as succeeded and     -
     not as failed. This is about what the consumer reports. No
     stream violates it.
     accept: test_cancelled_run_is_neither_succeeded_nor_failed
L8   "MUST NOT synthesize a RUN_FINISHED": a run whose ending     truncated
     never arrived stays unfinished (truncated).
     reject: test_truncated_stream_fails_without_synthesising_an_ending,
             test_consumer_close_raises_truncated_while_a_run_is_active
     accept: test_stream_ending_after_a_terminal_event_is_not_truncated
L9   "MUST surface the failure": RUN_ERROR reaches application    -
     code and the run is never reported as a success. No stream
     violates it.
     accept: test_run_error_is_surfaced_as_a_failed_run
L10  "MUST add it into the total" / "MUST NOT add it again":      -
     cache and reasoning parts fold into the totals once.
     Producer duty, not observable by a consumer (it never sees
     the provider's own figures).
L11  "MUST NOT copy a provider's total": totalTokens is input     -
     plus output. Producer duty, not observable by a consumer
     (it cannot see how the provider counted).
L12  "MUST NOT emit a zero" / "MUST NOT read an absent count":     -
     the producer half is a producer duty, not observable by a
     consumer. The consumer half: an absent count is unknown,
     not zero.
     accept: test_total_tokens_is_unknown_when_an_entry_lacks_it,
             test_reported_zero_is_zero_not_unknown,
             test_absent_counts_stay_absent, test_run_without_usage_has_no_total
L13  "MUST NOT include that usage": a spawning run leaves out its  -
     child runs' usage. Producer duty, not observable by a
     consumer. What a consumer can do is keep each run's own
     figures: test_each_run_keeps_its_own_usage.
L14  "MUST NOT emit any further event": a closed run gets        event-after-run-
     nothing except the two admitted events.                     finished / -error
     accept: test_runs_in_sequence_are_accepted,
             test_late_run_error_turns_the_finished_run_failed
     reject: test_event_after_run_finished_is_rejected,
             test_event_after_run_error_is_rejected
L15  "MUST treat the run as failed": a RUN_ERROR after            -
     RUN_FINISHED fails that run.
     accept: test_late_run_error_turns_the_finished_run_failed,
             test_after_late_run_error_a_new_run_is_accepted
L16  "MUST NOT emit anything after RUN_ERROR": only a new        event-after-run-
     RUN_STARTED may follow a RUN_ERROR (first, in-run or late).  error
     accept: test_run_error_then_new_run_is_accepted,
             test_after_late_run_error_a_new_run_is_accepted
     reject: test_event_after_run_error_is_rejected,
             test_event_after_late_run_error_is_rejected
L17  "MUST reject any other event": the consumer side of L14 and  event-after-run-
     L16.                                                         finished / -error
     accept/reject: as L14 and L16
L18  "MUST close the current run": no RUN_STARTED while a run is  nested-run
     active.
     accept: test_runs_in_sequence_are_accepted
     reject: test_nested_run_started_is_rejected
L19  "MUST restate it as snapshots": replayed history is sent as  -
     snapshots, not re-streamed. Producer duty, not observable by
     a consumer (it cannot tell replayed material from new
     material).
L20  "MUST NOT open a step" / "MUST NOT finish a step": no second step-already-open /
     open of an open step name, and no finish of a step that     step-not-open
     was never opened.
     accept: test_steps_opened_and_finished_are_accepted,
             test_step_name_may_be_reused_after_it_finished,
             test_same_step_name_may_be_open_once_per_owner
     reject: test_step_opened_twice_is_rejected,
             test_step_opened_twice_by_one_subagent_is_rejected,
             test_step_finished_without_start_is_rejected,
             test_step_finished_twice_is_rejected,
             test_step_finished_under_other_attribution_is_rejected
L21  "Every step a producer opens MUST": steps close before the   open-at-run-
     run finishes.                                               finished
     accept: test_run_finished_after_items_closed_is_accepted[*-step]
     reject: test_run_finished_with_an_open_item_is_rejected[*-step]
L22  "MUST NOT do is fatal": every producer MUST NOT above is     all of the above
     fatal when the consumer sees it. This covers L2,
     L14, L16, L18, L20 and L6/L21, with their reject tests. The
     exceptions are L3, stripped as the outcome section says, and
     the duties a consumer cannot see.
     reject: the rows above, and for any stream at all
             test_any_stream_is_judged_by_a_protocol_violation_and_keeps_its_prefix
L23  "MUST NOT present one": a stream the consumer rejected and   -
     a run that reported RUN_ERROR are kept apart.
     accept: test_run_error_is_surfaced_as_a_failed_run
     reject: test_rejected_stream_is_not_presented_as_a_run_error
==== ========================================================== ================

Summary: 23 MUST sentences. 16 are consumer-checkable (L1, L2, L6, L7, L8, L9, L12
consumer half, L14-L18, L20-L23). 7 are producer duties with nothing for a consumer
to observe or reject (L3-L5, L10, L11, L13, L19).

Other pages, tested here
========================

Rules that bind the same run but come from other pages, summarised in
/work/shared/agui/RULES.md sections C, D, E, G and J. Chunk events are not used:
a chunk stands for the explicit events it expands to.

==================================================== ==============================
 rule (RULES.md section)                              tests
==================================================== ==============================
 open twice: ``<kind>-already-open`` (D, E, G)         test_item_opened_twice_is_rejected
 content or end with nothing open:                     test_continuation_without_opener_is_rejected,
 ``<kind>-not-open`` (D, E, G)                         test_continuation_after_close_is_rejected,
                                                       test_subagent_error_for_an_unannounced_invocation_is_rejected
 accepted shapes (E, J)                                test_item_opened_continued_and_closed_is_accepted,
                                                       test_item_may_be_reopened_after_close,
                                                       test_items_of_one_kind_may_interleave
 spans and reasoning messages are separate             test_reasoning_span_and_message_may_share_an_id,
 namespaces (E)                                        test_reasoning_fragment_naming_only_a_span_is_rejected
 continuation tagged with another owner:               test_continuation_with_another_owner_is_rejected,
 ``attribution-mismatch`` (G)                          test_text_message_reopened_under_another_owner_is_rejected
 untagged continuation accepted; unannounced           test_untagged_continuation_is_accepted,
 attribution accepted (G, J)                           test_continuation_tagged_like_its_opener_is_accepted,
                                                       test_unannounced_attribution_is_accepted,
                                                       test_untagged_reopen_of_a_subagent_message_is_accepted,
                                                       test_untagged_reopen_keeps_the_subagent_owner
 subagent termination (G)                              test_subagent_error_ends_the_invocation_not_the_run,
                                                       test_subagent_ending_does_not_close_another_invocations_items,
                                                       test_subagent_ending_does_not_close_its_own_items
 announced step per owner at RUN_FINISHED (C, D)       test_run_finished_with_an_item_closed_only_by_one_owner_is_rejected
 RUN_ERROR ends whatever is open; next run starts      test_run_error_abandons_open_items_and_next_run_starts_clean,
 clean (C, J)                                          test_item_of_an_errored_run_is_not_open_in_the_next
 outcomes (J)                                          test_absent_outcome_is_completed,
                                                       test_success_outcome_is_completed_and_keeps_its_details,
                                                       test_interrupt_outcome_is_interrupted_with_its_interrupts
 usage as reported                                     test_usage_entries_are_recorded_and_totalled,
                                                       test_run_error_usage_is_recorded,
                                                       test_late_run_error_keeps_usage_reported_by_run_finished
 run identity                                          test_protocol_version_and_parent_run_id_are_recorded
 boundary identity: ``run-id-mismatch``,               test_run_finished_naming_another_run_is_rejected,
 ``thread-id-mismatch`` (C; basic/run-input)           test_run_finished_naming_another_thread_is_rejected,
                                                       test_second_run_on_another_thread_is_rejected,
                                                       test_boundary_events_carry_the_inputs_thread,
                                                       test_runs_on_one_thread_with_their_own_run_ids_are_accepted,
                                                       test_run_error_is_checked_against_neither_id
 ``duplicate-interrupt-id`` (H)                        test_duplicate_interrupt_ids_are_rejected,
                                                       test_distinct_interrupt_ids_are_accepted
 a tool call's owner is its message's; snapshots       test_untagged_tool_call_inherits_its_messages_subagent,
 establish ownership: ``attribution-mismatch`` (G)     test_tool_call_tagged_against_its_carrying_message_is_rejected,
                                                       test_text_reopening_a_snapshot_message_under_another_owner_is_rejected
 empty stream; truncation (J)                          test_empty_stream_is_not_a_completed_one
 ``Consumer.feed``: only ProtocolViolation, and a      test_feed_returns_each_accepted_event,
 violation is sticky                                   test_feed_raises_protocol_violations,
                                                       test_feed_after_a_violation_reraises_it,
                                                       test_feed_after_truncation_reraises_it,
                                                       test_any_stream_is_judged_by_a_protocol_violation_and_keeps_its_prefix
==================================================== ==============================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from verdicts import FINISH, START, as_dicts, completed, consumed, rejected_at, text

import agui_msgspec as agui
from agui_msgspec import (
    Consumer,
    LifecycleViolation,
    ProtocolViolation,
    Result,
    Run,
    TransportError,
    consume,
)

Event = dict[str, Any]
Owner = str | None

# --- event builders (wire names) -------------------------------------------------------


def run_started(run_id: str = "r1", **extra: Any) -> Event:
    return {"type": "RUN_STARTED", "threadId": "t", "runId": run_id, **extra}


def run_finished(run_id: str = "r1", outcome: Event | None = None, **extra: Any) -> Event:
    event: Event = {"type": "RUN_FINISHED", "threadId": "t", "runId": run_id, **extra}
    if outcome is not None:
        event["outcome"] = outcome
    return event


def run_error(message: str = "boom", **extra: Any) -> Event:
    return {"type": "RUN_ERROR", "message": message, **extra}


def tagged(event: Event, owner: Owner) -> Event:
    return event if owner is None else {**event, "subagentRunId": owner}


def text_start(item: str, owner: Owner = None) -> Event:
    return tagged({"type": "TEXT_MESSAGE_START", "messageId": item}, owner)


def text_content(item: str, owner: Owner = None) -> Event:
    return tagged({"type": "TEXT_MESSAGE_CONTENT", "messageId": item, "delta": "hi"}, owner)


def text_end(item: str, owner: Owner = None) -> Event:
    return tagged({"type": "TEXT_MESSAGE_END", "messageId": item}, owner)


def tool_start(item: str, owner: Owner = None) -> Event:
    event = {"type": "TOOL_CALL_START", "toolCallId": item, "toolCallName": "search"}
    return tagged(event, owner)


def tool_args(item: str, owner: Owner = None) -> Event:
    return tagged({"type": "TOOL_CALL_ARGS", "toolCallId": item, "delta": "{}"}, owner)


def tool_end(item: str, owner: Owner = None) -> Event:
    return tagged({"type": "TOOL_CALL_END", "toolCallId": item}, owner)


def span_start(item: str, owner: Owner = None) -> Event:
    return tagged({"type": "REASONING_START", "messageId": item}, owner)


def span_end(item: str, owner: Owner = None) -> Event:
    return tagged({"type": "REASONING_END", "messageId": item}, owner)


def thought_start(item: str, owner: Owner = None) -> Event:
    event = {"type": "REASONING_MESSAGE_START", "messageId": item, "role": "reasoning"}
    return tagged(event, owner)


def thought_content(item: str, owner: Owner = None) -> Event:
    event = {"type": "REASONING_MESSAGE_CONTENT", "messageId": item, "delta": "hmm"}
    return tagged(event, owner)


def thought_end(item: str, owner: Owner = None) -> Event:
    return tagged({"type": "REASONING_MESSAGE_END", "messageId": item}, owner)


def step_started(name: str, owner: Owner = None) -> Event:
    return tagged({"type": "STEP_STARTED", "stepName": name}, owner)


def step_finished(name: str, owner: Owner = None) -> Event:
    return tagged({"type": "STEP_FINISHED", "stepName": name}, owner)


def subagent_started(item: str, owner: Owner = None) -> Event:
    # An invocation is named by its own subagentRunId; ``owner`` does not apply.
    return {"type": "SUBAGENT_STARTED", "subagentRunId": item, "name": "helper"}


def subagent_finished(item: str, owner: Owner = None) -> Event:
    return {"type": "SUBAGENT_FINISHED", "subagentRunId": item}


def subagent_error(item: str, owner: Owner = None) -> Event:
    return {"type": "SUBAGENT_ERROR", "subagentRunId": item, "message": "gave up"}


def custom() -> Event:
    return {"type": "CUSTOM", "name": "ping", "value": 1}


def state_snapshot() -> Event:
    return {"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}


Builder = Callable[[str, Owner], Event]


@dataclass(frozen=True)
class ItemKind:
    """One kind of item a run opens and closes, and the rule-id slug it reports under."""

    slug: str
    open: Builder
    close: Builder
    carry_on: Builder | None = None  # the content event, for kinds that have one

    @property
    def continuations(self) -> tuple[Builder, ...]:
        return (self.close,) if self.carry_on is None else (self.carry_on, self.close)

    def whole(self, item: str, owner: Owner = None) -> list[Event]:
        """Open, continue and close ``item``."""
        return [self.open(item, owner), *(build(item, owner) for build in self.continuations)]


TEXT = ItemKind("text-message", text_start, text_end, text_content)
TOOL = ItemKind("tool-call", tool_start, tool_end, tool_args)
SPAN = ItemKind("reasoning", span_start, span_end)
THOUGHT = ItemKind("reasoning-message", thought_start, thought_end, thought_content)
STEP = ItemKind("step", step_started, step_finished)
SUBAGENT = ItemKind("subagent", subagent_started, subagent_finished)

KINDS = [pytest.param(kind, id=kind.slug) for kind in (TEXT, TOOL, SPAN, THOUGHT, STEP, SUBAGENT)]
REOPENABLE = [pytest.param(kind, id=kind.slug) for kind in (TEXT, TOOL, SPAN, THOUGHT, STEP)]
ATTRIBUTED = [pytest.param(kind, id=kind.slug) for kind in (TEXT, TOOL, SPAN, THOUGHT)]


def continuation_params(kinds: Sequence[ItemKind]) -> list[Any]:
    return [
        pytest.param(kind, build, id=build("x", None)["type"])
        for kind in kinds
        for build in kind.continuations
    ]


ALL_CONTINUATIONS = continuation_params([TEXT, TOOL, SPAN, THOUGHT, STEP, SUBAGENT])
ATTRIBUTED_CONTINUATIONS = continuation_params([TEXT, TOOL, SPAN, THOUGHT])

INTERRUPT: Event = {
    "type": "interrupt",
    "interrupts": [{"id": "i1", "reason": "confirm"}, {"id": "i2", "reason": "input"}],
}
OUTCOMES = [
    pytest.param(None, "completed", id="absent"),
    pytest.param({"type": "success"}, "completed", id="success"),
    pytest.param(INTERRUPT, "interrupted", id="interrupt"),
    pytest.param({"type": "cancelled"}, "cancelled", id="cancelled"),
]

# --- running streams and checking verdicts ---------------------------------------------


def run(stream: Sequence[Event]) -> Result:
    return consume([msgspec.json.encode(event) for event in stream])


def types(result: Result) -> list[str]:
    return [str(type(event).__struct_config__.tag) for event in result.events]


def accepted(stream: Sequence[Event]) -> Result:
    """Run ``stream``; assert it was accepted with every event delivered."""
    result = run(stream)
    assert result.violation is None, result.violation
    assert result.outcome == "completed"
    assert types(result) == [event["type"] for event in stream]
    return result


def rejected(stream: Sequence[Event], rule: str, index: int) -> ProtocolViolation:
    """Run ``stream``; assert it was rejected by ``rule`` at event ``index``, the prefix kept."""
    result = run(stream)
    violation = result.violation
    assert violation is not None, f"expected {rule} at event {index}, the stream was accepted"
    assert (violation.rule, violation.index) == (rule, index), violation
    assert result.outcome == "failed"
    assert types(result) == [event["type"] for event in stream[:index]]
    return violation


def only_run(result: Result) -> Run:
    assert len(result.runs) == 1
    return result.runs[0]


# --- L1, L2: the first event ----------------------------------------------------------


def test_stream_may_open_with_run_started() -> None:
    result = accepted([run_started(), run_finished()])
    assert only_run(result).status == "completed"


def test_stream_may_open_with_run_error_and_a_new_run_may_follow() -> None:
    result = accepted([run_error("unreachable"), run_started("r2"), run_finished("r2")])
    failed, second = result.runs
    assert failed.status == "failed"
    assert failed.error.message == "unreachable"
    assert (second.run_id, second.status) == ("r2", "completed")


def test_stream_may_consist_of_a_single_run_error() -> None:
    result = accepted([run_error("no agent")])
    assert only_run(result).status == "failed"


@pytest.mark.parametrize(
    "first",
    [
        run_finished(),
        text_start("m1"),
        tool_start("c1"),
        step_started("plan"),
        subagent_started("s1"),
        custom(),
        state_snapshot(),
    ],
    ids=lambda event: event["type"],
)
def test_stream_opening_with_another_event_is_rejected(first: Event) -> None:
    violation = rejected([first, run_started(), run_finished()], "first-event", 0)
    assert isinstance(violation, LifecycleViolation)


def test_unknown_event_before_run_started_is_dropped_not_judged() -> None:
    result = run([{"type": "FUTURE_EVENT"}, run_started(), run_finished()])
    assert result.violation is None
    assert types(result) == ["RUN_STARTED", "RUN_FINISHED"]
    assert any("FUTURE_EVENT" in warning for warning in result.warnings)


def test_empty_stream_is_not_a_completed_one() -> None:
    result = run([])
    assert result.outcome == "failed"
    assert result.violation is not None
    assert result.violation.rule == "truncated"


# --- L14-L18: run boundaries ----------------------------------------------------------


def test_runs_in_sequence_are_accepted() -> None:
    stream = [run_started("r1"), run_finished("r1"), run_started("r2"), run_finished("r2")]
    stream += [run_started("r3"), run_finished("r3")]
    result = accepted(stream)
    assert [(r.run_id, r.status) for r in result.runs] == [
        ("r1", "completed"),
        ("r2", "completed"),
        ("r3", "completed"),
    ]


@pytest.mark.parametrize(
    "before",
    [
        pytest.param([], id="immediately"),
        pytest.param([text_start("m1"), text_content("m1")], id="mid-message"),
        pytest.param([run_finished("r1"), run_started("r2")], id="in-second-run"),
    ],
)
def test_nested_run_started_is_rejected(before: list[Event]) -> None:
    stream = [run_started("r1"), *before, run_started("r9"), run_finished("r9")]
    rejected(stream, "nested-run", len(before) + 1)


AFTER_CLOSE = [
    run_finished(),
    text_start("m1"),
    text_content("m1"),
    tool_start("c1"),
    step_started("plan"),
    step_finished("plan"),
    subagent_started("s1"),
    custom(),
    state_snapshot(),
]
AFTER_CLOSE_IDS = [event["type"] for event in AFTER_CLOSE]


@pytest.mark.parametrize("late", AFTER_CLOSE, ids=AFTER_CLOSE_IDS)
def test_event_after_run_finished_is_rejected(late: Event) -> None:
    stream = [run_started(), run_finished(), late, run_started("r2")]
    rejected(stream, "event-after-run-finished", 2)


def test_late_run_error_turns_the_finished_run_failed() -> None:
    stream = [run_started(), text_start("m1"), text_end("m1"), run_finished()]
    result = accepted([*stream, run_error("flush failed")])
    finished = only_run(result)
    assert finished.status == "failed"
    assert finished.error.message == "flush failed"


def test_after_late_run_error_a_new_run_is_accepted() -> None:
    stream = [run_started(), run_finished(), run_error(), run_started("r2"), run_finished("r2")]
    result = accepted(stream)
    assert [r.status for r in result.runs] == ["failed", "completed"]


@pytest.mark.parametrize("late", [run_error(), *AFTER_CLOSE], ids=["RUN_ERROR", *AFTER_CLOSE_IDS])
def test_event_after_late_run_error_is_rejected(late: Event) -> None:
    stream = [run_started(), run_finished(), run_error(), late]
    rejected(stream, "event-after-run-error", 3)


def test_run_error_then_new_run_is_accepted() -> None:
    stream = [run_started(), text_start("m1"), run_error(), run_started("r2"), run_finished("r2")]
    result = accepted(stream)
    assert [(r.run_id, r.status) for r in result.runs] == [("r1", "failed"), ("r2", "completed")]


@pytest.mark.parametrize(
    "before",
    [pytest.param([], id="error-first"), pytest.param([run_started()], id="error-in-run")],
)
@pytest.mark.parametrize("late", [run_error(), *AFTER_CLOSE], ids=["RUN_ERROR", *AFTER_CLOSE_IDS])
def test_event_after_run_error_is_rejected(before: list[Event], late: Event) -> None:
    stream = [*before, run_error(), late]
    rejected(stream, "event-after-run-error", len(before) + 1)


# --- L9, L23: a run that failed is not a stream that was rejected ---------------------


def test_run_error_is_surfaced_as_a_failed_run() -> None:
    stream = [run_started(), text_start("m1"), text_content("m1"), run_error("quota", code="E42")]
    result = accepted(stream)
    failed = only_run(result)
    assert failed.status == "failed"
    assert (failed.error.message, failed.error.code) == ("quota", "E42")
    # A failure the producer reported is no rejection: the stream was well formed.
    assert result.violation is None


def test_rejected_stream_is_not_presented_as_a_run_error() -> None:
    stream = [run_started(), text_start("m1"), run_finished()]
    rejected(stream, "open-at-run-finished", 2)
    result = run(stream)
    unfinished = only_run(result)
    assert unfinished.error is None
    assert unfinished.status not in ("failed", "completed")


@pytest.mark.parametrize("kind", KINDS)
def test_run_error_abandons_open_items_and_next_run_starts_clean(kind: ItemKind) -> None:
    stream = [run_started("r1"), kind.open("x", None), run_error(), run_started("r2")]
    stream += [*kind.whole("x"), run_finished("r2")]
    result = accepted(stream)
    assert [r.status for r in result.runs] == ["failed", "completed"]


@pytest.mark.parametrize(("kind", "carry_on"), ALL_CONTINUATIONS)
def test_item_of_an_errored_run_is_not_open_in_the_next(kind: ItemKind, carry_on: Builder) -> None:
    stream = [run_started("r1"), kind.open("x", None), run_error(), run_started("r2")]
    rejected([*stream, carry_on("x", None)], f"{kind.slug}-not-open", 4)


# --- L6, L21: nothing open at RUN_FINISHED, whatever the outcome ----------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("outcome", "status"), OUTCOMES)
def test_run_finished_after_items_closed_is_accepted(
    kind: ItemKind, outcome: Event | None, status: str
) -> None:
    result = accepted([run_started(), *kind.whole("x"), run_finished(outcome=outcome)])
    assert only_run(result).status == status


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("outcome", "status"), OUTCOMES)
def test_run_finished_with_an_open_item_is_rejected(
    kind: ItemKind, outcome: Event | None, status: str
) -> None:
    stream = [run_started(), kind.open("x", None), run_finished(outcome=outcome)]
    rejected(stream, "open-at-run-finished", 2)
    # The rejected RUN_FINISHED decides nothing: the run is not reported with its outcome.
    assert only_run(run(stream)).status != status


def test_run_finished_with_an_item_closed_only_by_one_owner_is_rejected() -> None:
    stream = [run_started(), step_started("plan"), step_started("plan", "s1")]
    stream += [step_finished("plan", "s1"), run_finished()]
    rejected(stream, "open-at-run-finished", 4)


# --- L20: steps --------------------------------------------------------------------------


def test_steps_opened_and_finished_are_accepted() -> None:
    # Steps overlap one another and anything else: a label over a span, not a container.
    stream = [run_started(), step_started("plan"), text_start("m1"), step_started("act")]
    stream += [step_finished("plan"), text_content("m1"), step_finished("act"), text_end("m1")]
    accepted([*stream, run_finished()])


def test_step_opened_twice_is_rejected() -> None:
    stream = [run_started(), step_started("plan"), step_started("plan"), step_finished("plan")]
    rejected(stream, "step-already-open", 2)


def test_step_finished_without_start_is_rejected() -> None:
    stream = [run_started(), step_started("plan"), step_finished("act"), run_finished()]
    rejected(stream, "step-not-open", 2)


def test_step_finished_twice_is_rejected() -> None:
    stream = [run_started(), step_started("plan"), step_finished("plan"), step_finished("plan")]
    rejected(stream, "step-not-open", 3)


def test_step_name_may_be_reused_after_it_finished() -> None:
    stream = [run_started(), step_started("plan"), step_finished("plan")]
    accepted([*stream, step_started("plan"), step_finished("plan"), run_finished()])


def test_same_step_name_may_be_open_once_per_owner() -> None:
    stream = [run_started(), step_started("plan"), step_started("plan", "s1")]
    stream += [step_started("plan", "s2"), step_finished("plan", "s1"), step_finished("plan")]
    accepted([*stream, step_finished("plan", "s2"), run_finished()])


def test_step_opened_twice_by_one_subagent_is_rejected() -> None:
    stream = [run_started(), step_started("plan", "s1"), step_started("plan", "s1")]
    rejected(stream, "step-already-open", 2)


@pytest.mark.parametrize(
    ("opener", "closer"),
    [("s1", None), (None, "s1"), ("s1", "s2")],
    ids=["subagent-then-untagged", "parent-then-tagged", "subagent-then-other"],
)
def test_step_finished_under_other_attribution_is_rejected(opener: Owner, closer: Owner) -> None:
    stream = [run_started(), step_started("plan", opener), step_finished("plan", closer)]
    rejected([*stream, step_finished("plan", opener), run_finished()], "step-not-open", 2)


# --- items: open, continue, close ---------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_item_opened_continued_and_closed_is_accepted(kind: ItemKind) -> None:
    accepted([run_started(), *kind.whole("x"), run_finished()])


@pytest.mark.parametrize(("kind", "carry_on"), ALL_CONTINUATIONS)
def test_continuation_without_opener_is_rejected(kind: ItemKind, carry_on: Builder) -> None:
    stream = [run_started(), kind.open("y", None), carry_on("x", None), run_finished()]
    rejected(stream, f"{kind.slug}-not-open", 2)


@pytest.mark.parametrize(("kind", "carry_on"), ALL_CONTINUATIONS)
def test_continuation_after_close_is_rejected(kind: ItemKind, carry_on: Builder) -> None:
    stream = [run_started(), *kind.whole("x"), carry_on("x", None)]
    rejected(stream, f"{kind.slug}-not-open", len(stream) - 1)


@pytest.mark.parametrize("kind", KINDS)
def test_item_opened_twice_is_rejected(kind: ItemKind) -> None:
    stream = [run_started(), kind.open("x", None), kind.open("x", None), kind.close("x", None)]
    rejected(stream, f"{kind.slug}-already-open", 2)


@pytest.mark.parametrize("kind", REOPENABLE)
def test_item_may_be_reopened_after_close(kind: ItemKind) -> None:
    accepted([run_started(), *kind.whole("x"), *kind.whole("x"), run_finished()])


@pytest.mark.parametrize("kind", KINDS)
def test_items_of_one_kind_may_interleave(kind: ItemKind) -> None:
    stream = [run_started(), kind.open("a", None), kind.open("b", None)]
    stream += [build("a", None) for build in kind.continuations]
    stream += [build("b", None) for build in kind.continuations]
    accepted([*stream, run_finished()])


def test_reasoning_span_and_message_may_share_an_id() -> None:
    stream = [run_started(), span_start("r"), *THOUGHT.whole("r"), span_end("r"), run_finished()]
    accepted(stream)


@pytest.mark.parametrize("carry_on", [thought_content, thought_end], ids=lambda b: b.__name__)
def test_reasoning_fragment_naming_only_a_span_is_rejected(carry_on: Builder) -> None:
    stream = [run_started(), span_start("r"), carry_on("r", None), span_end("r")]
    rejected(stream, "reasoning-message-not-open", 2)


def test_subagent_error_ends_the_invocation_not_the_run() -> None:
    stream = [run_started(), subagent_started("s1"), text_start("m1", "s1")]
    stream += [text_end("m1", "s1"), subagent_error("s1"), *TEXT.whole("m2"), run_finished()]
    result = accepted(stream)
    assert only_run(result).status == "completed"


def test_subagent_error_for_an_unannounced_invocation_is_rejected() -> None:
    stream = [run_started(), subagent_started("s1"), subagent_error("s2"), run_finished()]
    rejected(stream, "subagent-not-open", 2)


def test_subagent_ending_does_not_close_another_invocations_items() -> None:
    stream = [run_started(), subagent_started("s1"), subagent_started("s2")]
    stream += [text_start("m1", "s1"), subagent_finished("s2"), text_content("m1", "s1")]
    stream += [text_end("m1", "s1"), subagent_finished("s1"), run_finished()]
    accepted(stream)


def test_subagent_ending_does_not_close_its_own_items() -> None:
    stream = [run_started(), subagent_started("s1"), text_start("m1", "s1")]
    rejected([*stream, subagent_finished("s1"), run_finished()], "open-at-run-finished", 4)


def test_unannounced_attribution_is_accepted() -> None:
    stream = [run_started(), *TEXT.whole("m1", "s7"), *STEP.whole("plan", "s7"), run_finished()]
    accepted(stream)


# --- attribution: continuations agree with their opener --------------------------------


@pytest.mark.parametrize(("kind", "carry_on"), ATTRIBUTED_CONTINUATIONS)
@pytest.mark.parametrize(
    ("opener", "other"),
    [("s1", "s2"), (None, "s1")],
    ids=["subagent-vs-other-subagent", "parent-vs-subagent"],
)
def test_continuation_with_another_owner_is_rejected(
    kind: ItemKind, carry_on: Builder, opener: Owner, other: Owner
) -> None:
    stream = [run_started(), kind.open("x", opener), carry_on("x", other), kind.close("x", opener)]
    violation = rejected(stream, "attribution-mismatch", 2)
    assert violation.path == "/subagentRunId"


@pytest.mark.parametrize("kind", ATTRIBUTED)
def test_untagged_continuation_is_accepted(kind: ItemKind) -> None:
    stream = [run_started(), subagent_started("s1"), kind.open("x", "s1")]
    stream += [build("x", None) for build in kind.continuations]
    accepted([*stream, subagent_finished("s1"), run_finished()])


@pytest.mark.parametrize("kind", ATTRIBUTED)
def test_continuation_tagged_like_its_opener_is_accepted(kind: ItemKind) -> None:
    accepted([run_started(), *kind.whole("x", "s1"), *kind.whole("y", None), run_finished()])


def test_text_message_reopened_under_another_owner_is_rejected() -> None:
    stream = [run_started(), *TEXT.whole("m1", "s1"), text_start("m1", "s2"), text_end("m1")]
    violation = rejected(stream, "attribution-mismatch", 4)
    assert violation.path == "/subagentRunId"


def test_untagged_reopen_of_a_subagent_message_is_accepted() -> None:
    stream = [run_started(), *TEXT.whole("m1", "s1"), *TEXT.whole("m1"), run_finished()]
    accepted(stream)


def test_untagged_reopen_keeps_the_subagent_owner() -> None:
    stream = [run_started(), *TEXT.whole("m1", "s1"), text_start("m1")]
    accepted([*stream, text_content("m1", "s1"), text_end("m1", "s1"), run_finished()])


# --- L8: truncation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stream",
    [
        pytest.param([run_started()], id="just-started"),
        pytest.param([run_started(), text_start("m1"), text_content("m1")], id="mid-message"),
        pytest.param([run_started(), step_started("plan")], id="mid-step"),
        pytest.param([run_error(), run_started("r2")], id="after-an-error"),
        pytest.param([run_started(), run_finished(), run_started("r2")], id="second-run"),
    ],
)
def test_truncated_stream_fails_without_synthesising_an_ending(stream: list[Event]) -> None:
    result = run(stream)
    assert result.outcome == "failed"
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("truncated", None)
    # Everything that arrived stays delivered, and nothing is invented for the missing end.
    assert types(result) == [event["type"] for event in stream]
    last = result.runs[-1]
    assert last.status == "truncated"
    assert last.outcome is None


@pytest.mark.parametrize(
    "stream",
    [
        pytest.param([run_started(), run_finished()], id="finished"),
        pytest.param([run_started(), run_error()], id="errored"),
        pytest.param([run_started(), run_finished(), run_error()], id="late-error"),
    ],
)
def test_stream_ending_after_a_terminal_event_is_not_truncated(stream: list[Event]) -> None:
    result = accepted(stream)
    assert only_run(result).status != "truncated"


def test_consumer_close_raises_truncated_while_a_run_is_active() -> None:
    consumer = Consumer()
    consumer.feed(msgspec.json.encode(run_started()))
    with pytest.raises(ProtocolViolation) as caught:
        consumer.close()
    assert caught.value.rule == "truncated"
    assert consumer.runs[-1].status == "truncated"


# --- outcomes ------------------------------------------------------------------------------


def test_absent_outcome_is_completed() -> None:
    finished = only_run(accepted([run_started(), run_finished()]))
    assert (finished.status, finished.outcome) == ("completed", None)


def test_success_outcome_is_completed_and_keeps_its_details() -> None:
    outcome = {"type": "success", "pendingToolCallIds": ["c1"]}
    stream = [run_started(), *TOOL.whole("c1"), run_finished(outcome=outcome, result={"n": 42})]
    finished = only_run(accepted(stream))
    assert finished.status == "completed"
    assert finished.outcome.pending_tool_call_ids == ["c1"]
    assert finished.result == {"n": 42}


def test_interrupt_outcome_is_interrupted_with_its_interrupts() -> None:
    finished = only_run(accepted([run_started(), run_finished(outcome=INTERRUPT)]))
    assert finished.status == "interrupted"
    assert [(i.id, i.reason) for i in finished.interrupts] == [("i1", "confirm"), ("i2", "input")]


def test_cancelled_run_is_neither_succeeded_nor_failed() -> None:
    stream = [run_started(), *TEXT.whole("m1"), run_finished(outcome={"type": "cancelled"})]
    result = accepted(stream)
    cancelled = only_run(result)
    assert cancelled.status == "cancelled"
    assert cancelled.error is None
    assert cancelled.interrupts == []


@pytest.mark.parametrize(
    "outcome",
    [{"type": "timeout"}, {"type": "timeout", "afterSeconds": 30}],
    ids=["bare", "with-members"],
)
def test_unknown_outcome_type_is_stripped_with_a_warning(outcome: Event) -> None:
    result = accepted([run_started(), run_finished(outcome=outcome)])
    finished = only_run(result)
    assert (finished.status, finished.outcome) == ("completed", None)
    assert any("/outcome" in warning for warning in result.warnings), result.warnings


# --- L12, L13: usage ------------------------------------------------------------------------


def usage(**counts: int) -> Event:
    return {"provider": "acme", "model": "m", **counts}


def test_usage_entries_are_recorded_and_totalled() -> None:
    entries = [usage(inputTokens=7, outputTokens=3, totalTokens=10), usage(totalTokens=5)]
    finished = only_run(accepted([run_started(), run_finished(usage=entries)]))
    assert [entry.total_tokens for entry in finished.usage] == [10, 5]
    assert finished.usage[0].input_tokens == 7
    assert finished.total_tokens() == 15


def test_total_tokens_is_unknown_when_an_entry_lacks_it() -> None:
    entries = [usage(totalTokens=10), usage(inputTokens=4, outputTokens=2)]
    finished = only_run(accepted([run_started(), run_finished(usage=entries)]))
    assert finished.total_tokens() is None


def test_reported_zero_is_zero_not_unknown() -> None:
    entries = [usage(inputTokens=0, outputTokens=0, totalTokens=0)]
    finished = only_run(accepted([run_started(), run_finished(usage=entries)]))
    assert finished.total_tokens() == 0


def test_absent_counts_stay_absent() -> None:
    entries = [usage(totalTokens=9)]
    finished = only_run(accepted([run_started(), run_finished(usage=entries)]))
    entry = finished.usage[0]
    assert entry.input_tokens is msgspec.UNSET
    assert entry.cached_input_tokens is msgspec.UNSET


def test_run_without_usage_has_no_total() -> None:
    finished = only_run(accepted([run_started(), run_finished()]))
    assert finished.usage == []
    assert finished.total_tokens() is None


def test_run_error_usage_is_recorded() -> None:
    failed = only_run(accepted([run_started(), run_error(usage=[usage(totalTokens=4)])]))
    assert failed.total_tokens() == 4


def test_late_run_error_keeps_usage_reported_by_run_finished() -> None:
    stream = [run_started(), run_finished(usage=[usage(totalTokens=12)]), run_error()]
    failed = only_run(accepted(stream))
    assert failed.status == "failed"
    assert failed.total_tokens() == 12


def test_each_run_keeps_its_own_usage() -> None:
    stream = [run_started("r1"), run_finished("r1", usage=[usage(totalTokens=10)])]
    stream += [
        run_started("r2", parentRunId="r1"),
        run_finished("r2", usage=[usage(totalTokens=3)]),
    ]
    result = accepted(stream)
    assert [r.total_tokens() for r in result.runs] == [10, 3]


# --- the run's identity ------------------------------------------------------------------------


def test_protocol_version_and_parent_run_id_are_recorded() -> None:
    stream = [run_started("r1", protocolVersion="1.1", parentRunId="r0"), run_finished("r1")]
    result = accepted([*stream, run_started("r2"), run_finished("r2")])
    first, second = result.runs
    assert (first.thread_id, first.run_id) == ("t", "r1")
    assert (first.protocol_version, first.parent_run_id) == ("1.1", "r0")
    assert (second.protocol_version, second.parent_run_id) == (None, None)


# --- Consumer.feed directly -------------------------------------------------------------------


def test_feed_returns_each_accepted_event() -> None:
    consumer = Consumer()
    stream = [run_started(), *TEXT.whole("m1"), run_finished()]
    for event in stream:
        (delivered,) = consumer.feed(msgspec.json.encode(event))
        assert type(delivered).__struct_config__.tag == event["type"]
    consumer.close()
    assert consumer.violation is None
    assert consumer.runs[-1].status == "completed"


BAD_PAYLOADS = [
    pytest.param([b"{not json"], "invalid-json", id="not-json"),
    pytest.param([b"[1, 2]"], "not-an-object", id="not-an-object"),
    pytest.param(
        [run_started(), {"type": "TEXT_MESSAGE_START"}], "malformed-event", id="malformed"
    ),
    pytest.param([step_started("plan")], "first-event", id="first-event"),
    pytest.param([run_started(), run_started()], "nested-run", id="nested"),
    pytest.param([run_started(), text_end("m1")], "text-message-not-open", id="orphan-end"),
    pytest.param(
        [run_started(), tool_start("c1", "s1"), tool_args("c1", "s2")],
        "attribution-mismatch",
        id="attribution",
    ),
]


def fed(consumer: Consumer, payloads: Sequence[Event | bytes]) -> ProtocolViolation:
    """Feed until the consumer raises; return what it raised."""
    for payload in payloads:
        data = payload if isinstance(payload, bytes) else msgspec.json.encode(payload)
        try:
            consumer.feed(data)
        except (ProtocolViolation, TransportError) as violation:
            return violation
    pytest.fail("the consumer accepted every payload")


@pytest.mark.parametrize(("payloads", "rule"), BAD_PAYLOADS)
def test_feed_raises_protocol_violations(payloads: list[Event | bytes], rule: str) -> None:
    violation = fed(Consumer(), payloads)
    assert violation.rule == rule
    assert violation.index == len(payloads) - 1


@pytest.mark.parametrize(("payloads", "rule"), BAD_PAYLOADS)
def test_feed_after_a_violation_reraises_it(payloads: list[Event | bytes], rule: str) -> None:
    consumer = Consumer()
    violation = fed(consumer, payloads)
    for good in (run_started("r2"), run_error()):
        with pytest.raises(ProtocolViolation) as again:
            consumer.feed(msgspec.json.encode(good))
        assert again.value is violation
    with pytest.raises(ProtocolViolation) as at_close:
        consumer.close()
    assert at_close.value is violation
    assert consumer.violation is violation


def test_feed_after_truncation_reraises_it() -> None:
    consumer = Consumer()
    consumer.feed(msgspec.json.encode(run_started()))
    with pytest.raises(ProtocolViolation) as truncated:
        consumer.close()
    with pytest.raises(ProtocolViolation) as again:
        consumer.feed(msgspec.json.encode(run_finished()))
    assert again.value is truncated.value


# --- any stream at all: only ProtocolViolation, and the prefix is kept -------------------------


ALPHABET: list[Event] = [
    run_started(),
    run_finished(),
    run_finished(outcome={"type": "cancelled"}),
    run_error(),
    custom(),
    *(
        build(item, owner)
        for kind in (TEXT, TOOL, SPAN, THOUGHT, STEP, SUBAGENT)
        for build in (kind.open, *kind.continuations)
        for item in ("a", "b")
        for owner in (None, "a")
    ),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=14))
# A tool call and a reasoning message may share an id: toolCallId and messageId are
# separate namespaces. Kept as an explicit example: the consumer has crashed on it.
@example(stream=[run_started(), *TOOL.whole("a"), *THOUGHT.whole("a"), run_finished()])
def test_any_stream_is_judged_by_a_protocol_violation_and_keeps_its_prefix(
    stream: list[Event],
) -> None:
    result = run(stream)  # consume catches ProtocolViolation only: anything else escapes here
    violation = result.violation
    if violation is None:
        assert types(result) == [event["type"] for event in stream]
        assert all(r.status != "active" for r in result.runs)
    elif violation.index is None:
        assert violation.rule == "truncated"
        assert types(result) == [event["type"] for event in stream]
    else:
        assert isinstance(violation, LifecycleViolation)
        assert types(result) == [event["type"] for event in stream[: violation.index]]


def test_events_of_the_failing_payload_that_passed_ride_on_the_violation() -> None:
    # A chunk expands to END of the previous item, then START of the next: if START breaks
    # a rule, the END that passed (and that the reducer applied) must not be lost.
    consumer = Consumer()
    consumer.feed(msgspec.json.encode({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}))
    consumer.feed(
        msgspec.json.encode({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "a"})
    )
    consumer.feed(
        msgspec.json.encode(
            {"type": "TEXT_MESSAGE_START", "messageId": "m2", "subagentRunId": "s1"}
        )
    )
    chunk = msgspec.json.encode({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m2", "delta": "b"})
    with pytest.raises(LifecycleViolation) as caught:
        consumer.feed(chunk)
    assert caught.value.rule == "text-message-already-open"
    assert [type(e).__name__ for e in caught.value.delivered] == ["TextMessageEndEvent"]


def tool(kind: str, call_id: str, owner: str | None = None, **fields: Any) -> dict[str, Any]:
    event = {"type": f"TOOL_CALL_{kind}", "toolCallId": call_id, **fields}
    if kind == "START":
        event.setdefault("toolCallName", "search")
    if kind == "ARGS":
        event.setdefault("delta", "{}")
    if owner is not None:
        event["subagentRunId"] = owner
    return event


# --- a tool call inherits the attribution of the message that holds it (events/subagents) --------


def test_untagged_tool_call_inherits_its_messages_subagent() -> None:
    result = completed(
        consumed(
            START,
            text("START", "m1", "s1"),
            tool("START", "tc1", parentMessageId="m1"),
            tool("ARGS", "tc1", "s1"),
            tool("END", "tc1", "s1"),
            text("END", "m1", "s1"),
            FINISH,
        )
    )
    (message,) = as_dicts(result.messages)
    assert message["subagentRunId"] == "s1"
    assert message["toolCalls"][0]["id"] == "tc1"


def test_inherited_tool_call_continued_by_another_owner_is_rejected() -> None:
    result = consumed(
        START,
        text("START", "m1", "s1"),
        tool("START", "tc1", parentMessageId="m1"),
        tool("ARGS", "tc1", "s2"),
    )
    rejected_at(result, "attribution-mismatch", 3, "/subagentRunId")


def test_tool_call_tagged_against_its_carrying_message_is_rejected() -> None:
    """Decision: a producer MUST NOT attribute a call against its message (events/subagents);
    accepting it would put one producer's call into another's message."""
    result = consumed(
        START, text("START", "m1", "s1"), tool("START", "tc1", "s2", parentMessageId="m1")
    )
    rejected_at(result, "attribution-mismatch", 2, "/subagentRunId")
    result = consumed(START, text("START", "m1"), tool("START", "tc1", "s1", parentMessageId="m1"))
    rejected_at(result, "attribution-mismatch", 2, "/subagentRunId")


def test_tool_call_tagged_like_its_message_is_accepted() -> None:
    completed(
        consumed(
            START,
            text("START", "m1", "s1"),
            text("END", "m1"),
            tool("START", "tc1", "s1", parentMessageId="m1"),
            tool("END", "tc1"),
            FINISH,
        )
    )


def test_message_minted_by_a_tool_call_is_owned_like_the_call() -> None:
    """A call naming a message not seen yet mints it under the call's owner: text later
    streamed into that message by another owner is a mismatch."""
    events = [START, tool("START", "tc1", "s1", parentMessageId="m9"), tool("END", "tc1")]
    completed(consumed(*events, text("START", "m9", "s1"), text("END", "m9"), FINISH))
    rejected_at(consumed(*events, text("START", "m9", "s2")), "attribution-mismatch", 3)


# --- a MESSAGES_SNAPSHOT establishes each message's ownership (events/state, subagents) ----------


def snapshot(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


def test_text_reopening_a_snapshot_message_under_another_owner_is_rejected() -> None:
    restated = snapshot({"id": "a1", "role": "assistant", "content": "parent's"})
    result = consumed(START, restated, text("START", "a1", "s1"))
    rejected_at(result, "attribution-mismatch", 2, "/subagentRunId")
    owned = snapshot({"id": "a1", "role": "assistant", "content": "x", "subagentRunId": "s1"})
    rejected_at(consumed(START, owned, text("START", "a1", "s2")), "attribution-mismatch", 2)


def test_text_reopening_a_snapshot_message_under_its_owner_appends() -> None:
    owned = snapshot({"id": "a1", "role": "assistant", "content": "one ", "subagentRunId": "s1"})
    result = completed(
        consumed(
            START,
            owned,
            text("START", "a1"),
            text("CONTENT", "a1", "s1", delta="two"),
            text("END", "a1"),
            FINISH,
        )
    )
    assert as_dicts(result.messages)[0]["content"] == "one two"


def test_tool_call_reopened_after_a_snapshot_under_another_owner_is_rejected() -> None:
    carrier = {
        "id": "a1",
        "role": "assistant",
        "toolCalls": [
            {"id": "tc1", "type": "function", "function": {"name": "f", "arguments": "{"}}
        ],
    }
    result = consumed(START, snapshot(carrier), tool("START", "tc1", "s1"))
    rejected_at(result, "attribution-mismatch", 2)
    completed(
        consumed(
            START,
            snapshot(carrier),
            tool("START", "tc1"),
            tool("ARGS", "tc1", delta="}"),
            tool("END", "tc1"),
            FINISH,
        )
    )


def test_reasoning_message_restated_by_a_snapshot_keeps_its_owner() -> None:
    thought = {"id": "th1", "role": "reasoning", "content": "", "subagentRunId": "s1"}
    result = consumed(
        START,
        snapshot(thought),
        {
            "type": "REASONING_MESSAGE_START",
            "messageId": "th1",
            "role": "reasoning",
            "subagentRunId": "s2",
        },
    )
    rejected_at(result, "attribution-mismatch", 2)


def test_snapshot_restating_an_open_message_establishes_its_owner() -> None:
    """The snapshot, not the opener, owns an open message it restates (events/state): the
    subagent's continuation no longer agrees with it (events/subagents), and an untagged one
    continues what the snapshot owns."""
    opened = [START, text("START", "a1", "s1")]
    parents = snapshot({"id": "a1", "role": "assistant", "content": "p"})
    result = consumed(*opened, parents, text("CONTENT", "a1", "s1", delta="s"), text("END", "a1"))
    rejected_at(result, "attribution-mismatch", 3, "/subagentRunId")
    assert as_dicts(result.messages)[0]["content"] == "p"
    rejected_at(consumed(*opened, parents, text("END", "a1", "s1")), "attribution-mismatch", 3)
    owned = completed(
        consumed(*opened, parents, text("CONTENT", "a1", delta="+"), text("END", "a1"), FINISH)
    )
    assert as_dicts(owned.messages)[0]["content"] == "p+"
    handed = snapshot({"id": "a1", "role": "assistant", "content": "", "subagentRunId": "s2"})
    rejected_at(
        consumed(*opened, handed, text("CONTENT", "a1", "s1", delta="x")), "attribution-mismatch", 3
    )
    completed(
        consumed(*opened, handed, text("CONTENT", "a1", "s2", delta="x"), text("END", "a1"), FINISH)
    )


def test_snapshot_restating_an_open_tool_call_establishes_its_owner() -> None:
    carrier = {
        "id": "a1",
        "role": "assistant",
        "toolCalls": [
            {"id": "tc1", "type": "function", "function": {"name": "f", "arguments": "{"}}
        ],
    }
    opened = [START, tool("START", "tc1", "s1")]
    result = consumed(*opened, snapshot(carrier), tool("ARGS", "tc1", "s1"))
    rejected_at(result, "attribution-mismatch", 3, "/subagentRunId")
    completed(consumed(*opened, snapshot(carrier), tool("ARGS", "tc1"), tool("END", "tc1"), FINISH))


def test_snapshot_restating_an_open_reasoning_message_establishes_its_owner() -> None:
    def thought(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": f"REASONING_MESSAGE_{kind}", "messageId": "th1", **fields}

    opened = [START, thought("START", role="reasoning", subagentRunId="s1")]
    restated = snapshot({"id": "th1", "role": "reasoning", "content": "", "subagentRunId": "s2"})
    result = consumed(*opened, restated, thought("CONTENT", delta="x", subagentRunId="s1"))
    rejected_at(result, "attribution-mismatch", 3)
    completed(consumed(*opened, restated, thought("END", subagentRunId="s2"), FINISH))


def test_snapshot_leaves_an_open_reasoning_span_to_its_opener() -> None:
    """A reasoning span is not a message (events/reasoning: separate namespaces), so a
    snapshot restating a reasoning message of the same id does not own it."""
    span = {"type": "REASONING_START", "messageId": "th1", "subagentRunId": "s1"}
    restated = snapshot({"id": "th1", "role": "reasoning", "content": ""})
    end = {"type": "REASONING_END", "messageId": "th1", "subagentRunId": "s1"}
    completed(consumed(START, span, restated, end, FINISH))


# --- boundary identity (basic/run-input "Identity") ----------------------------------------------


def test_run_finished_naming_another_run_is_rejected() -> None:
    result = consumed(START, {**FINISH, "runId": "r2"})
    rejected_at(result, "run-id-mismatch", 1, "/runId")


def test_run_finished_naming_another_thread_is_rejected() -> None:
    rejected_at(consumed(START, {**FINISH, "threadId": "t2"}), "thread-id-mismatch", 1, "/threadId")


def test_second_run_on_another_thread_is_rejected() -> None:
    second = {"type": "RUN_STARTED", "threadId": "t2", "runId": "r2"}
    rejected_at(consumed(START, FINISH, second), "thread-id-mismatch", 2, "/threadId")


def test_runs_on_one_thread_with_their_own_run_ids_are_accepted() -> None:
    second = [{**START, "runId": "r2"}, {**FINISH, "runId": "r2"}]
    result = completed(consumed(START, FINISH, *second))
    assert [r.run_id for r in result.runs] == ["r1", "r2"]


def test_run_error_is_checked_against_neither_id() -> None:
    """RUN_ERROR carries no ids; the run it fails need not be named."""
    error = {"type": "RUN_ERROR", "message": "boom"}
    result = completed(
        consumed(error, START, error, {**START, "runId": "r2"}, {**FINISH, "runId": "r2"})
    )
    assert [r.status for r in result.runs] == ["failed", "failed", "completed"]


def test_boundary_events_carry_the_inputs_thread() -> None:
    given = {"threadId": "t1", "runId": "r1", "messages": []}
    completed(consumed(START, FINISH, input=given))
    other = {"threadId": "t0", "runId": "r1", "messages": []}
    rejected_at(consumed(START, FINISH, input=other), "thread-id-mismatch", 0, "/threadId")


def test_a_replayed_run_carries_its_own_run_id_on_the_inputs_thread() -> None:
    given = {"threadId": "t1", "runId": "r2", "messages": []}
    replayed = [START, FINISH, {**START, "runId": "r2"}, {**FINISH, "runId": "r2"}]
    completed(consumed(*replayed, input=given))


# --- duplicate interrupt ids (basic/patterns/interrupt-resume) -----------------------------------


def interrupted(*ids: str) -> dict[str, Any]:
    interrupts = [{"id": i, "reason": "confirm"} for i in ids]
    return {**FINISH, "outcome": {"type": "interrupt", "interrupts": interrupts}}


def test_duplicate_interrupt_ids_are_rejected() -> None:
    result = consumed(START, interrupted("i1", "i2", "i1"))
    rejected_at(result, "duplicate-interrupt-id", 1, "/outcome/interrupts/2/id")
    assert result.runs[0].interrupts == []


def test_distinct_interrupt_ids_are_accepted() -> None:
    result = completed(consumed(START, interrupted("i1", "i2")))
    assert [i.id for i in result.runs[0].interrupts] == ["i1", "i2"]


@pytest.mark.parametrize("given", [None, {"threadId": "t1", "runId": "r1", "messages": []}])
def test_identity_checks_hold_through_the_incremental_consumer(given: Any) -> None:
    consumer = agui.Consumer(input=given)
    consumer.feed(msgspec.json.encode(START))
    with pytest.raises(agui.LifecycleViolation) as caught:
        consumer.feed(msgspec.json.encode({**FINISH, "runId": "other"}))
    assert caught.value.rule == "run-id-mismatch"


# --- the owners a run remembers of closed items: bounded by max_closed_items -----------------


def remembering(limit: int, *stream: Event) -> Result:
    return consume([msgspec.json.encode(event) for event in stream], max_closed_items=limit)


def closed(item: str, starts: Callable[..., Event], ends: Callable[..., Event]) -> list[Event]:
    return [starts(item), ends(item)]


ATTRIBUTED = [
    pytest.param(text_start, text_end, id="text message"),
    pytest.param(tool_start, tool_end, id="tool call"),
    pytest.param(span_start, span_end, id="reasoning span"),
    pytest.param(thought_start, thought_end, id="reasoning message"),
]


@pytest.mark.parametrize(("starts", "ends"), ATTRIBUTED)
def test_a_run_remembers_up_to_max_closed_items(
    starts: Callable[..., Event], ends: Callable[..., Event]
) -> None:
    items = [event for n in range(3) for event in closed(f"i{n}", starts, ends)]
    assert remembering(3, run_started(), *items, run_finished()).violation is None
    # the first is remembered still: reopening it under another owner is the mismatch
    reopened = remembering(3, run_started(), *items, starts("i0", "sub"))
    assert reopened.violation is not None
    assert (reopened.violation.rule, reopened.violation.index) == ("attribution-mismatch", 7)


@pytest.mark.parametrize(("starts", "ends"), ATTRIBUTED)
def test_one_closed_item_more_than_max_closed_items_is_refused(
    starts: Callable[..., Event], ends: Callable[..., Event]
) -> None:
    items = [event for n in range(4) for event in closed(f"i{n}", starts, ends)]
    result = remembering(3, run_started(), *items, run_finished())
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("too-many-closed-items", 8)
    assert isinstance(result.violation, LifecycleViolation)
    assert len(result.events) == 8  # what came before the close that would pass it


def test_closed_steps_and_subagents_are_not_remembered() -> None:
    """Neither is attributed: nothing of them outlives their close."""
    items = [
        event
        for n in range(5)
        for event in (
            step_started(f"s{n}"),
            step_finished(f"s{n}"),
            subagent_started(f"a{n}"),
            subagent_finished(f"a{n}"),
        )
    ]
    assert remembering(0, run_started(), *items, run_finished()).violation is None


def test_an_item_closed_again_is_remembered_once() -> None:
    reopened = [event for _ in range(5) for event in closed("m1", text_start, text_end)]
    assert remembering(1, run_started(), *reopened, run_finished()).violation is None


def test_each_run_remembers_its_own() -> None:
    items = [event for n in range(3) for event in closed(f"m{n}", text_start, text_end)]
    second = [run_started("r2"), *items, run_finished("r2")]
    assert remembering(3, run_started(), *items, run_finished(), *second).violation is None


def test_owners_a_snapshot_establishes_are_remembered_within_the_bound() -> None:
    messages = [{"id": f"m{n}", "role": "assistant", "content": "x"} for n in range(4)]
    restating = {"type": "MESSAGES_SNAPSHOT", "messages": messages}
    assert remembering(4, run_started(), restating, run_finished()).violation is None
    result = remembering(3, run_started(), restating, run_finished())
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("too-many-closed-items", 1)


def test_activity_owners_are_remembered_within_the_bound() -> None:
    activities = [
        {"type": "ACTIVITY_SNAPSHOT", "messageId": f"a{n}", "activityType": "plan", "content": {}}
        for n in range(4)
    ]
    assert remembering(4, run_started(), *activities, run_finished()).violation is None
    result = remembering(3, run_started(), *activities, run_finished())
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("too-many-closed-items", 4)


def test_a_tool_call_naming_an_unseen_message_remembers_it() -> None:
    """The call mints its carrier, so a stream of calls naming new messages is bounded too."""
    calls = [
        {**tool_start(f"c{n}"), "parentMessageId": f"p{n}"}
        if kind == "start"
        else tool_end(f"c{n}")
        for n in range(2)
        for kind in ("start", "end")
    ]
    assert remembering(4, run_started(), *calls, run_finished()).violation is None
    result = remembering(2, run_started(), *calls, run_finished())
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("too-many-closed-items", 3)
