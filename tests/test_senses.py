"""Sense from context (issue 42, item 1): an MWE's candidates ranked by how well they fit the line's source
context (`mwemt.testsets.senses`): the contexts of the training pairs behind the table's counts for attested
translations, the dictionary senses' members and glosses for the others; weights tuned on training data only;
the ranking reads no test reference."""

from __future__ import annotations

import json

import pytest

from mwemt.errors import InputError, MwemtError
from mwemt.records import AnnotatedSentence, Mwe
from tests.conftest import requires_nmt

# (source, target, MWE span, target span of its translation): "turn out" as "spegnere" (a light) and as
# "risultare" (how things went), "take off" attested once
TRAINING = [
    ("please turn out the light .", "per favore spegnete la luce .", (1, 2), (2,)),
    ("turn out the lights now .", "spegnete le luci ora .", (0, 1), (0,)),
    ("did you turn out the lamp ?", "hai spento la lampada ?", (2, 3), (1,)),
    ("she will turn out the light .", "lei spegnerà la luce .", (2, 3), (1,)),
    ("it turned out well .", "è risultato bene .", (1, 2), (1,)),
    ("the story turned out true .", "il racconto è risultato vero .", (2, 3), (3,)),
    ("it turned out fine in the end .", "alla fine è risultato bene .", (1, 2), (3,)),
    ("the plan turned out well .", "il piano è risultato buono .", (2, 3), (3,)),
    ("the plane took off .", "l' aereo è decollato .", (2, 3), (3,)),
    ("he took off his hat .", "si è tolto il cappello .", (1, 2), (2,)),
]
DICTIONARY = """pwn30_synset\tili\toewn_synset\tpos\tlexfile\tenglish_lemmas\tita_lemmas\tenglish_has_mwe\tita_has_mwe\tenglish_definition
1-v\ti1\t1-v\tv\tverb.contact\tswitch off | turn off | put out\tspegnere\t1\t0\tcause to stop operating by disengaging a switch
2-v\ti2\t2-v\tv\tverb.stative\tprove | pan out\trisultare | rivelarsi\t1\t0\tbe shown or be found to be
"""


def training():
    from mwemt.preprocess.lemmatize import get_lemmatizer

    lem = get_lemmatizer("simplemma", "en")
    sents, tgts, links = [], [], []
    for src, tgt, span, tspan in TRAINING:
        toks = src.split()
        lemmas = lem.lemmatize(toks)
        sents.append(AnnotatedSentence(toks, lemmas, [Mwe(span, " ".join(lemmas[i] for i in span))]))
        tgts.append(tgt.split())
        links.append(frozenset((i, j) for i in span for j in tspan))
    return sents, tgts, links


def build(tmp_path, with_dictionary: bool = True):
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.testsets.mwe_table import MweTranslationTable, read_dictionary
    from mwemt.testsets.senses import DictionarySenses, SenseContextBuilder

    sents, tgts, links = training()
    builder = SenseContextBuilder([s.lemmas for s in sents])
    table, counts = MweTranslationTable.build_from_alignment(sents, tgts, links, observe=builder.observe)
    assert counts["kept"] == len(TRAINING) == len(builder.occurrences)
    senses = None
    if with_dictionary:
        path = tmp_path / "dict.tsv"
        path.write_text(DICTIONARY)
        table.add_dictionary(read_dictionary(path, "wn-aligned"), lang="it")
        senses = DictionarySenses.read(path, keys=table.keys())
    lem_t = get_lemmatizer("simplemma", "it")
    tgt_lemmas = [[w.casefold() for w in lem_t.lemmatize(t)] for t in tgts]
    return table, builder.build(tgt_lemmas, senses, target_lemmatizer=lem_t)


def ranked(ranker, table, key, sentence):
    from mwemt.preprocess.lemmatize import get_lemmatizer

    toks = sentence.split()
    lemmas = get_lemmatizer("simplemma", "en").lemmatize(toks)
    words = key.split()
    start = next(i for i in range(len(toks)) if lemmas[i] == words[0])
    return [r.entry.text for r in ranker.rank(key, table.translations(key), lemmas, range(start, start + len(words)))]


def test_the_observe_hook_hears_every_counted_occurrence_with_its_sentence():
    from mwemt.testsets.mwe_table import MweTranslationTable

    sents, tgts, links = training()
    heard = []
    MweTranslationTable.build_from_alignment(sents, tgts, links, observe=lambda k, t, n, m: heard.append((k, t, n)))
    assert heard[0] == ("turn out", ("spegnete",), 0) and heard[4] == ("turn out", ("risultato",), 4)
    assert [n for _, _, n in heard] == list(range(len(TRAINING)))


def test_attested_translations_rank_by_the_lines_context(tmp_path):
    from mwemt.testsets.senses import SenseRanker

    table, contexts = build(tmp_path, with_dictionary=False)
    ranker = SenseRanker(contexts)
    # by count alone "risultato" (4) would win everywhere: context decides
    assert ranked(ranker, table, "turn out", "can you turn out the light ?")[0] in ("spegnete", "spento", "spegnerà")
    assert ranked(ranker, table, "turn out", "it all turned out well in the end .")[0] == "risultato"
    # forms of one sense pool their evidence: `best` offers one per sense
    best = ranker.best("turn out", table.translations("turn out"), "it turned out well .".split(), (1, 2), 3)
    assert len(best) == 2 and best[0].entry.text == "risultato"


def test_the_weights_are_tuned_on_the_training_occurrences_by_leave_one_out(tmp_path):
    from mwemt.testsets.senses import PRIOR_GRID, SHRINK_GRID

    _, contexts = build(tmp_path)
    tuning = contexts.provenance["tuning"]
    assert tuning["occurrences"] == 10       # the occurrences of the two types with two senses
    assert contexts.weights.prior in PRIOR_GRID and contexts.weights.shrink in SHRINK_GRID
    best = max(a for _, _, a in tuning["curve"])
    assert tuning["accuracy"] == best >= tuning["count_only"]
    # "turn out": two senses attested 4 times each, so left out, an occurrence's sense is always the rarer one
    # and count alone never gets it right; context gets most of them (weight 3 in all). Each "take off" sense is
    # attested once, so left out it is no candidate (weight 2 in all, never right): at most 3 of 5
    assert tuning["count_only"] == 0.0 and 0.5 < best <= 0.6
    assert "dictionary_tuning" in contexts.provenance


def test_dictionary_senses_of_an_unseen_type_rank_by_their_members_contexts(tmp_path):
    from mwemt.testsets.senses import SenseRanker

    table, contexts = build(tmp_path)
    ranker = SenseRanker(contexts)
    # "pan out" and "put out" never occur in training: their senses' members do (risultare, spegnere)
    assert table.translations("pan out") and all(e.count == 0 for e in table.translations("pan out"))
    assert ranked(ranker, table, "pan out", "i hope the plan pans out well .")[0] == "risultare"
    top = ranker.rank("put out", table.translations("put out"), "please put out the light .".split(), (1, 2))
    assert top[0].entry.text == "spegnere" and top[0].evidence == "dictionary" and top[0].detail["members"] > 0


def test_the_contexts_file_round_trips_and_is_checked(tmp_path):
    from mwemt.testsets.senses import SenseContexts, SenseRanker

    table, contexts = build(tmp_path)
    path = tmp_path / "senses.jsonl.gz"
    contexts.write(path)
    again = SenseContexts.read(path)
    assert again.signature() == contexts.signature() and again.translations == contexts.translations
    assert again.dictionary is not None and [s.synset for s in again.dictionary.of("pan out")] == ["2-v"]
    line = "i hope the plan pans out well ."
    assert ranked(SenseRanker(again), table, "pan out", line) == ranked(SenseRanker(contexts), table, "pan out", line)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"format": "mwemt-sense-contexts", "version": 1, "documents": 2, "df": {}}) + "\n"
                   + '{"key": "turn out", "translations": [{"tokens": ["x"]}]}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl.*2|line 2"):
        SenseContexts.read(bad)
    (tmp_path / "other.jsonl").write_text('{"format": "mwemt-mwe-table"}\n')
    with pytest.raises(InputError):
        SenseContexts.read(tmp_path / "other.jsonl")


def test_weights_are_checked():
    from mwemt.testsets.senses import SenseWeights

    with pytest.raises(MwemtError):
        SenseWeights(prior=-1)
    with pytest.raises(MwemtError):
        SenseWeights(smoothing=0)


def test_the_ranking_reads_no_test_reference(tmp_path):
    """The ranking of a test set's MWEs is the same whatever its references say: changed, or absent."""
    from mwemt.formats import read_testset
    from mwemt.testsets.senses import SenseRanker, rank_items

    table, contexts = build(tmp_path)
    items = [{"id": "1", "source": "can you turn out the lamp ?", "reference": "puoi spegnere la lampada ?",
              "mwes": [{"indices": [2, 3], "lemma": "turn out", "reference": "spegnere"}]},
             {"id": "2", "source": "it turned out fine .", "reference": "è andata bene .",
              "mwes": [{"indices": [1, 2], "lemma": "turn out", "reference": "andata"}]}]
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    ranker = SenseRanker(contexts)
    before = rank_items(read_testset(path), table, ranker, 3)
    for i in items:   # every reference changed, the MWEs' reference translations swapped
        i["reference"] = "xxx yyy"
        i["mwes"][0]["reference"] = "spegnere" if i["id"] == "2" else "risultare"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    assert rank_items(read_testset(path), table, ranker, 3) == before
    assert [r[2][0] for r in before] != [r[2][0] for r in before[::-1]]   # the two lines do rank differently


def test_the_config_keys_are_judged_only_and_leave_other_keys_alone():
    from mwemt.experiments.experiment import Pipeline, count_stages
    from mwemt.schema import ConfigError, to_plain
    from tests.test_constraints_judged import judged_config

    plain = judged_config()
    t = plain.systems["judged"].translate
    assert "constraint_ranking" not in to_plain(t) and "constraint_forms" not in to_plain(t)
    assert list(to_plain(Pipeline.constraint_section(t))) == ["order", "min_count", "sources", "candidates",
                                                               "threshold", "mwe_context"]
    new = judged_config(constraint_ranking="context", constraint_forms=3)
    section = Pipeline.constraint_section(new.systems["judged"].translate)
    assert (section.ranking, section.forms) == ("context", 3)
    assert count_stages(new, list(new.systems)) == count_stages(plain, list(plain.systems)) + 1   # sense-data
    with pytest.raises(MwemtError, match="senses"):
        section.options(0.5)          # without the stage's inputs there is nothing to rank with
    opts = section.options(0.5, {"constraint_senses": "s.jsonl.gz", "constraint_forms": "f.jsonl.gz"})
    assert (opts.ranking, opts.forms, opts.senses_file, opts.forms_file) == ("context", 3, "s.jsonl.gz", "f.jsonl.gz")
    from mwemt.experiments.config import config_from_data
    from tests.test_constraints_judged import NMT

    with pytest.raises(ConfigError, match="constraint_ranking"):
        config_from_data({"data": {"train": str(NMT / "train"), "valid": str(NMT / "valid"),
                                   "lexicon": str(NMT / "lexicon.txt"), "lexicon_format": "list"},
                          "systems": {"b": {"translate": {"constraints": "unordered",
                                                          "constraint_ranking": "context"}}}})


@requires_nmt
@pytest.mark.nmt
@pytest.mark.slow
def test_the_grid_builds_sense_data_from_training_pairs_only_and_translates_with_it(tmp_path):
    import io

    from mwemt.experiments.experiment import run_experiment
    from tests.test_constraints_judged import judged_config

    cfg = judged_config(constraint_ranking="context", constraint_forms=2, constraint_threshold=100.0)
    run_experiment(cfg, tmp_path / "run", progress=False, log=io.StringIO(), plot=False)
    stages = tmp_path / "run" / "stages"

    def done(stage: str, system: str) -> tuple:
        (d,) = [p for p in (stages / stage / system).iterdir() if p.is_dir()]
        return d, json.loads((d / "DONE").read_text(encoding="utf-8"))

    sense_dir, sense = done("sense-data", "shared")
    _, corpus = done("corpus", "shared")
    assert set(sense["inputs"]) == {"train_src", "train_tgt", "lexicon", "table"}   # no test file, no reference
    assert sense["inputs"]["train_src"]["sha256"] == corpus["outputs"]["train_src"]["sha256"]
    _, translated = done("translate", "judged.t")
    assert translated["inputs"]["constraint_senses"]["sha256"] == sense["outputs"]["senses"]["sha256"]
    assert translated["inputs"]["constraint_forms"]["sha256"] == sense["outputs"]["forms"]["sha256"]
    summary = json.loads((sense_dir / "sense_data.json").read_text(encoding="utf-8"))
    assert summary["table"] == summary["recounted"]    # the same alignment as the table's (eflomal's cache)
