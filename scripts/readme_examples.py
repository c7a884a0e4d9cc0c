#!/usr/bin/env python3
"""Run the console examples of the README and of the other pages and check or rewrite their output, so that no
page can drift.

The pages are found, not listed: every Markdown file of the checkout (tracked, and untracked ones git does not
ignore) with a marked console block. A console block is an example when the line before its fence is a marker:

    <!-- example: NAME [slow] [shared] [unseeded] [needs=OTHER,...] [copy=DIR] -->
    ```console
    $ command            (a line continued with a trailing backslash goes on to the next line)
    output
    ```

A line ``$ # what comes next`` is a comment: it runs nothing and shows no output. The ``$`` commands of a block
run in order, in one bash process, in a scratch directory that stands
beside a scratch ``shared`` link, so that the README's paths read the same: ``S=../shared/data`` is
set, ``../shared`` is the real shared data (when it exists) and the repository's files (``tests``,
``results``, ``configs``, ``scripts``, ...; tracked, and untracked ones git does not ignore) are a copy
of this checkout's: an example that writes (``--out results/...``) writes into the copy, so neither
``--check`` nor ``--write`` ever changes a file of the repository (``--write`` changes the page only). Every example
of one run shares the scratch directory, in README order, so a block may use the files an earlier
block wrote; ``needs=`` names those blocks (``--only NAME`` runs them first, unchecked). ``copy=DIR``
copies the files of DIR (relative to the repository) into the scratch directory first. ``shared``:
the block reads ../shared/data (skipped with a note when it is absent). ``slow``: the block takes
minutes (training, whole data sets); ``--skip-slow`` leaves it as it is. ``unseeded``: the block's
numbers depend on eflomal's word alignment, which cannot be seeded, so a run with an empty alignment
cache may differ from the README by chance (a drift there is reported with that hint).

A console block that cannot be re-run as a check (a benchmark's timings, a training run of many minutes, a Slurm
cluster, a GPU) is a transcript instead, marked with the reason, which must not be empty:

    <!-- transcript: a measurement: bench/train_speed.py timings, machine-dependent -->
    ```console

A transcript is never run; ``--list`` lists it with its reason. A console block that shows output (a line that is
not a ``$`` command, a continuation or blank) needs one of the two markers: ``--check`` over all pages fails on one
that has neither (``unmarked_blocks``), and on ``$`` commands in a fence that is not ``console``
(``plain_console_blocks``); ``tests/test_console_pages.py`` checks the same.

Example names are unique across the pages (``--only NAME`` finds the page); each page runs in a scratch directory
of its own, so a ``needs=`` names a block of the same page.

What is compared (``--check``) and written (``--write``) is each command's stdout and stderr together,
as a terminal shows them (a progress bar's last state). The alignment cache starts empty in the scratch
directory (``MWEMT_CACHE``), so examples that align print eflomal's log lines on every run
(``--user-cache`` uses yours instead). Two elision rules keep the README readable:
- a line ``...`` in a command's shown output stands for any number of lines: the lines shown before it
  are the first lines of the real output and the lines after it the last ones (``--write`` keeps the
  same numbers of lines on each side);
- durations and rates (``61.2s``, ``67.5 s``, a progress bar's ``[00:00<00:00, 8278.91line/s]``)
  are compared as "a duration": a rerun may be faster or slower. ``--write`` writes the measured ones.

An example in which a command crashes (``internal error:``, a Python traceback) is reported and never
written into the README.

Usage:
    python scripts/readme_examples.py --check [--only NAME ...] [--skip-slow]   # exit 1 on drift
    python scripts/readme_examples.py --write [--only NAME ...] [--skip-slow]   # update the pages
    python scripts/readme_examples.py --list                                     # pages, examples, transcripts
    python scripts/readme_examples.py --check --readme PAGE                      # one page (any file)
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = re.compile(r"^<!-- example: (?P<name>[\w.-]+)(?P<opts>(?: [^>]*?)?) -->\s*$")
TRANSCRIPT = re.compile(r"^<!-- transcript:(?P<reason>.*?)-->\s*$")
ANY_MARKER = re.compile(r"^<!-- (?:example|transcript):")
_FENCE = re.compile(r"^\s*```(?P<lang>[\w+-]*)\s*$")
FENCE_OPEN = "```console"
FENCE_CLOSE = "```"
ELLIPSIS = "..."
SEPARATOR = "@@readme-example-output@@"
# never written into a page: a bug, or a block bash cannot parse
CRASHES = ("internal error:", "Traceback (most recent call last)", "syntax error near unexpected token")
# a duration or a rate: 61.2s, 67.5 s, 1348.1s, 00:00<00:00, 8278.91line/s, 12.3it/s
_DURATION = re.compile(r"\d+(?:\.\d+)?\s?(?:s|ms|min)(?![A-Za-z])|\d+:\d\d(?::\d\d)?(?:<\d+:\d\d(?::\d\d)?)?"
                       r"|\d+(?:\.\d+)?\s?\w+/s")


@dataclass
class Command:
    text: str                  # the command as shown, continuation lines included
    shown: list[str]           # its output as the README shows it


@dataclass
class Example:
    name: str
    start: int                 # index of the line after the opening fence
    end: int                   # index of the closing fence
    slow: bool = False
    shared: bool = False
    unseeded: bool = False
    needs: list[str] = field(default_factory=list)
    copy: str | None = None
    commands: list[Command] = field(default_factory=list)


@dataclass
class Transcript:
    line: int                  # 1-based line of the marker
    reason: str


def parse(lines: list[str], page: str = "README.md") -> list[Example]:
    """The examples of a page (``page`` names it in error messages)."""
    examples: list[Example] = []
    for k, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            if line.startswith("<!-- example:"):
                raise SystemExit(f"{page}:{k + 1}: malformed example marker {line.strip()!r} "
                                 "(expected <!-- example: NAME [options] -->)")
            continue
        if k + 1 >= len(lines) or lines[k + 1].strip() != FENCE_OPEN:
            raise SystemExit(f"{page}:{k + 1}: example marker not followed by a {FENCE_OPEN} fence")
        ex = Example(m["name"], k + 2, -1)
        for opt in m["opts"].split():
            key, _, value = opt.partition("=")
            if opt == "slow":
                ex.slow = True
            elif opt == "shared":
                ex.shared = True
            elif opt == "unseeded":
                ex.unseeded = True
            elif key == "needs" and value:
                ex.needs = value.split(",")
            elif key == "copy" and value:
                ex.copy = value
            else:
                raise SystemExit(f"{page}:{k + 1}: unknown example option {opt!r}")
        end = next((j for j in range(ex.start, len(lines)) if lines[j].strip() == FENCE_CLOSE), None)
        if end is None:
            raise SystemExit(f"{page}:{k + 1}: example {ex.name} has no closing fence")
        ex.end = end
        body = lines[ex.start:end]
        j = 0
        while j < len(body):
            if not body[j].startswith("$ "):
                raise SystemExit(f"{page}:{ex.start + j + 1}: example {ex.name}: output before any '$ ' command")
            cmd = [body[j]]
            while cmd[-1].endswith("\\") and j + 1 < len(body):
                j += 1
                cmd.append(body[j])
            j += 1
            shown = []
            while j < len(body) and not body[j].startswith("$ "):
                shown.append(body[j])
                j += 1
            ex.commands.append(Command("\n".join(cmd), shown))
        examples.append(ex)
    names = [e.name for e in examples]
    if len(set(names)) != len(names):
        raise SystemExit(f"{page}: two examples share a name: {sorted({n for n in names if names.count(n) > 1})}")
    return examples


def parse_transcripts(lines: list[str], page: str = "README.md") -> list[Transcript]:
    """The transcript markers of a page; one without a reason, or not followed by a console fence, is refused."""
    found = []
    for k, line in enumerate(lines):
        m = TRANSCRIPT.match(line)
        if not m:
            if line.startswith("<!-- transcript"):
                raise SystemExit(f"{page}:{k + 1}: malformed transcript marker {line.strip()!r} "
                                 "(expected <!-- transcript: REASON -->)")
            continue
        if not m["reason"].strip():
            raise SystemExit(f"{page}:{k + 1}: a transcript marker needs a reason: why the block is not run, and "
                             "what it records (<!-- transcript: REASON -->)")
        if k + 1 >= len(lines) or lines[k + 1].strip() != FENCE_OPEN:
            raise SystemExit(f"{page}:{k + 1}: transcript marker not followed by a {FENCE_OPEN} fence")
        found.append(Transcript(k + 1, m["reason"].strip()))
    return found


def fenced_blocks(lines: list[str]) -> list[tuple[int, int, str]]:
    """Each fenced block of a page: (index of its opening fence, index of its closing fence, its language)."""
    blocks = []
    k = 0
    while k < len(lines):
        m = _FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        end = next((j for j in range(k + 1, len(lines)) if lines[j].strip() == FENCE_CLOSE), len(lines))
        blocks.append((k, end, m["lang"]))
        k = end + 1
    return blocks


def console_blocks(lines: list[str]) -> list[tuple[int, int, bool]]:
    """Each console block of a page: (index of its opening fence, index of its closing fence, whether it shows
    output). Output is any line that is not a ``$`` command, a line continuing one (a trailing backslash) or
    blank."""
    blocks = []
    for k, end, lang in fenced_blocks(lines):
        if lang != "console":
            continue
        output, continued = False, False
        for line in lines[k + 1:end]:
            if line.startswith("$ ") or continued:
                continued = line.rstrip().endswith("\\")
            elif line.strip():
                output = True
        blocks.append((k, end, output))
    return blocks


def unmarked_blocks(lines: list[str]) -> list[int]:
    """The 1-based line numbers of the console blocks that show output and have neither an example nor a
    transcript marker on the line before their fence."""
    return [k + 1 for k, _, output in console_blocks(lines) if output and not (k and ANY_MARKER.match(lines[k - 1]))]


def plain_console_blocks(lines: list[str]) -> list[int]:
    """The 1-based line numbers of the fenced blocks that hold a console session (a line is a ``$`` command) in a
    fence that does not say ``console``: neither checked nor marked as transcripts."""
    return [k + 1 for k, end, lang in fenced_blocks(lines)
            if lang != "console" and any(line.startswith("$ ") for line in lines[k + 1:end])]


def markdown_files(root: Path) -> list[str]:
    """The checkout's Markdown files (tracked, and untracked ones git does not ignore), relative to root."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "*.md"],
                            cwd=root, capture_output=True, text=True)
    if listed.returncode != 0:
        raise SystemExit(f"readme_examples: git ls-files failed in {root}: {listed.stderr.strip()}")
    return sorted({rel for rel in listed.stdout.split("\0") if rel and (root / rel).is_file()})


def discover_pages(root: Path) -> list[str]:
    """The pages with a marked console block (an example or a transcript), README.md first."""
    pages = []
    for rel in markdown_files(root):
        lines = (root / rel).read_text(encoding="utf-8").split("\n")
        if any(ANY_MARKER.match(lines[k - 1]) for k, _, _ in console_blocks(lines) if k):
            pages.append(rel)
    return sorted(pages, key=lambda rel: (rel != "README.md", rel))


def terminal_text(raw: str) -> list[str]:
    """Output as a terminal leaves it: each line's last carriage-return state, no trailing blank lines."""
    out = []
    for line in raw.split("\n"):
        if "\r" in line:
            states = [s for s in line.split("\r") if s.strip()]
            line = states[-1] if states else ""
        out.append(line.rstrip())
    while out and not out[-1]:
        out.pop()
    return out


def mask(line: str) -> str:
    return _DURATION.sub("<duration>", line.rstrip())   # trailing spaces are invisible in the README


def matches(shown: list[str], actual: list[str]) -> bool:
    if ELLIPSIS in shown:
        k = shown.index(ELLIPSIS)
        head, tail = shown[:k], shown[k + 1:]
        if ELLIPSIS in tail or len(actual) < len(head) + len(tail):
            return False
        actual = actual[:len(head)] + actual[len(actual) - len(tail):]
        shown = head + tail
    return len(shown) == len(actual) and all(mask(a) == mask(b) for a, b in zip(shown, actual))


def rewritten(shown: list[str], actual: list[str]) -> list[str]:
    """The real output, elided where the README elides it (same number of lines each side of ``...``)."""
    if ELLIPSIS in shown:
        k = shown.index(ELLIPSIS)
        head, tail = k, len(shown) - k - 1
        if len(actual) > head + tail:
            return actual[:head] + [ELLIPSIS] + (actual[len(actual) - tail:] if tail else [])
    return list(actual)


class Scratch:
    """A scratch directory laid out like a checkout beside ../shared: a copy of the checkout's files (tracked, and
    untracked but not ignored; README.md left out), never links into it, so that an example that writes (``--out
    results/...``) writes into the copy and never into the repository, with --check or --write."""

    def __init__(self, user_cache: bool = False) -> None:
        self.user_cache = user_cache
        self.top = Path(tempfile.mkdtemp(prefix="readme-examples."))
        self.cwd = self.top / "mwemt"
        self.cwd.mkdir()
        shared = ROOT.parent / "shared"
        if shared.is_dir():
            (self.top / "shared").symlink_to(shared.resolve())
        for rel in checkout_files():
            if rel == "README.md":
                continue
            dst = self.cwd / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dst, follow_symlinks=False)

    def has_shared(self) -> bool:
        return (self.top / "shared" / "data").is_dir()

    def remove(self) -> None:
        shutil.rmtree(self.top, ignore_errors=True)


def checkout_files() -> list[str]:
    """The checkout's files (tracked, and untracked ones git does not ignore) that exist, relative to ROOT."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True)
    if listed.returncode != 0:
        raise SystemExit(f"readme_examples: git ls-files failed in {ROOT}: {listed.stderr.strip()}")
    return sorted({rel for rel in listed.stdout.split("\0") if rel and (ROOT / rel).is_file()})


def snapshot(files: list[str]) -> dict[str, tuple[int, int]]:
    """(size, mtime in ns) of each file: what `repository_changes` compares after the examples ran."""
    out = {}
    for rel in files:
        try:
            st = os.stat(ROOT / rel, follow_symlinks=False)
        except OSError:
            continue
        out[rel] = (st.st_size, st.st_mtime_ns)
    return out


def repository_changes(before: dict[str, tuple[int, int]], ignore: set[str]) -> list[str]:
    """The files of ``before`` that changed or went away since (a guard: the examples run in a copy)."""
    after = snapshot(list(before))
    return sorted(rel for rel in before if rel not in ignore and after.get(rel) != before[rel])


def run_example(ex: Example, scratch: Scratch, timeout: float) -> list[list[str]]:
    """Each command's output lines."""
    if ex.copy:
        for f in sorted((ROOT / ex.copy).iterdir()):
            if f.is_file():
                shutil.copy2(f, scratch.cwd / f.name)
    script = ["S=../shared/data"]
    for k, cmd in enumerate(ex.commands):
        text = cmd.text[2:]   # without "$ "
        script.append(f"printf '\\n{SEPARATOR}{k}\\n'")
        if not text.lstrip().startswith("#"):   # a line `$ # what follows` is a comment: nothing to run
            script.append(f"{{ {text}\n}} 2>&1")
    script.append(f"printf '\\n{SEPARATOR}end\\n'")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("COLUMNS", "120")
    if not scratch.user_cache:   # the same cold alignment cache on every run: eflomal's log lines each time
        env["MWEMT_CACHE"] = str(scratch.top / "cache")
    env["PYTHONUNBUFFERED"] = "1"   # stdout and stderr in the order a terminal shows them
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=scratch.cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    text = proc.stdout.decode("utf-8", errors="replace")   # not text=True: that would turn \r into \n
    parts = re.split(rf"\n{re.escape(SEPARATOR)}(\d+|end)\n", "\n" + text)
    # parts: [before, "0", out0, "1", out1, ..., "end", after]
    outputs = {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    return [terminal_text(outputs.get(str(k), "")) for k in range(len(ex.commands))]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when an example's output differs")
    mode.add_argument("--write", action="store_true", help="rewrite the examples' output in their pages")
    mode.add_argument("--list", action="store_true", help="list the examples and their options, and the transcripts")
    p.add_argument("--only", action="append", metavar="NAME", help="only this example (repeatable)")
    p.add_argument("--skip-slow", action="store_true", help="leave the examples marked slow alone")
    p.add_argument("--skip-shared", action="store_true", help="leave the examples that need ../shared alone")
    p.add_argument("--user-cache", action="store_true",
                   help="use your alignment cache ($MWEMT_CACHE or ~/.cache/mwemt) instead of an empty one in the "
                        "scratch directory (faster; eflomal's log lines then depend on what it holds)")
    p.add_argument("--readme", type=Path, default=README,
                   help="check this one page (any file) instead of the pages found in the checkout")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per example (default: %(default)s)")
    args = p.parse_args(argv)

    page = _page_name(args.readme)
    lines = args.readme.read_text(encoding="utf-8").split("\n")
    examples = parse(lines, page)
    transcripts = parse_transcripts(lines, page)
    by_name = {e.name: e for e in examples}
    if args.list:
        for e in examples:
            flags = [f for f, on in (("slow", e.slow), ("shared", e.shared), ("unseeded", e.unseeded)) if on]
            print(f"  {e.name:24s} line {e.start:4d}  {len(e.commands)} command(s)  {' '.join(flags)}"
                  + (f"  needs={','.join(e.needs)}" if e.needs else "") + (f"  copy={e.copy}" if e.copy else ""))
        for t in transcripts:
            print(f"  {'(transcript)':24s} line {t.line + 1:4d}  {t.reason}")
        return 0
    unknown = [n for n in args.only or [] if n not in by_name]
    if unknown:
        p.error(f"no example named {', '.join(unknown)} (known: {', '.join(by_name)})")
    chosen = [e for e in examples if not args.only or e.name in args.only]
    if not chosen:   # a page of transcripts only: nothing to run
        return 0

    files = checkout_files()
    before = snapshot(files)
    scratch = Scratch(args.user_cache)
    drift = False
    done: set[str] = set()
    try:
        def prepare(ex: Example) -> bool:
            for need in ex.needs:
                if need not in done:
                    dep = by_name[need]
                    if not prepare(dep):
                        return False
                    run_example(dep, scratch, args.timeout)
                    done.add(need)
            return True

        # replace from the bottom up so that earlier line numbers stay valid
        results: list[tuple[Example, list[list[str]]]] = []
        for ex in chosen:
            skip = (ex.slow and args.skip_slow and "slow") or (ex.shared and (args.skip_shared or not
                                                                              scratch.has_shared()) and "shared")
            skip = skip or next((f"needs {n}" for n in ex.needs if by_name[n].slow and args.skip_slow), None)
            if skip:
                print(f"{ex.name}: skipped ({skip})", file=sys.stderr)
                continue
            if not prepare(ex):
                continue
            print(f"{ex.name}: running {len(ex.commands)} command(s)", file=sys.stderr)
            outputs = run_example(ex, scratch, args.timeout)
            done.add(ex.name)
            crash = next((line for out in outputs for line in out if any(c in line for c in CRASHES)), None)
            if crash is not None:   # a bug (or a checkout caught mid-edit): never written into the README
                drift = True
                print(f"{ex.name}: a command crashed ({crash.strip()}); not rewritten", file=sys.stderr)
                continue
            results.append((ex, outputs))
            for cmd, actual in zip(ex.commands, outputs):
                if not matches(cmd.shown, actual):
                    drift = True
                    hint = (" (this example aligns with eflomal, which cannot be seeded: with an empty cache "
                            "its numbers can differ by chance)") if ex.unseeded else ""
                    print(f"{ex.name}: output of `{cmd.text.splitlines()[0][2:]}` differs from {page}{hint}:",
                          file=sys.stderr)
                    sys.stderr.writelines(difflib.unified_diff([s + "\n" for s in cmd.shown],
                                                               [a + "\n" for a in actual], page, "actual"))
        if args.write:
            # others may have edited the README while the examples ran: re-read it and replace only the
            # bodies of the examples that ran, found again by name, from the bottom up
            lines = args.readme.read_text(encoding="utf-8").split("\n")
            fresh = {e.name: e for e in parse(lines, page)}
            new_lines = list(lines)
            for ex, outputs in sorted(results, key=lambda r: -fresh[r[0].name].start):
                now = fresh[ex.name]
                if [c.text for c in now.commands] != [c.text for c in ex.commands]:
                    print(f"{ex.name}: its commands changed while it ran; not rewritten", file=sys.stderr)
                    continue
                body = []
                for cmd, actual in zip(now.commands, outputs):
                    body.append(cmd.text)
                    body.extend(cmd.shown if matches(cmd.shown, actual) else rewritten(cmd.shown, actual))
                new_lines[now.start:now.end] = "\n".join(body).split("\n")
            if new_lines != lines:
                tmp = args.readme.with_name(f".{args.readme.name}.readme-examples.part")
                tmp.write_text("\n".join(new_lines), encoding="utf-8")
                os.replace(tmp, args.readme)
                print(f"updated {args.readme}", file=sys.stderr)
            return 0
    finally:
        scratch.remove()
        changed = repository_changes(before, {str(args.readme.resolve().relative_to(ROOT))}
                                     if args.write and args.readme.resolve().is_relative_to(ROOT) else set())
        if changed:   # never expected: every example runs in the copy (someone else may be editing the checkout)
            print(f"readme_examples: warning: {len(changed)} file(s) of the checkout changed while the examples ran "
                  f"(the examples run in a copy: another process?): {', '.join(changed[:5])}"
                  + (" ..." if len(changed) > 5 else ""), file=sys.stderr)
    return 1 if drift else 0



def _page_name(path: Path) -> str:
    """A page as messages name it: relative to the checkout when it is in it."""
    resolved = path.resolve()
    return str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else str(path)


def main_pages(argv: list[str] | None = None) -> int:
    """`main` for each page `discover_pages` finds, in turn (with ``--only NAME``: the page that holds NAME); the
    worst exit status. With ``--readme PAGE`` (or ``--help``), `main` alone. ``--check`` over all pages also fails
    on a console block with output that has no marker (``unmarked_blocks``) and on ``$`` commands in a fence that
    is not ```console (``plain_console_blocks``), on every Markdown file of the checkout."""
    argv = list(sys.argv[1:] if argv is None else argv)
    pick = argparse.ArgumentParser(add_help=False)
    pick.add_argument("--readme")
    pick.add_argument("--only", action="append", default=[])
    known, rest = pick.parse_known_args(argv)
    if known.readme is not None or {"-h", "--help"} & set(rest):
        return main(argv)
    names: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for page in discover_pages(ROOT):
        lines = (ROOT / page).read_text(encoding="utf-8").split("\n")
        names[page] = [e.name for e in parse(lines, page)]
        parse_transcripts(lines, page)   # refuses a transcript without a reason before anything runs
        for name in names[page]:
            if name in where:
                print(f"readme_examples: the example name {name} is used on two pages, {where[name]} and {page}: "
                      "names must be unique across the pages (--only NAME finds its page by it)", file=sys.stderr)
                return 2
            where[name] = page
    unknown = [n for n in known.only if n not in where]
    if unknown:
        print(f"readme_examples: no example named {', '.join(unknown)} (known: {', '.join(where)})", file=sys.stderr)
        return 2
    status = 0
    if "--check" in rest and not known.only:
        for rel in markdown_files(ROOT):
            lines = (ROOT / rel).read_text(encoding="utf-8").split("\n")
            for line in unmarked_blocks(lines):
                print(f"{rel}:{line}: a console block with output has neither an example nor a transcript marker",
                      file=sys.stderr)
                status = 1
            for line in plain_console_blocks(lines):
                print(f"{rel}:{line}: a console session in a fence that is not ```console (make it one, with a "
                      "marker)", file=sys.stderr)
                status = 1
    for page, found in names.items():
        only = [n for n in known.only if n in found]
        if known.only and not only:
            continue
        if "--list" in rest:
            print(f"{page}:")
        status = max(status, main([*rest, "--readme", str(ROOT / page), *(a for n in only for a in ("--only", n))]))
    return status


if __name__ == "__main__":
    try:
        sys.exit(main_pages())
    except BrokenPipeError:   # `--list | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
