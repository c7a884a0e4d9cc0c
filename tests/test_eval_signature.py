"""Signatures: fixed field order (name, nrefs, bs, seed, settings, version last), sacrebleu's string
form for BLEU/chrF, and parsing back."""

from __future__ import annotations

import pytest
import sacrebleu

from mwemt import __version__
from mwemt.evaluate.signature import Signature, format_signature


def test_fields_in_fixed_order_with_version_last():
    sig = Signature.of("MWE", {"tok": "moses-it+apos", "align": False, "cap": "len"})
    assert str(sig) == f"MWE|tok:moses-it+apos|align:no|cap:len|version:{__version__}"
    tested = sig.with_bootstrap(1000, 12345)
    assert str(tested) == f"MWE|bs:1000|seed:12345|tok:moses-it+apos|align:no|cap:len|version:{__version__}"
    assert tested.fields()[-1] == ("version", __version__)
    assert tested.get("bs") == "1000" and tested.get("align") == "no" and tested.get("missing") is None
    assert sig == Signature.of("MWE", [("tok", "moses-it+apos"), ("align", False), ("cap", "len")])


def test_parse_is_the_inverse_of_format():
    sig = Signature.of("tesla-comp", {"n": 3, "alpha": 0.8, "lemma": "simplemma:it", "comp": "c.tsv@ab12"},
                       nrefs=1).with_bootstrap(100, 7)
    assert Signature.parse(str(sig)) == sig
    assert Signature.parse(str(sig)).get("lemma") == "simplemma:it"  # values may hold colons


def test_sacrebleu_signatures_read_and_write_back_unchanged():
    bleu = sacrebleu.BLEU()
    bleu.corpus_score(["a b c d"], [["a b c d"]])
    text = "BLEU|" + bleu.get_signature().format()
    sig = Signature.parse(text)
    assert (sig.nrefs, sig.version) == (1, sacrebleu.__version__) and str(sig) == text
    # the paired-test form, as sacrebleu prints it: nrefs, bs, seed, then the settings
    assert str(sig.with_bootstrap(1000, 12345)) == \
        f"BLEU|nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:{sacrebleu.__version__}"


def test_bad_signatures():
    with pytest.raises(ValueError, match="reserved"):
        Signature.of("X", {"version": "1"})
    with pytest.raises(ValueError, match="twice"):
        Signature.of("X", [("a", 1), ("a", 2)])
    with pytest.raises(ValueError, match="no version"):
        Signature.parse("X|a:1")
    with pytest.raises(ValueError, match="key:value"):
        Signature.parse("X|a|version:1")
    assert format_signature("parseme-id", {"seen": "no-train"}, version="9") == "parseme-id|seen:no-train|version:9"
