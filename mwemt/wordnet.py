"""Make Debian's WordNet 3.0 files readable by NLTK, offline.

Debian's ``wordnet-base`` and ``wordnet-sense-index`` ship the WordNet 3.0 database in
/usr/share/wordnet, but NLTK's reader also wants a ``lexnames`` file listing the 45
lexicographer files. We write that file from the published WordNet 3.0 numbering and link the
rest into an NLTK data directory (copies: NLTK rejects symlinks out of its data dir) that NLTK searches (``<sys.prefix>/nltk_data``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from mwemt.fileio import atomic_write, write_text

DEBIAN_DIR = Path("/usr/share/wordnet")

# WordNet 3.0 lexicographer files: number, name, syntactic category (1 n, 2 v, 3 a, 4 r).
LEXNAMES = [
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1),
    ("noun.animal", 1), ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1),
    ("noun.cognition", 1), ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1),
    ("noun.food", 1), ("noun.group", 1), ("noun.location", 1), ("noun.motive", 1),
    ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1), ("noun.plant", 1),
    ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1),
    ("verb.body", 2), ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2),
    ("verb.competition", 2), ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2),
    ("verb.emotion", 2), ("verb.motion", 2), ("verb.perception", 2), ("verb.possession", 2),
    ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2), ("adj.ppl", 3),
]

_FILES = ["data.noun", "data.verb", "data.adj", "data.adv", "index.noun", "index.verb", "index.adj",
          "index.adv", "noun.exc", "verb.exc", "adj.exc", "adv.exc", "index.sense", "cntlist.rev"]


def lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{cat}\n" for i, (name, cat) in enumerate(LEXNAMES))


def default_target() -> Path:
    return Path(sys.prefix) / "nltk_data" / "corpora" / "wordnet"


def install(source: Path = DEBIAN_DIR, target: Path | None = None) -> Path | None:
    """Link Debian's WordNet into an NLTK data dir; returns the dir, or None if not installed."""
    target = target or default_target()
    if not (source / "data.noun").exists():
        return None
    target.mkdir(parents=True, exist_ok=True)
    for name in _FILES:
        src = source / name
        dst = target / name
        # copy, not symlink: NLTK >= 3.9 refuses corpus files whose real path leaves its data dir
        if dst.is_symlink():
            dst.unlink()
        if src.exists() and not dst.exists():
            # atomically: an interrupted copy must not leave a truncated file that later runs skip
            with open(src, "rb") as fin, atomic_write(dst, "wb") as fout:
                shutil.copyfileobj(fin, fout)
    lex = target / "lexnames"
    if not lex.exists():
        write_text(lex, lexnames_text())
    return target


def available() -> bool:
    """True when NLTK can read WordNet here (without downloading anything)."""
    try:
        from nltk.corpus import wordnet as wn
        wn.ensure_loaded()
        return True
    except Exception:
        return False


def multiword_lemmas() -> list[str]:
    """WordNet 3.0's multiword lemmas, lowercased, words joined by spaces ("ivory tower", "take care"):
    an English MWE list that needs nothing beyond Debian's WordNet. Empty when WordNet is missing."""
    if not available():
        install()
        if not available():
            return []
    from nltk.corpus import wordnet as wn

    return sorted({name.replace("_", " ").lower() for name in wn.all_lemma_names() if "_" in name.strip("_")})


def multiword_entries() -> list:
    """`multiword_lemmas` as lexicon entries (`mwemt.records.LexiconEntry`); an error without WordNet."""
    from mwemt.errors import MwemtError
    from mwemt.records import LexiconEntry

    lemmas = multiword_lemmas()
    if not lemmas:
        raise MwemtError("WordNet is not installed here (Debian's wordnet-base); give an MWE lexicon file")
    return [LexiconEntry(tuple(m.split())) for m in lemmas]


if __name__ == "__main__":
    where = install()
    if where is None:
        print("WordNet not found in /usr/share/wordnet (install Debian's wordnet-base); skipped")
    else:
        print(f"WordNet for NLTK at {where}")
