"""Where the tests find the repository and the shared corpus of real binlogs."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "mysql"

# a test that reads ../shared/corpus; tests/conftest.py skips it when the corpus is absent
needs_corpus = pytest.mark.corpus


def corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.is_file())
