#!/bin/sh
# Meta-evaluate BLEU, chrF and the TESLA-like metrics against published expert MQM, with mwemt's own
# commands only: the route a user takes with their own MQM file.
#
#   studies/meta-evaluation/meta_eval_mqm.sh wmt23-zh-en [OUT]   WMT23 general task ZH->EN (side-by-side MQM, 10 systems)
#   studies/meta-evaluation/meta_eval_mqm.sh ted-en-de [OUT]     WMT21 TED talks EN->DE (Freitag et al. 2021, 13 systems)
#
# Steps: `meta-eval extract` writes the rated texts line-aligned with the MQM file's segment ids;
# for English targets `compositionality weights` finds the references' WordNet MWEs and predicts their
# compositionality from cached corpus vectors (VECTORS=DIR, $MWEMT_VECTORS, or the largest English
# vectors under runs/compositionality-cache); `score` writes sentence scores under those ids;
# `meta-eval` correlates them with the MQM and compares every pair of metrics.
# OUT (default runs/meta-eval-NAME) ends up with meta-eval.txt (the report), meta-eval.json, scores.txt
# (the score table, with tesla-comp's coverage), weights.tsv and the sentence scores in seg/.
# Environment: DATA (default ../shared/data), BOOTSTRAP and PERMUTATIONS (default 1000 each).
set -eu

name=${1:?usage: $0 wmt23-zh-en|ted-en-de [OUT]}
out=${2:-runs/meta-eval-$name}
data=${DATA:-../shared/data}
boot=${BOOTSTRAP:-1000}
perm=${PERMUTATIONS:-1000}

hyps() {  # --hyp NAME=FILE for every system extract wrote
    for f in "$out"/hyp/*.txt; do
        printf ' --hyp %s=%s' "$(basename "$f" .txt)" "$f"
    done
}

case $name in
wmt23-zh-en)
    w=$data/judgements/wmt23-mqm-zh-en
    human=$w/sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz
    mwemt meta-eval extract --human "$human" --source-text "$w/txt/generaltest2023.zh-en.src.zh" \
        --reference-text "$w/txt/generaltest2023.zh-en.ref.refA.en" --out "$out" > /dev/null
    mwemt compositionality weights --ref "$out/reference.txt" ${VECTORS:+--vectors "$VECTORS"} \
        --out "$out/weights.tsv"
    # shellcheck disable=SC2046
    mwemt score --testset "$out/testset.jsonl" $(hyps) --metrics bleu,chrf,tesla,tesla-01,tesla-comp \
        --compositionality "$out/weights.tsv" ${TESLA_DEFAULT:+--tesla-default "$TESLA_DEFAULT"} \
        --sentence-scores "$out/seg" > "$out/scores.txt"
    exclude=""
    ;;
ted-en-de)
    t=$data/judgements/wmt-mqm-en-de/ted/ende
    human=$t/mqm_ted_ende.avg_seg_scores.tsv
    mwemt meta-eval extract --human "$t/mqm_ted_ende.tsv" --out "$out" > /dev/null
    # German: no WordNet and no compositionality predictions; tesla-01's MWEs are LIdioms' German idioms
    # shellcheck disable=SC2046
    mwemt score --testset "$out/testset.jsonl" $(hyps) --metrics bleu,chrf,tesla,tesla-01 --lang de \
        --tesla-lexicon "$data/lexicons/lidioms/de/german.ttl" --sentence-scores "$out/seg" > "$out/scores.txt"
    exclude="--exclude-system ref-A"
    ;;
*)
    echo "$0: unknown set '$name' (wmt23-zh-en or ted-en-de)" >&2
    exit 2
    ;;
esac

metrics=""
for m in bleu chrf tesla tesla-01 tesla-comp; do
    [ -f "$out/seg/$m.seg.tsv" ] && metrics="$metrics --metric $out/seg/$m.seg.tsv"
done
# shellcheck disable=SC2086
mwemt meta-eval --human "$human" $metrics $exclude --bootstrap "$boot" --permutations "$perm" \
    --output "$out/meta-eval.txt"
# shellcheck disable=SC2086
mwemt meta-eval --human "$human" $metrics $exclude --bootstrap "$boot" --permutations "$perm" --json \
    --output "$out/meta-eval.json"
cat "$out/meta-eval.txt"
