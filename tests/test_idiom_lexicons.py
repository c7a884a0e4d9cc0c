"""Idiom resources as lexicons: LIdioms Turtle and EPIE lists with instances, detection and errors.

Fixtures in tests/fixtures/idioms are small files written by us in the published layouts.
"""

from __future__ import annotations

import shutil

import pytest

from mwemt.cli import main
from mwemt.errors import InputError
from mwemt.formats import LEXICON_FORMATS, detect_lexicon_format, read_lexicon_entries
from mwemt.idiom_lexicons import idiom_words, lidioms_written_forms
from mwemt.preprocess.annotate import Annotator, load_lexicon


@pytest.fixture
def idioms(fixtures):
    return fixtures / "idioms"


def _keys(entries) -> dict[str, tuple[str, int]]:
    return {e.key: (e.category, e.count) for e in entries}


def test_formats_detected_by_extension_name_and_header(idioms, tmp_path):
    assert detect_lexicon_format(idioms / "mini.ttl") == "lidioms"
    assert detect_lexicon_format(idioms / "epie") == "epie"
    assert detect_lexicon_format(idioms / "epie" / "Static_idioms.txt") == "epie"
    turtle = tmp_path / "idioms.rdf.txt"  # Turtle under another name: the @prefix header tells
    shutil.copy(idioms / "mini.ttl", turtle)
    assert detect_lexicon_format(turtle) == "lidioms"
    plain = tmp_path / "plain.txt"
    plain.write_text("# a comment\nivory tower\n", encoding="utf-8")
    assert detect_lexicon_format(plain) == "list"


def test_lidioms_written_forms_without_placeholders_or_final_punctuation(idioms):
    entries = read_lexicon_entries(idioms / "mini.ttl")
    # jdm is a placeholder; "eile mit weile." loses its full stop; "quatsch!" is a single word; the
    # writtenRep of a subject that is no LexicalEntry is not an idiom; the English definition is ignored
    assert _keys(entries) == {"auf dem holzweg sein": ("idiom", 0), "eile mit weile": ("idiom", 0),
                              "die daumen drücken": ("idiom", 0)}
    assert lidioms_written_forms(idioms / "mini.ttl")["de"][-1] == "quatsch!"


def test_lidioms_language_is_chosen_or_asked_for(idioms):
    assert [e.key for e in read_lexicon_entries(idioms / "multi.ttl", lang="it")] == ["in bocca al lupo"]
    assert [e.key for e in read_lexicon_entries(idioms / "multi.ttl", lang="en-GB")] == ["break a leg"]
    with pytest.raises(InputError, match=r"idioms in several languages \(en, it\)"):
        read_lexicon_entries(idioms / "multi.ttl")
    with pytest.raises(InputError, match=r"no idioms in language 'en'.*languages the file has: de"):
        load_lexicon(idioms / "mini.ttl", lang="en", lemmatizer="none")


def test_bad_turtle_names_the_line(idioms, tmp_path):
    with pytest.raises(InputError, match=r"broken\.ttl:3: not valid Turtle: newline found in string literal"):
        read_lexicon_entries(idioms / "broken.ttl")
    other = tmp_path / "void.ttl"
    other.write_text('@prefix dct: <http://purl.org/dc/terms/> .\n<http://x/d> dct:title "a data set" .\n',
                     encoding="utf-8")
    with pytest.raises(InputError, match="no ontolex:LexicalEntry"):
        read_lexicon_entries(other)


def test_epie_lists_with_counts_and_attested_forms(idioms):
    entries = read_lexicon_entries(idioms / "epie")
    # "keep [pron] eye on" has a slot: its attested forms stand in for it (Keep/keep counted together);
    # the corpus names "bring (somebody) to ([pron]) knees" without its slots; "build bridges" has none
    assert _keys(entries) == {
        "keep an eye on": ("idiom-formal", 2), "kept an eye on": ("idiom-formal", 1),
        "brought the company to its knees": ("idiom-formal", 1), "build bridges": ("idiom-formal", 1),
        "rule of thumb": ("idiom-static", 2), "in the nick of time": ("idiom-static", 1)}
    static = read_lexicon_entries(idioms / "epie" / "Static_idioms.txt")
    assert [e.key for e in static] == ["rule of thumb", "in the nick of time"]
    assert idiom_words("bring (somebody) to ([pron]) knees", "en") == ("bring", "to", "knees")


def test_epie_misaligned_tags_name_the_line(idioms, tmp_path):
    copy = tmp_path / "epie"
    shutil.copytree(idioms / "epie", copy)
    tags = copy / "Static_Idioms_Corpus" / "Static_Idioms_Tags.txt"
    lines = tags.read_text().splitlines()
    tags.write_text("\n".join([lines[0], "O O", lines[2]]) + "\n")
    with pytest.raises(InputError, match=r"Static_Idioms_Tags\.txt:2: 8 words but 2 tags"):
        read_lexicon_entries(copy)


def test_unknown_or_mismatched_format_lists_the_formats(idioms):
    formats = ", ".join(LEXICON_FORMATS)
    with pytest.raises(InputError, match="this looks like a lidioms lexicon, not list") as err:
        read_lexicon_entries(idioms / "mini.ttl", "list")
    assert formats in str(err.value)
    with pytest.raises(InputError, match="unknown lexicon format 'turtle'") as err:
        read_lexicon_entries(idioms / "mini.ttl", "turtle")
    assert formats in str(err.value)
    with pytest.raises(InputError, match="looks like a epie lexicon, not oewn"):
        read_lexicon_entries(idioms / "epie", "oewn")


def test_idioms_are_found_in_text(idioms):
    lex = load_lexicon(idioms / "mini.ttl", lang="de")
    sent = Annotator(lex, lang="de").annotate_text("Ich werde dir die Daumen drücken, sonst wirst du auf dem "
                                                   "Holzweg sein.")
    assert sorted(m.lemma for m in sent.mwes) == ["auf dem holzweg sein", "die daumen drücken"]
    epie = load_lexicon(idioms / "epie", lang="en")
    found = Annotator(epie, lang="en").annotate_text("She keeps an eye on the budget, as a rule of thumb.")
    assert sorted(m.lemma for m in found.mwes) == ["keep an eye on", "rule of thumb"]


def test_score_takes_a_turtle_lexicon(idioms, tmp_path, capsys):
    ref = tmp_path / "ref.de"
    hyp = tmp_path / "hyp.de"
    ref.write_text("Wir drücken dir die Daumen.\nDu bist auf dem Holzweg.\n", encoding="utf-8")
    hyp.write_text("Wir halten dir die Daumen.\nDu bist auf dem falschen Weg.\n", encoding="utf-8")
    code = main(["score", "--hyp", str(hyp), "--ref", str(ref), "--metrics", "tesla,tesla-01", "--lang", "de",
                 "--tesla-lexicon", str(idioms / "mini.ttl")])
    out = capsys.readouterr().out
    assert code == 0 and "lex:mini.ttl@" in out


def test_lexicon_cli_converts_turtle(idioms, tmp_path, capsys):
    out = tmp_path / "de.lex.tsv"
    assert main(["lexicon", "convert", str(idioms / "mini.ttl"), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").splitlines()[1:] == [
        "auf dem holzweg sein\tidiom", "eile mit weile\tidiom", "die daumen drücken\tidiom"]
    assert main(["lexicon", "stats", str(idioms / "multi.ttl"), "--lang", "it"]) == 0
    assert "(lidioms): 1 entries" in capsys.readouterr().out


@pytest.mark.shared
def test_shared_idiom_resources_load(shared):
    german = read_lexicon_entries(shared / "lexicons/lidioms/de/german.ttl", lang="de")
    assert len(german) == 134 and all("jdm" not in e.lemmas for e in german)
    epie = read_lexicon_entries(shared / "lexicons/epie-idioms")
    assert sum(e.count for e in epie) == 3136 + 21891  # every instance sentence is counted once
