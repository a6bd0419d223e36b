"""Tiny Sentence Transformers models built in code (no download): a word-level tokenizer over
a small vocabulary and a StaticEmbedding (the mean of the words' vectors), scored by cosine."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
         "upsilon phi chi psi omega").split()


def model(vectors: dict[str, list[float]] | None = None, seed: int = 0, dim: int = 8):
    """A SentenceTransformer whose word vectors are ``vectors`` (others random with ``seed``)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = ["[UNK]", *WORDS]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    weights = np.random.default_rng(seed).normal(size=(len(vocab), dim)).astype(np.float32)
    for word, vec in (vectors or {}).items():
        weights[vocab.index(word)] = np.asarray(vec, np.float32)
    return SentenceTransformer(modules=[StaticEmbedding(tok, embedding_weights=weights)], device="cpu")


def collection(n_docs: int = 40, n_queries: int = 8, seed: int = 1):
    """Random texts over the vocabulary: queries, corpus and binary relevance sets."""
    rng = np.random.default_rng(seed)
    corpus = {f"d{i:02d}": " ".join(rng.choice(WORDS, size=rng.integers(2, 6))) for i in range(n_docs)}
    queries = {f"q{i}": " ".join(rng.choice(WORDS, size=rng.integers(1, 3))) for i in range(n_queries)}
    relevant = {q: {str(d) for d in rng.choice(list(corpus), size=rng.integers(1, 5), replace=False)} for q in queries}
    return queries, corpus, relevant
