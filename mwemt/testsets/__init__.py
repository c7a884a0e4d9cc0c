"""Test sets: word alignment, the MWE translation table, and building, selecting and reading MWE test sets."""
