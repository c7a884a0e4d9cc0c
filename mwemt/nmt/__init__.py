"""Factored NMT on fairseq: the --user-dir plugin, training and translation."""

import logging as _logging

# Importing fairseq imports every task it has; its text-to-speech task logs "Please install tensorboardX" (INFO)
# when tensorboardX is missing, which nothing in mwemt uses: that one logger is silenced before any module of
# this package imports fairseq (`mwemt prepare` printed it on every run).
_logging.getLogger("fairseq.tasks.text_to_speech").setLevel(_logging.WARNING)
