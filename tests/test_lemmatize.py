"""Lemmatizers behind one interface; all offline, all lowercased."""

import importlib.util

import pytest

from mwemt import wordnet
from mwemt.errors import MwemtError
from mwemt.preprocess.lemmatize import get_lemmatizer, wordnet_pos


def test_simplemma_english_and_italian():
    assert get_lemmatizer("simplemma", "en").lemmatize(["She", "took", "towers"]) == ["she", "take", "tower"]
    assert get_lemmatizer("simplemma", "it").lemmatize(["telefonato", "cani"]) == ["telefonare", "cane"]


def test_none_lowercases_only():
    assert get_lemmatizer("none", "xx").lemmatize(["Took", "Care"]) == ["took", "care"]


def test_unknown_backend_and_language():
    with pytest.raises(MwemtError, match="unknown lemmatizer"):
        get_lemmatizer("magic", "en")
    with pytest.raises(MwemtError, match="wordnet lemmatizer is for English"):
        get_lemmatizer("wordnet", "it")


def test_wordnet_pos_mapping():
    assert [wordnet_pos(t) for t in ["NOUN", "VBD", "JJR", "RB", "DET", None]] == ["n", "v", "a", "r", None, None]


@pytest.mark.skipif(not wordnet.available() and wordnet.install() is None, reason="WordNet not installed")
def test_wordnet_lemmatizer_uses_pos_when_given():
    lem = get_lemmatizer("wordnet", "en")
    assert lem.lemmatize(["walked", "children", "better"], ["VBD", "NNS", "JJR"]) == ["walk", "child", "good"]
    assert lem.lemmatize(["geese", "ran"]) == ["goose", "run"]  # no POS: noun, then verb, adj, adv


def test_lexnames_is_complete():
    text = wordnet.lexnames_text().splitlines()
    assert len(text) == 45 and text[0] == "00\tadj.all\t3" and text[-1] == "44\tadj.ppl\t3"


@pytest.mark.skipif(importlib.util.find_spec("spacy") is not None, reason="spaCy installed")
def test_spacy_absent_is_a_clear_error():
    with pytest.raises(MwemtError, match="spaCy is not installed"):
        get_lemmatizer("spacy", "en")


def test_italian_apocope_survives_detokenization():
    from mwemt.preprocess.tokenize import detokenize, tokenize

    for text in ["C'era un po' di vino.", "dell'acqua e l'amico", "a mo' di esempio"]:
        assert detokenize(tokenize(text, "it"), "it") == text
