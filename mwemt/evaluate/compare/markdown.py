"""The report as Markdown (report.md): the same numbers as the HTML page, for a README, a pull
request or a terminal. Long parts are cut: the per-MWE table keeps the types whose hit rates differ
most from the baseline, the examples the first few per group (report.json has everything)."""

from __future__ import annotations

from collections.abc import Sequence

from mwemt.evaluate.base import format_score, undefined_note
from mwemt.evaluate.compare.html import fmt, p_mark, signed

MAX_TYPES = 40
MAX_EXAMPLES = 3
CHECK, CROSS = "\u2713", "\u2717"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def cell(c: str) -> str:
        return str(c).replace("|", "\\|").replace("\n", " ")

    return ["| " + " | ".join(cell(h) for h in header) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|",
            *["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]]


def bold_spans(text: str, spans: Sequence[Sequence]) -> str:
    out, pos = [], 0
    for start, end, _kind in sorted(spans, key=lambda s: (s[0], s[1])):
        if start < pos:
            continue
        out += [text[pos:start], f"**{text[start:end]}**"]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _rate(s: dict) -> str:
    return _with_interval(s["rate"], s["lo"], s["hi"])


def _with_interval(x: float | None, lo: float | None, hi: float | None) -> str:
    return fmt(x) if lo is None or hi is None else f"{fmt(x)} [{lo:.1f}, {hi:.1f}]"


def _delta(d: float | None, p: float | None) -> str:
    return "\u2014" if d is None else f"{signed(d)}{p_mark(p)}"


def render_markdown(r: dict) -> str:
    names = r["systems"]
    lines = [f"# MWE comparison: {', '.join(names)}", "",
             f"{r['n_sentences']} sentences; baseline **{r['baseline']}**. Differences are system minus baseline, "
             "paired bootstrap over sentences, * p < 0.05.", "", f"Report signature: `{r['signature']}`", "",
             f"Hit: {r['hit_definition']}.", "", "## Aggregate scores", ""]
    rows = []
    for name in names:
        cells = [name]
        for m in r["aggregate"]:
            s = m["systems"][name]
            text = format_score(s["score"])
            if s["score"] is None:
                cells.append(text)   # undefined: no interval, no difference
                continue
            if s.get("bs_ci95") is not None:
                text += f" \u00b1{s['bs_ci95']:.1f}"
            if s.get("delta") is not None:
                text += f" ({_delta(s['delta'], s.get('p_value'))})"
            cells.append(text)
        rows.append(cells)
    lines += _table(["System", *[m["name"] for m in r["aggregate"]]], rows)
    undefined = [undefined_note(m["name"], m["undefined"]) for m in r["aggregate"] if m.get("undefined")]
    lines += [""] + undefined if undefined else []
    lines += [""] + [f"- {m['name']}: `{m['signature']}`" for m in r["aggregate"]] + [""]
    lines += _bleu_parts(r, names) + _degenerate(r, names)
    mwe = r["mwe"]
    lines += ["## MWE accuracy by bucket", ""]
    if "buckets" not in mwe:
        lines += [f"Not available: {mwe['skipped']}.", ""]
    else:
        lines += [f"{mwe['n_mwes']} MWE occurrences of {mwe['n_types']} types in {mwe['n_sentences_with_mwes']} "
                  "sentences. Cells: hit rate % [95% interval]; \u0394: difference from the baseline.", ""]
        for dim in mwe["buckets"]:
            lines += [f"### {dim['title']}", "", dim["description"], ""]
            rows = [[b["label"], f"{b['mwes']} ({b['types']})", *[_rate(b["systems"][n]) for n in names],
                     *[_delta(b["systems"][n]["delta"], b["systems"][n]["p_value"]) for n in names[1:]]]
                    for b in dim["buckets"]]
            lines += _table(["Bucket", "MWEs (types)", *names, *[f"\u0394 {n}" for n in names[1:]]], rows) + [""]
        for s in mwe["skipped"]:
            lines += [f"### {s['title']}", "", f"Not computed: {s['reason']}.", ""]
        lines += _types(mwe, names) + _examples(mwe, names)
    lines += _words(r, names)
    lines += ["## Inputs", ""] + [f"- {k}: `{v}`" for k, v in r["inputs"].items()] + [""]
    return "\n".join(lines)


def _types(mwe: dict, names: list[str]) -> list[str]:
    def spread(t: dict) -> float:
        return max((abs(t["systems"][n]["delta"]) for n in names[1:]), default=0.0)

    types = sorted(mwe["types"], key=lambda t: (-spread(t), -t["occurrences"], t["key"]))[:MAX_TYPES]
    rows = [[t["name"], t["category"], str(t["occurrences"]), fmt(t["train_count"], 0),
             *[f"{t['systems'][n]['rate']:.0f}" for n in names],
             *[signed(t["systems"][n]["delta"], 0) for n in names[1:]]] for t in types]
    return (["## Per-MWE table", "",
             f"The {len(types)} of {len(mwe['types'])} MWE types whose hit rates differ most from the baseline "
             "(all of them: index.html, report.json).", ""]
            + _table(["MWE", "Category", "Occurrences", "Train freq.", *[f"{n} %" for n in names],
                      *[f"\u0394 {n}" for n in names[1:]]], rows) + [""])


def _examples(mwe: dict, names: list[str]) -> list[str]:
    lines = ["## Examples", "", "MWE in **bold**: in the source, its translation in the reference, and the "
             "closest words in each hypothesis (\u2713 hit, \u2717 miss).", ""]
    for g in mwe["examples"]:
        who = f"{g['system']} vs {g['baseline']}"
        lines += [f"### {who}: {'wins' if g['direction'] == 'win' else 'losses'} "
                  f"({min(len(g['items']), MAX_EXAMPLES)} of {g['available']})", ""]
        for ex in g["items"][:MAX_EXAMPLES]:
            lines += [f"Sentence {ex['sentence']} ({ex['id']}), MWE *{ex['mwe']}* \u2192 *{ex['mwe_reference']}*", "",
                      f"- source: {bold_spans(ex['source']['text'], ex['source']['spans'])}",
                      f"- reference: {bold_spans(ex['reference']['text'], ex['reference']['spans'])}"]
            lines += [f"- {h['system']} {CHECK if h['hit'] else CROSS}: {bold_spans(h['text'], h['spans'])}"
                      for h in ex["hypotheses"]]
            lines.append("")
    return lines


def _words(r: dict, names: list[str]) -> list[str]:
    wa = r["word_accuracy"]
    base = wa["systems"][names[0]]["f"]
    rows = []
    for b, label in enumerate(wa["labels"]):
        cells = [label, str(wa["ref_words"][b])]
        for n in names:
            s = wa["systems"][n]
            cells.append(_with_interval(s["f"][b], s["lo"][b], s["hi"][b]))
        for n in names[1:]:
            s = wa["systems"][n]
            d = None if s["f"][b] is None or base[b] is None else s["f"][b] - base[b]
            cells.append(_delta(d, s["p_value"][b] if s["p_value"] else None))
        rows.append(cells)
    return (["## Word accuracy by frequency bucket", "",
             f"Word F-measure (compare-mt), {wa['tokenize']} tokens, bucketed by frequency in {wa['frequency_source']}.",
             ""]
            + _table(["Frequency", "Reference words", *names, *[f"\u0394 {n}" for n in names[1:]]], rows) + [""])


def _pct(x: float | None) -> str:
    return "\u2014" if x is None else f"{100 * x:.0f}%"


def _bleu_parts(r: dict, names: list[str]) -> list[str]:
    parts = r.get("bleu_parts")
    if not parts:
        return []
    rows = []
    for n in names:
        p = parts[n]
        v = p.get("vs_baseline")
        precs = [f"{x:.1f}" for x in p["precisions"]]
        note = ""
        if v and v["mostly_brevity"]:
            note = "mostly brevity penalty" + ("; every precision falls" if v["precisions_fall"] else "")
        rows.append([n, f"{p['score']:.1f}", f"{p['bp']:.3f}", fmt(p["ratio"], 3), "/".join(precs),
                     "\u2014" if not v else f"{v['bp_part']:+.3f}", "\u2014" if not v else f"{v['precision_part']:+.3f}",
                     "\u2014" if not v else _pct(v["bp_share"]), note])
    return (["## BLEU: brevity penalty and n-gram precisions", "",
             "BLEU = BP x the geometric mean of the precisions p1-p4; a system's log BLEU minus the baseline's splits "
             "into the BP part and the precision part. Mostly brevity penalty: the BP part is more than half of the "
             "difference.", ""]
            + _table(["System", "BLEU", "BP", "length", "p1/p2/p3/p4", "BP part", "precision part", "BP share", "note"],
                     rows) + [""])


def _degenerate(r: dict, names: list[str]) -> list[str]:
    d = r.get("degenerate")
    if not d:
        return []
    flags = ("loop", "long", "appended", "any")
    base = d["systems"][names[0]]
    rows = []
    for n in names:
        row = d["systems"][n]
        cells = ["n/a" if row[f] is None else f"{row[f]} ({100 * row[f] / max(row['lines'], 1):.1f}%)" for f in flags]
        delta = "\u2014" if n == names[0] or row["any"] is None else f"{row['any'] - base['any']:+d}"
        rows.append([n, *cells, delta])
    lines = ["## Degenerate outputs", "", f"Lines flagged per system. {d['note']} Expected target/source ratio "
             f"{d['expected_ratio']:.3f}; signature `{d['signature']}`.", ""]
    lines += _table(["System", *flags, "\u0394 any"], rows) + [""]
    examples = [(n, ex) for n in names for ex in d["systems"][n].get("examples", []) if n != names[0]]
    if examples:
        lines += ["Examples (lines the baseline does not have the flag on):", ""]
        for n, ex in examples:
            src = f" source: {ex['source']} \u2192" if ex.get("source") else ""
            lines.append(f"- {n}, sentence {ex['sentence']}, {ex['flag']}:{src} {ex['hypothesis']} "
                         f"(baseline: {ex['baseline']})")
        lines.append("")
    return lines
