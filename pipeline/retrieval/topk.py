"""Top-k selection with a stable tie-break on row id."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def top_k(
    scores: npt.NDArray[np.floating], rows: npt.NDArray[np.int64], k: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The k best (rows, scores), highest score first, equal scores by ascending row."""
    if k <= 0 or len(scores) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if len(scores) > k:
        # Keep everything tied with the k-th score so the tie-break below sees all of them.
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = np.flatnonzero(scores >= kth)
        scores, rows = scores[keep], rows[keep]
    order = np.lexsort((rows, -scores))[:k]
    return rows[order], scores[order].astype(np.float32)
