"""The differential test: agui_msgspec.consume() beside @ag-ui/client 1.0.0, stream by stream.

    python tests/differential/run.py --node-modules DIR [--sample N | --full] [--seed S]

`nox -s differential` installs the client and calls this. Every stream is the
conformance fixtures' or a seeded mutant of one (corpus.py); both sides' results are
normalised (compare.py) and every disagreement must fall into a category of the table
in categories.py, which names the spec sentence deciding it. Exit status 1 when a
disagreement falls into no category, or into a row where the spec favours the
reference client (a bug in our consumer).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from categories import CATEGORIES, FAVOURS_REFERENCE, Category, Disagreement
from compare import differences, ours, reference
from corpus import FIXTURES, Case, cases

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "node" / "reference.cjs"
SAMPLE = 3_000
FULL = 25_000
SEED = 0xD1FF
UNCATEGORISED = "UNCATEGORISED"


def run_reference(batch: list[Case], node_modules: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        given, got = Path(tmp, "in.jsonl"), Path(tmp, "out.jsonl")
        with given.open("w", encoding="utf-8") as out:
            for case in batch:
                line = {"id": case.id, "stream": case.stream, "input": case.input}
                if case.peer is not None:
                    line["peer"] = case.peer
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
        env = {**os.environ, "NODE_PATH": str(node_modules), "NODE_ENV": "production"}
        env.pop("SUPPRESS_TRANSFORMATION_WARNINGS", None)
        subprocess.run(["node", str(SCRIPT), str(given), str(got)], env=env, check=True)
        reports = [json.loads(line) for line in got.read_text(encoding="utf-8").splitlines()]
    if [r["id"] for r in reports] != [c.id for c in batch]:
        raise SystemExit("the reference client answered for other streams than it was given")
    return reports


def _holds(row: Category, item: Disagreement) -> bool:
    try:
        return row.test(item)
    except Exception as exc:  # a classifier must take any JSON; say which one did not
        raise RuntimeError(f"row {row.name} failed on {item.case.describe()}") from exc


def classify(item: Disagreement) -> list[Category]:
    """The rows that hold, if together they account for every differing field; else [].

    A row that holds but is not needed to cover the fields is left out, rows favouring the
    reference client first, so a known bug is never blamed for what another row explains.
    """
    held = [c for c in CATEGORIES if _holds(c, item)]

    def covers(rows: list[Category]) -> bool:
        return frozenset().union(*(c.explains for c in rows)) >= set(item.fields)

    if not covers(held):
        return []
    for row in sorted(held, key=lambda c: c.favours != FAVOURS_REFERENCE):
        rest = [c for c in held if c is not row]
        if rest and covers(rest):
            held = rest
    return held


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-modules", type=Path, required=True)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--sample", type=int, default=SAMPLE, help="mutated streams (CI)")
    size.add_argument("--full", action="store_true", help=f"{FULL:,} mutated streams")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--show", type=int, default=0, help="examples printed per category")
    parser.add_argument("--dump", type=Path, help="write every disagreement here (JSON lines)")
    parser.add_argument(
        "--strict", action="store_true", help="fail on known bugs already routed, too"
    )
    args = parser.parse_args(argv)

    if not FIXTURES.is_dir():
        print(f"differential: skipped, no conformance fixtures at {FIXTURES}")
        return 0
    started = time.perf_counter()
    batch = cases(args.seed, FULL if args.full else args.sample)
    reports = run_reference(batch, args.node_modules)
    reference_seconds = time.perf_counter() - started

    counts: Counter[str] = Counter()  # by the first row that holds
    also: Counter[str] = Counter()  # rows that held beside an earlier one
    examples: dict[str, list[Disagreement]] = {}
    agreements = 0
    dump = args.dump.open("w", encoding="utf-8") if args.dump else None
    for case, report in zip(batch, reports, strict=True):
        mine, theirs = ours(case), reference(case, report)
        fields = differences(mine, theirs)
        if not fields:
            agreements += 1
            continue
        item = Disagreement(case, mine, theirs, fields)
        held = classify(item)
        names = [c.name for c in held] or [UNCATEGORISED]
        counts[names[0]] += 1
        for name in names[1:]:
            also[name] += 1
        for name in names:
            examples.setdefault(name, []).append(item)
        if dump:
            line = {"categories": names, **item.summary()}
            dump.write(json.dumps(line, ensure_ascii=False) + "\n")
    if dump:
        dump.close()
    seconds = time.perf_counter() - started

    fixtures = sum(1 for c in batch if not c.mutations)
    print(
        f"differential: {len(batch):,} streams ({fixtures} fixtures, {len(batch) - fixtures:,} "
        f"mutants, seed {args.seed:#x}) in {seconds:.1f} s "
        f"(reference client {reference_seconds:.1f} s)"
    )
    print(f"  agreements:    {agreements:,}")
    print(f"  disagreements: {len(batch) - agreements:,}")
    by_name = {c.name: c for c in CATEGORIES}
    if counts[UNCATEGORISED]:
        print(f"    {counts[UNCATEGORISED]:6,}  {UNCATEGORISED}")
    for category in CATEGORIES:
        name = category.name
        extra = f" (+{also[name]:,} beside another row)" if also[name] else ""
        print(f"    {counts[name]:6,}  {name}{extra}  [{category.favours}]")

    bugs = [n for n in examples if n in by_name and by_name[n].favours == FAVOURS_REFERENCE]
    known = [n for n in bugs if by_name[n].expected_fix and not args.strict]
    failing = [n for n in examples if n == UNCATEGORISED] + [n for n in bugs if n not in known]
    for name in known:
        print(f"  KNOWN BUG in our consumer, routed to {by_name[name].expected_fix}: {name}")
    for category in CATEGORIES:
        if category.expected_fix and category.name not in examples:
            print(
                f"  {category.name} is empty: if {category.expected_fix} landed, drop its expected_fix"
            )
    for name in [*failing, *(n for n in examples if n not in failing)]:
        for item in examples[name][: max(args.show, 1) if name in failing else args.show]:
            print(f"\n--- {name}: {item.describe()}")
    if failing:
        print(f"\ndifferential: FAILED: {', '.join(sorted(failing))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
