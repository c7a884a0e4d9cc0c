"""Source-side preprocessing: tokenize, lemmatize, identify MWEs, encode them, subword."""
