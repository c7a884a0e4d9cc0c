#!/bin/sh
# Recompute results.json's scores from the published files (run inside this directory);
# each test's scores land in rescored/TEST.json. Written by `mwemt run --publish`.
set -e
mkdir -p rescored
mwemt score --metrics bleu,chrf --lang it --mwe-average sentence --paired-bs --bs-samples 1000 --seed 12345 --ref refs/tatoeba.txt --hyp baseline=hyps/baseline.tatoeba.txt.gz --hyp constrained-decoding=hyps/constrained-decoding.tatoeba.txt.gz --hyp baseline-seed2=hyps/baseline-seed2.tatoeba.txt.gz --hyp constrained-decoding-seed2=hyps/constrained-decoding-seed2.tatoeba.txt.gz --json -o rescored/tatoeba.json
mwemt score --metrics bleu,chrf,mwe,mwe-idiomatic,mwe-literal --lang it --mwe-average sentence --paired-bs --bs-samples 1000 --seed 12345 --ref refs/tatoeba-mwe.txt --testset refs/tatoeba-mwe.jsonl --hyp baseline=hyps/baseline.tatoeba-mwe.txt.gz --hyp constrained-decoding=hyps/constrained-decoding.tatoeba-mwe.txt.gz --hyp baseline-seed2=hyps/baseline-seed2.tatoeba-mwe.txt.gz --hyp constrained-decoding-seed2=hyps/constrained-decoding-seed2.tatoeba-mwe.txt.gz --json -o rescored/tatoeba-mwe.json
