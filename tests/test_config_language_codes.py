"""A config's src_lang/tgt_lang end file names (PREFIX.CODE): an empty or path-like code is refused as what it
is, before the data files are looked for with it (the probe of issue 37 saw `src_lang: ''` blamed on data.train)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mwemt.experiments.config import load_config
from mwemt.schema import ConfigError

DEMO = Path(__file__).resolve().parents[1] / "configs" / "demo.yaml"


@pytest.mark.parametrize("code", ["", "e n", "../x", "en/", "."])
def test_a_bad_language_code_is_named_as_such(code):
    with pytest.raises(ConfigError, match=r"src_lang: .* is not a language code .*expected a code such as en"):
        load_config(DEMO, [f"src_lang={code}"])


@pytest.mark.parametrize("code", ["pt_BR", "zh-Hans"])
def test_real_codes_pass_the_check(code):
    with pytest.raises(ConfigError) as err:   # the demo has no files in these languages: that is the error
        load_config(DEMO, [f"src_lang={code}"])
    assert "not a language code" not in str(err.value) and "data.train" in str(err.value)
