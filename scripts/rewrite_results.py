#!/usr/bin/env python
"""Write a published directory's results.json / .md / .csv / .png again from its published files alone.

No training, decoding or MWE scoring: every score and p-value of results.json is kept; BLEU's brevity penalty,
n-gram precisions and lengths are recomputed with sacrebleu from hyps/ and refs/ (each recomputed BLEU must
equal the published one), degenerate outputs are counted, and results.md is written with the current report
(BLEU's parts and the brevity-penalty notes, degenerate outputs, the tests the baseline cannot translate, the
seed section judged against the baseline's seed spread). publish.json's hashes of the rewritten files are
updated; rescore.sh is unchanged. See `mwemt.experiments.republish`.

    python scripts/rewrite_results.py results/cpu-science-3-60000 \\
        --source tatoeba=runs/cpu-science-3-60000/stages/testdata/tatoeba/aada878bdda5db5e/source.txt

A test's source text is read from --source TEST=FILE (then published as refs/TEST.src.txt.gz), else from
refs/TEST.src.txt.gz, else from the MWE test set refs/TEST.jsonl.gz; without any, only loops are counted.
"""

from __future__ import annotations

import argparse
import sys

from mwemt.errors import MwemtError


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("dirs", nargs="+", help="published directories (each with results.json)")
    p.add_argument("--source", action="append", default=[], metavar="TEST=FILE",
                   help="the source text of TEST (one line per reference line); repeatable")
    p.add_argument("--no-plot", action="store_true", help="do not draw results.png again")
    p.add_argument("--rescore", action="store_true",
                   help="score the MWE tests again first, with today's line-stable aligner and the MWE verdict "
                        "(mwemt.experiments.republish.rescore_published: no training, no decoding); publish.json "
                        "and rescore.sh get the new commands")
    args = p.parse_args(argv)
    sources = {}
    for item in args.source:
        test, sep, path = item.partition("=")
        if not sep or not test or not path:
            p.error(f"--source {item!r}: expected TEST=FILE")
        sources[test] = path
    from mwemt.experiments.republish import rescore_published, rewrite_published

    try:
        for d in args.dirs:
            if args.rescore:
                paths = rescore_published(d, sources=sources, plot=not args.no_plot,
                                          progress=lambda m: print(m, file=sys.stderr, flush=True))
            else:
                paths = rewrite_published(d, sources=sources, plot=not args.no_plot)
            print(f"{d}: wrote {', '.join(str(p) for p in paths.values())}")
    except MwemtError as exc:
        print(f"rewrite_results: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
