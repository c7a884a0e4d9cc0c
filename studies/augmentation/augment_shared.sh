#!/usr/bin/env bash
# Reproduce the shared-data augmentation runs of docs/augment.md.
#   studies/augmentation/augment_shared.sh [OUT_DIR]      (default: runs/augment; SHARED=../shared/data)
# Steps: Tatoeba EN-IT split -> dictionary augmentation (MultiWordNet MWEs, 10%) -> a small IT->EN
# reverse model trained with `mwemt train` -> back-translation of Italian Europarl sentences that
# contain a WordNet MWE (2%). SKIP_BT=1 stops after the dictionary step (no torch/fairseq needed).
# REVERSE_UPDATES (default 800) sets the reverse model's training length (55 min on a loaded 2-core box).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/augment}
SHARED=${SHARED:-../shared/data}
SEED=${SEED:-1}
TSV=$SHARED/parallel/tatoeba-en-it/eng-ita.anki.tsv
WN=$SHARED/lexicons/wordnet-mwe/derived
MONO=$SHARED/parallel/europarl-en-it/data/pivot/triples.it.gz
mkdir -p "$OUT"

# 1. deterministic split (whole source groups; 2000 valid, 2000 test pairs)
mwemt augment split --tsv "$TSV" --out "$OUT/tatoeba" --valid-size 2000 --test-size 2000 --seed "$SEED"

# 2. MWE dictionary pairs (MultiWordNet, English side an MWE): 10% of the training pairs
mwemt augment dictionary --dict "$WN/en-ita.multiwordnet.tsv" --mwe-only --train "$OUT/tatoeba/train" \
    --ratio 0.10 --seed "$SEED" --out "$OUT/tatoeba/train.dict"

[ "${SKIP_BT:-0}" = 1 ] && exit 0

# 3. a tiny IT->EN reverse model on the same training split (low quality: it shows the mechanics)
cat > "$OUT/reverse-it-en.yaml" <<YAML
name: reverse-it-en
seed: $SEED
src_lang: it
tgt_lang: en
data:
  train: {src: $OUT/tatoeba/train.it, tgt: $OUT/tatoeba/train.en}
  valid: {src: $OUT/tatoeba/valid.it, tgt: $OUT/tatoeba/valid.en}
subword: {vocab_size: 8000, input_sentence_size: 100000}
model: {preset: tiny}
train: {max_epoch: 0, max_update: ${REVERSE_UPDATES:-800}, early_stop: loss, patience: -1,
        validate_interval_updates: 500, threads: 2, log_interval: 100}
YAML
# (skipped when the model exists: re-running `mwemt train` on a finished model does one more update)
[ -f "$OUT/reverse-it-en/model/preprocess.json" ] ||
    mwemt train --config "$OUT/reverse-it-en.yaml" --workdir "$OUT/reverse-it-en"

# 4. back-translated Italian Europarl sentences with a WordNet Italian MWE (MultiWordNet and
#    ItalWordNet together): 2% of the training pairs, tagged <BT>
mwemt augment backtranslate --mono "$MONO" \
    --target-lexicon "$WN/en-ita.multiwordnet.tsv" "$WN/en-ita.italwordnet.tsv" --lexicon-side target \
    --reverse-model "$OUT/reverse-it-en/model" --beam 1 --batch-size 64 --tag '<BT>' \
    --train "$OUT/tatoeba/train" --ratio 0.02 --seed "$SEED" --out "$OUT/tatoeba/train.bt"
