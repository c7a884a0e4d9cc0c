#!/usr/bin/env bash
# Install mwemt and everything it needs into the active Python environment (use a virtualenv).
#   system:  Debian's WordNet 3.0 (wordnet-base, wordnet-sense-index) where apt-get exists and we may use it
#   python:  torch 2.13.0 (CPU), fairseq-fixed 0.12.3.1, mwemt with its nmt, dev and slurm extras
# Nothing is downloaded at run time afterwards: WordNet is linked into NLTK's data path here.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}

if [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${CONDA_PREFIX:-}" ]; then
  echo "note: no virtual environment is active; installing into $($PY -c 'import sys; print(sys.prefix)')" >&2
fi

# 1. system packages (optional: WordNet enables the wordnet lemmatiser and TESLA's synonym matching)
if command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo -n"
  if [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; then
    if ! dpkg -s wordnet-base wordnet-sense-index >/dev/null 2>&1; then
      $SUDO apt-get update -qq || echo "warning: apt-get update failed; trying install anyway" >&2
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        wordnet-base wordnet-sense-index >/dev/null \
        || echo "warning: could not install WordNet from apt; WordNet features will be unavailable" >&2
    fi
  else
    echo "note: not root and no sudo: skipping Debian's WordNet packages" >&2
  fi
fi

# 2. build tools first: fairseq-fixed builds C++ extensions against the torch we install, without an
#    isolated build environment (which would pull a multi-gigabyte CUDA torch)
$PY -m pip install --quiet --upgrade pip "setuptools>=64" wheel cython "numpy>=1.24"
$PY -m pip install --quiet torch==2.13.0
$PY -m pip install --quiet --no-build-isolation -e ".[nmt,dev,slurm]"

# 3. make WordNet readable by NLTK offline (writes the lexnames file Debian does not ship)
$PY -m mwemt.wordnet
$PY -c "import mwemt, fairseq, torch; print(f'mwemt {mwemt.__version__} installed (torch {torch.__version__}, fairseq {fairseq.__version__})')"
