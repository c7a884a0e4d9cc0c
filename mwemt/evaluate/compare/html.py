"""The report as one self-contained HTML page.

Users open the page offline and attach it to papers, so it loads nothing: the CSS is inline, the
charts are inline SVG (`mwemt.evaluate.compare.svg`), and the only script is a few lines that sort
tables when a header is clicked (the page reads fine without it). A first script records any
JavaScript error in the page itself (``#js-errors``), where a browser test can see it; the
sorting script marks ``<html data-js="ready">`` when it has run.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from mwemt.evaluate.base import UNDEFINED, undefined_note
from mwemt.evaluate.compare import svg

SECTIONS = (("summary", "Summary"), ("aggregate", "Aggregate scores"), ("bleu-parts", "BLEU's parts"),
            ("degenerate", "Degenerate outputs"), ("mwe-buckets", "MWE accuracy by bucket"),
            ("per-mwe", "Per-MWE table"), ("examples", "Examples"), ("word-accuracy", "Word accuracy"),
            ("about", "Signature and inputs"))

CSS = """
:root{--fg:#1b1f23;--muted:#586069;--line:#e1e4e8;--bg2:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);margin:0;
 padding:24px 32px 64px;max-width:1240px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:36px 0 8px;padding-top:8px;border-top:1px solid var(--line)}
h3{font-size:15px;margin:22px 0 6px}p.note,.note{color:var(--muted);font-size:13px}
nav{margin:10px 0 4px;font-size:13px}nav a{margin-right:14px;color:#0366d6;text-decoration:none}
code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg2);padding:1px 4px;
 border-radius:3px;word-break:break-all}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}thead th{background:var(--bg2);position:sticky;top:0}
tbody tr:nth-child(even){background:#fbfcfd}td.est{white-space:nowrap}
table.sortable thead th{cursor:pointer;user-select:none}
table.sortable thead th[aria-sort=ascending]::after{content:" \\25B2";font-size:9px}
table.sortable thead th[aria-sort=descending]::after{content:" \\25BC";font-size:9px}
.scroll{max-height:620px;overflow:auto;border:1px solid var(--line)}
.scroll table{margin:0}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.sig{color:#22863a;font-weight:600}.worse{color:#cb2431}.better{color:#22863a}.ci{color:var(--muted);font-size:12px}
mark{background:#ffe066;padding:0 1px;border-radius:2px}mark.partial{background:#ffd8a8}
.example{border:1px solid var(--line);border-radius:6px;margin:8px 0 12px;padding:6px 10px}
.example .head{font-size:13px;color:var(--muted);margin-bottom:4px}
.example table{width:100%;margin:0}.example th{width:150px;font-weight:600;white-space:nowrap}
.example td{text-align:left}.example td.res{width:70px;white-space:nowrap}
.hit{color:#22863a;font-weight:700}.miss{color:#cb2431;font-weight:700}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid var(--line);border-radius:6px;padding:6px 12px}
.card b{font-size:18px;display:block}
#js-errors{color:#cb2431;white-space:pre-wrap}
@media print{.scroll{max-height:none;overflow:visible}nav{display:none}}
"""

ERROR_SCRIPT = """window.addEventListener("error",function(e){var p=document.getElementById("js-errors");
if(p){p.hidden=false;p.textContent+="JavaScript error: "+e.message+"\\n";}});"""

SORT_SCRIPT = """(function(){
function key(td){var v=td.getAttribute("data-sort");if(v===null)v=td.textContent;if(v==="")return null;
var n=Number(v);return isNaN(n)?v.toLowerCase():n;}
function cmp(x,y){if(x===null||y===null)return 0;if(typeof x!==typeof y){x=String(x);y=String(y);}
return x<y?-1:x>y?1:0;}
Array.prototype.forEach.call(document.querySelectorAll("table.sortable"),function(table){
var heads=table.tHead.rows[0].cells;
Array.prototype.forEach.call(heads,function(th,col){
th.tabIndex=0;th.setAttribute("aria-sort","none");
function sort(){var body=table.tBodies[0];var asc=th.getAttribute("aria-sort")!=="ascending";
var rows=Array.prototype.map.call(body.rows,function(r,i){return {r:r,k:key(r.cells[col]),i:i};});
rows.sort(function(a,b){if(a.k===null||b.k===null){return (a.k===null)-(b.k===null)||a.i-b.i;}
return cmp(a.k,b.k)*(asc?1:-1)||a.i-b.i;});
Array.prototype.forEach.call(heads,function(h){h.setAttribute("aria-sort","none");});
th.setAttribute("aria-sort",asc?"ascending":"descending");
rows.forEach(function(x){body.appendChild(x.r);});}
th.addEventListener("click",sort);
th.addEventListener("keydown",function(e){if(e.key==="Enter"){sort();}});});});
document.documentElement.setAttribute("data-js","ready");})();"""


def fmt(x: float | None, digits: int = 1) -> str:
    return "\u2014" if x is None else f"{x:.{digits}f}"


def signed(x: float | None, digits: int = 1) -> str:
    return "\u2014" if x is None else f"{x:+.{digits}f}".replace("-", "\u2212")


def p_mark(p: float | None) -> str:
    return "*" if p is not None and p < 0.05 else ""


def interval(lo: float | None, hi: float | None) -> str:
    return "" if lo is None or hi is None else f' <span class="ci">[{lo:.1f}, {hi:.1f}]</span>'


def _estimate_cell(value: float | None, lo: float | None, hi: float | None, delta: float | None,
                   p: float | None, title: str = "") -> str:
    """A value with its interval and, for a system other than the baseline, its difference from the
    baseline (colored and starred when p < 0.05; the p-value in the tooltip)."""
    parts = [fmt(value), interval(lo, hi)]
    tips = [title] if title else []
    if delta is not None:
        cls = ("better" if delta > 0 else "worse") if p is not None and p < 0.05 else "ci"
        parts.append(f' <span class="{cls}">{signed(delta)}{p_mark(p)}</span>')
        if p is not None:
            tips.append(f"difference from the baseline {signed(delta)}, p = {p:.4f}")
    tip = f' title="{escape("; ".join(tips))}"' if tips else ""
    return f'<td class="est" data-sort="{"" if value is None else value}"{tip}>{"".join(parts)}</td>'


def _swatch(k: int) -> str:
    return f'<span class="sw" style="background:{svg.color(k)}"></span>'


def highlighted(text: str, spans: Sequence[Sequence]) -> str:
    """``text`` escaped, with each (start, end, kind) span in a <mark>."""
    out, pos = [], 0
    for start, end, kind in sorted(spans, key=lambda s: (s[0], s[1])):
        if start < pos:
            continue
        out.append(escape(text[pos:start]))
        cls = ' class="partial"' if kind == "partial" else ""
        out.append(f"<mark{cls}>{escape(text[start:end])}</mark>")
        pos = end
    out.append(escape(text[pos:]))
    return "".join(out)


# ---------------------------------------------------------------- sections


def _summary(r: dict) -> str:
    cards = [("systems", len(r["systems"])), ("sentences", r["n_sentences"])]
    mwe = r["mwe"]
    if "n_mwes" in mwe:
        cards += [("MWE occurrences", mwe["n_mwes"]), ("MWE types", mwe["n_types"])]
        overall = mwe["buckets"][0]["buckets"][0]["systems"]
        for k, name in enumerate(r["systems"]):
            s = overall[name]
            cards.append((f"{_swatch(k)}{escape(name)} MWE hits", f"{fmt(s['rate'])}%"))
    html = ['<div class="cards">']
    html += [f'<div class="card"><b>{v}</b>{label}</div>' for label, v in cards]
    html.append("</div>")
    html.append(f'<p class="note">Baseline (first system): <b>{escape(r["baseline"])}</b>. Every difference is '
                "the system minus the baseline, tested with a paired bootstrap over sentences; * marks p &lt; 0.05. "
                f"Hit: {escape(r['hit_definition'])}.</p>")
    return "".join(html)


def _aggregate(r: dict) -> str:
    metrics = r["aggregate"]
    head = "".join(f"<th>{escape(m['name'])}</th>" for m in metrics)
    rows = []
    for k, name in enumerate(r["systems"]):
        cells = []
        for m in metrics:
            s = m["systems"][name]
            if s["score"] is None:   # undefined (the metric says why): no interval, no difference
                cells.append(f'<td data-sort="-1" title="{escape(m.get("undefined", "undefined"))}">{UNDEFINED}</td>')
                continue
            ci = f' <span class="ci">\u00b1{s["bs_ci95"]:.1f}</span>' if s.get("bs_ci95") is not None else ""
            delta = ""
            if s.get("delta") is not None:
                p = s.get("p_value")
                cls = ("better" if s["delta"] > 0 else "worse") if p is not None and p < 0.05 else ""
                delta = f' <span class="{cls}">({signed(s["delta"])}{p_mark(p)})</span>'
            cells.append(f'<td data-sort="{s["score"]:.6f}">{s["score"]:.1f}{ci}{delta}</td>')
        rows.append(f"<tr><td>{_swatch(k)}{escape(name)}</td>{''.join(cells)}</tr>")
    table = (f'<table class="sortable" id="aggregate-table"><thead><tr><th>System</th>{head}</tr></thead>'
             f"<tbody>{''.join(rows)}</tbody></table>")
    series = []
    for k, name in enumerate(r["systems"]):
        rows = [m["systems"][name] for m in metrics]
        half = [s.get("bs_ci95") for s in rows]
        series.append(svg.Series(name, [s["score"] for s in rows],
                                 [None if h is None or s["score"] is None else s["score"] - h for s, h in zip(rows, half)],
                                 [None if h is None or s["score"] is None else s["score"] + h for s, h in zip(rows, half)],
                                 svg.color(k)))
    chart = svg.grouped_bars([m["name"] for m in metrics], series, y_label="score (0-100)", title="Aggregate scores",
                             width=min(760, 260 + 130 * len(metrics)), height=220)
    note = ('<p class="note">Scores on a 0-100 scale: score \u00b1 95% bootstrap half-width, (difference from the '
            "baseline, * p &lt; 0.05)." + "".join(" " + escape(undefined_note(m["name"], m["undefined"]))
                                               for m in metrics if m.get("undefined")) + "</p>")
    return table + note + chart


def _pct(x: float | None) -> str:
    return "\u2014" if x is None else f"{100 * x:.0f}%"


def _bleu_parts(r: dict) -> str:
    parts = r.get("bleu_parts")
    if not parts:
        return '<p class="note">Not available: no BLEU score.</p>'
    rows = []
    for k, name in enumerate(r["systems"]):
        p = parts[name]
        v = p.get("vs_baseline")
        note = ""
        if v and v["mostly_brevity"]:
            note = "mostly brevity penalty" + ("; every precision falls" if v["precisions_fall"] else "")
        split = ["\u2014"] * 3 if not v else [f"{v['bp_part']:+.3f}", f"{v['precision_part']:+.3f}", _pct(v["bp_share"])]
        cells = [f"{p['score']:.1f}", f"{p['bp']:.3f}", fmt(p["ratio"], 3),
                 *[f"{x:.1f}" for x in p["precisions"]], *split, escape(note)]
        rows.append(f"<tr><td>{_swatch(k)}{escape(name)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    orders = "".join(f"<th>p{n}</th>" for n in range(1, len(parts[r["systems"][0]]["precisions"]) + 1))
    return ('<p class="note">BLEU = BP \u00d7 the geometric mean of the n-gram precisions; a system\'s log BLEU minus '
            "the baseline's splits exactly into the brevity penalty's part and the precisions' part. <b>Mostly brevity "
            "penalty</b>: the BP part is more than half of the difference (more than all of it when the precisions "
            "move the other way). length: hypothesis / reference length.</p>"
            f'<table class="sortable" id="bleu-parts-table"><thead><tr><th>System</th><th>BLEU</th><th>BP</th>'
            f"<th>length</th>{orders}<th>BP part</th><th>precision part</th><th>BP share</th><th>note</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def _degenerate(r: dict) -> str:
    d = r.get("degenerate")
    if not d:
        return '<p class="note">Not available (a report written before degenerate outputs were counted).</p>'
    names = r["systems"]
    flags = ("loop", "long", "appended", "any")
    base = d["systems"][names[0]]
    rows = []
    for k, name in enumerate(names):
        row = d["systems"][name]
        cells = []
        for f in flags:
            if row[f] is None:
                cells.append(f"<td>{UNDEFINED}</td>")
            else:
                cells.append(f'<td data-sort="{row[f]}">{row[f]} <span class="ci">'
                             f"({100 * row[f] / max(row['lines'], 1):.1f}%)</span></td>")
        delta = "\u2014" if not k or row["any"] is None else signed(row["any"] - base["any"], 0)
        rows.append(f"<tr><td>{_swatch(k)}{escape(name)}</td>{''.join(cells)}<td>{delta}</td></tr>")
    out = [f'<p class="note">Lines flagged per system (share of all lines). {escape(d["note"])} Expected '
           f"target/source ratio {d['expected_ratio']:.3f}; signature <code>{escape(d['signature'])}</code>.</p>",
           '<table class="sortable" id="degenerate-table"><thead><tr><th>System</th>'
           + "".join(f"<th>{f}</th>" for f in flags) + "<th>\u0394 any</th></tr></thead>"
           f"<tbody>{''.join(rows)}</tbody></table>"]
    for k, name in enumerate(names[1:], 1):
        examples = d["systems"][name].get("examples") or []
        if not examples:
            continue
        out.append(f"<h3>{_swatch(k)}{escape(name)}: flagged lines the baseline's line is not flagged on</h3>")
        for ex in examples:
            lines = ([f'<tr><th>source</th><td>{escape(ex["source"])}</td></tr>'] if ex.get("source") else []) + [
                f'<tr><th>{escape(name)}</th><td>{escape(ex["hypothesis"])}</td></tr>',
                f'<tr><th>{escape(names[0])}</th><td>{escape(ex["baseline"])}</td></tr>']
            out.append(f'<div class="example"><div class="head">sentence {ex["sentence"]} \u00b7 '
                       f'{escape(ex["flag"])}</div><table>{"".join(lines)}</table></div>')
    return "".join(out)


def _bucket_section(r: dict) -> str:
    mwe = r["mwe"]
    if "buckets" not in mwe:
        return f'<p class="note">Not available: {escape(mwe["skipped"])}.</p>'
    names = r["systems"]
    out = ['<p class="note">Share of MWE occurrences each system translates (hit rate, %), with the 95% '
           "bootstrap interval [lo, hi] and the difference from the baseline in points (* p &lt; 0.05; hover "
           "for the p-value). Counts are occurrences (and types).</p>"]
    for dim in mwe["buckets"]:
        if dim["key"] == "all":
            continue
        labels = [b["label"] for b in dim["buckets"]]
        series = [svg.Series(name, [b["systems"][name]["rate"] for b in dim["buckets"]],
                             [b["systems"][name]["lo"] for b in dim["buckets"]],
                             [b["systems"][name]["hi"] for b in dim["buckets"]], svg.color(k))
                  for k, name in enumerate(names)]
        out.append(f'<h3 id="bucket-{escape(dim["key"])}">{escape(dim["title"])}</h3>')
        extra = f" {dim['unassigned']} occurrences are in no bucket." if dim.get("unassigned") else ""
        out.append(f'<p class="note">{escape(dim["description"])}{escape(extra)}</p>')
        out.append(svg.grouped_bars(labels, series, y_label="MWE hits (%)", title=dim["title"], y_max=100))
        head = "".join(f"<th>{_swatch(k)}{escape(n)}</th>" for k, n in enumerate(names))
        rows = []
        for b in dim["buckets"]:
            cells = [_estimate_cell(b["systems"][n]["rate"], b["systems"][n]["lo"], b["systems"][n]["hi"],
                                    b["systems"][n]["delta"], b["systems"][n]["p_value"]) for n in names]
            rows.append(f'<tr><td>{escape(b["label"])}</td><td data-sort="{b["mwes"]}">{b["mwes"]} '
                        f'<span class="ci">({b["types"]})</span></td>{"".join(cells)}</tr>')
        out.append(f'<table class="sortable"><thead><tr><th>Bucket</th><th>MWEs (types)</th>{head}</tr></thead>'
                   f"<tbody>{''.join(rows)}</tbody></table>")
    for s in mwe["skipped"]:
        out.append(f'<h3>{escape(s["title"])}</h3><p class="note">Not computed: {escape(s["reason"])}.</p>')
    return "".join(out)


def _yes_no(x: bool | None) -> tuple[str, str]:
    return ("", "\u2014") if x is None else ("1", "yes") if x else ("0", "no")


def _per_mwe(r: dict) -> str:
    mwe = r["mwe"]
    if "types" not in mwe:
        return f'<p class="note">Not available: {escape(mwe["skipped"])}.</p>'
    names = r["systems"]
    head = ("<th>MWE</th><th>Category</th><th>Occurrences</th><th>Gapped</th><th>Train freq.</th>"
            "<th>Compos.</th><th>In dict.</th>"
            + "".join(f"<th>{_swatch(k)}{escape(n)} %</th>" for k, n in enumerate(names))
            + "".join(f"<th>\u0394 {escape(n)}</th>" for n in names[1:]))
    rows = []
    for t in sorted(mwe["types"], key=lambda t: (-t["occurrences"], t["key"])):
        dict_sort, dict_text = _yes_no(t["in_dictionary"])
        comp = t["compositionality"]
        cells = [f'<td title="lemma: {escape(t["key"])}">{escape(t["name"])}</td>', f"<td>{escape(t['category'])}</td>",
                 f"<td>{t['occurrences']}</td>", f"<td>{t['gapped']}</td>",
                 f'<td data-sort="{"" if t["train_count"] is None else t["train_count"]}">'
                 f'{fmt(t["train_count"], 0)}</td>',
                 f'<td data-sort="{"" if comp is None else comp}">{fmt(comp, 2)}</td>',
                 f'<td data-sort="{dict_sort}">{dict_text}</td>']
        for n in names:
            s = t["systems"][n]
            cells.append(f'<td data-sort="{s["rate"]:.4f}" title="{s["hits"]} of {t["occurrences"]}; mean MWE score '
                         f'{s["mean_score"]:.1f}">{s["rate"]:.0f}</td>')
        for n in names[1:]:
            d = t["systems"][n]["delta"]
            cls = "better" if d > 0 else "worse" if d < 0 else ""
            cells.append(f'<td data-sort="{d:.4f}"><span class="{cls}">{signed(d, 0)}</span></td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return ('<p class="note">One row per MWE type (same lemma): hit rate of each system over its occurrences and '
            "the difference from the baseline in points. Click a header to sort; hover a rate for the counts "
            "and the mean MWE score.</p>"
            f'<div class="scroll"><table class="sortable" id="per-mwe-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _examples(r: dict) -> str:
    mwe = r["mwe"]
    if "examples" not in mwe:
        return f'<p class="note">Not available: {escape(mwe["skipped"])}.</p>'
    out = ['<p class="note">Occurrences where a system and the baseline differ: <b>wins</b> (the system translates '
           "the MWE, the baseline does not) and <b>losses</b> (the reverse), the largest MWE-score differences first, "
           "one per MWE type first. Marked: the MWE in the source, its translation in the reference and, in each "
           'hypothesis, the words closest to it (<mark>same word</mark>, <mark class="partial">close word</mark>).</p>']
    names = r["systems"]
    for group in mwe["examples"]:
        k = names.index(group["system"])
        what = ("wins: " + group["system"] + " translates the MWE, " + group["baseline"] + " does not"
                if group["direction"] == "win" else
                "losses: " + group["baseline"] + " translates the MWE, " + group["system"] + " does not")
        out.append(f'<h3 id="examples-{escape(group["system"])}-{group["direction"]}">{_swatch(k)}'
                   f'{escape(group["system"])} vs {escape(group["baseline"])}, {escape(what)}</h3>')
        out.append(f'<p class="note">{len(group["items"])} shown of {group["available"]}.</p>')
        for ex in group["items"]:
            rows = [f'<tr><th>source</th><td class="res"></td><td>{highlighted(ex["source"]["text"], ex["source"]["spans"])}</td></tr>',
                    f'<tr><th>reference</th><td class="res"></td><td>{highlighted(ex["reference"]["text"], ex["reference"]["spans"])}</td></tr>']
            for h in ex["hypotheses"]:
                j = names.index(h["system"])
                res = f'<span class="hit">\u2713</span> {fmt(h["score"], 0)}' if h["hit"] else \
                    f'<span class="miss">\u2717</span> {fmt(h["score"], 0)}'
                rows.append(f'<tr><th>{_swatch(j)}{escape(h["system"])}</th><td class="res">{res}</td>'
                            f'<td>{highlighted(h["text"], h["spans"])}</td></tr>')
            out.append(f'<div class="example"><div class="head">sentence {ex["sentence"]} ({escape(ex["id"])}) \u00b7 '
                       f'MWE <b>{escape(ex["mwe"])}</b> \u2192 <i>{escape(ex["mwe_reference"])}</i></div>'
                       f"<table>{''.join(rows)}</table></div>")
    return "".join(out)


def _word_accuracy(r: dict) -> str:
    wa = r["word_accuracy"]
    names = r["systems"]
    series = [svg.Series(n, wa["systems"][n]["f"], wa["systems"][n]["lo"], wa["systems"][n]["hi"], svg.color(k))
              for k, n in enumerate(names)]
    chart = svg.lines(wa["labels"], series, y_label="word F-measure", x_label="frequency of the word",
                      title="Word F-measure by frequency bucket", y_max=100)
    head = "".join(f"<th>{_swatch(k)}{escape(n)}</th>" for k, n in enumerate(names))
    rows = []
    base = wa["systems"][names[0]]["f"]
    for b, label in enumerate(wa["labels"]):
        cells = []
        for k, n in enumerate(names):
            s = wa["systems"][n]
            d = None if not k or s["f"][b] is None or base[b] is None else s["f"][b] - base[b]
            title = f'precision {fmt(s["precision"][b])}, recall {fmt(s["recall"][b])}, {s["hyp_words"][b]} words'
            cells.append(_estimate_cell(s["f"][b], s["lo"][b], s["hi"][b], d,
                                        s["p_value"][b] if s["p_value"] else None, title))
        rows.append(f'<tr><td>{escape(label)}</td><td>{wa["ref_words"][b]}</td>{"".join(cells)}</tr>')
    return (f'<p class="note">As compare-mt reports it: words ({escape(wa["tokenize"])} tokens, case-sensitive) '
            f"bucketed by their frequency in {escape(wa['frequency_source'])}; per bucket, the F-measure of the "
            "words a system gets right (a word matches as often as it occurs in both the reference and the "
            "hypothesis of a sentence), with the 95% bootstrap interval. Hover for precision and recall.</p>"
            + chart + f'<table class="sortable"><thead><tr><th>Frequency</th><th>Reference words</th>{head}</tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def _about(r: dict) -> str:
    sigs = "".join(f"<tr><td>{escape(m['name'])}</td><td><code>{escape(m['signature'])}</code></td></tr>"
                   for m in r["aggregate"])
    inputs = "".join(f"<tr><td>{escape(k)}</td><td><code>{escape(v)}</code></td></tr>" for k, v in r["inputs"].items())
    attr = r["mwe"].get("attribute_sources", {})
    attrs = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in attr.items())
    return (f'<p>Report signature: <code id="signature">{escape(r["signature"])}</code></p>'
            f"<p>Hit: {escape(r['hit_definition'])}.</p>"
            f"<table><thead><tr><th>Metric</th><th>Signature</th></tr></thead><tbody>{sigs}</tbody></table>"
            + (f"<table><thead><tr><th>MWE attribute</th><th>From</th></tr></thead><tbody>{attrs}</tbody></table>"
               if attrs else "")
            + f"<table><thead><tr><th>Input</th><th>File</th></tr></thead><tbody>{inputs}</tbody></table>"
            '<p class="note">Written by <code>mwemt compare</code>; report.json holds every number of this page.</p>')


def render_html(report: dict) -> str:
    names = ", ".join(report["systems"])
    body = {"summary": _summary, "aggregate": _aggregate, "bleu-parts": _bleu_parts, "degenerate": _degenerate,
            "mwe-buckets": _bucket_section, "per-mwe": _per_mwe,
            "examples": _examples, "word-accuracy": _word_accuracy, "about": _about}
    nav = "".join(f'<a href="#{key}">{escape(title)}</a>' for key, title in SECTIONS)
    sections = "".join(f'<section id="{key}"><h2>{escape(title)}</h2>{body[key](report)}</section>'
                       for key, title in SECTIONS)
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>mwemt compare: {escape(names)}</title><style>{CSS}</style><script>{ERROR_SCRIPT}</script></head>"
            f"<body><h1>MWE comparison</h1><div class=\"note\">{escape(names)} \u00b7 "
            f"{report['n_sentences']} sentences \u00b7 <code>{escape(report['signature'])}</code></div>"
            f'<nav>{nav}</nav><p id="js-errors" hidden></p>{sections}<script>{SORT_SCRIPT}</script></body></html>\n')
