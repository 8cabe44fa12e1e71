"""NonMaxSuppression: per batch and class, greedily keep the best-scoring boxes and drop
boxes that overlap a kept one too much.

    for b, c:  candidates = boxes with score > score_threshold (all without one),
                            best score first, ties by lower index
               while candidates and len(kept) < max_output_boxes_per_class:
                   keep the first; drop candidates with IoU(first, box) > iou_threshold
    selected_indices = [[b, c, box], ...] in that order (int64, shape (K, 3))

center_point_box=0: boxes are [y1, x1, y2, x2] (any two opposite corners);
center_point_box=1: [x_center, y_center, width, height]. Boxes without area never suppress.
https://onnx.ai/onnx/operators/onnx__NonMaxSuppression.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.registry import op


def corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    """(N, 4) boxes -> (N, 4) as [y_min, x_min, y_max, x_max]."""
    b = boxes.astype(np.float64)
    if center_point_box:
        xc, yc, w, h = b.T
        return np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], axis=1)
    y1, x1, y2, x2 = b.T
    return np.stack([np.minimum(y1, y2), np.minimum(x1, x2),
                     np.maximum(y1, y2), np.maximum(x1, x2)], axis=1)


def iou_with(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """IoU of one [y_min, x_min, y_max, x_max] box with each row of ``others``."""
    top = np.maximum(box[0], others[:, 0])
    left = np.maximum(box[1], others[:, 1])
    bottom = np.minimum(box[2], others[:, 2])
    right = np.minimum(box[3], others[:, 3])
    inter = np.clip(bottom - top, 0, None) * np.clip(right - left, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area + areas - inter
    valid = (inter > 0) & (area > 0) & (areas > 0) & (union > 0)
    return np.where(valid, inter / np.where(valid, union, 1.0), 0.0)


def _scalar(t, default, kind):
    if t is None or np.asarray(t).size == 0:
        return default
    return kind(np.asarray(t).reshape(-1)[0])


@op("NonMaxSuppression", 10, 11)
def non_max_suppression(boxes, scores, max_output_boxes_per_class=None, iou_threshold=None,
                        score_threshold=None, *, center_point_box=0):
    limit = _scalar(max_output_boxes_per_class, 0, int)
    iou_limit = _scalar(iou_threshold, 0.0, float)
    min_score = _scalar(score_threshold, None, float)
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 \
            or scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
        raise KernelError(f"NonMaxSuppression takes boxes (B, N, 4) and scores (B, C, N), got "
                          f"{list(boxes.shape)} and {list(scores.shape)}")
    selected = []
    for b in range(boxes.shape[0]):
        box = corners(boxes[b], center_point_box)
        for c in range(scores.shape[1]):
            s = scores[b, c].astype(np.float64)
            order = np.lexsort((np.arange(len(s)), -s))  # best score, then lower index
            if min_score is not None:
                order = order[s[order] > min_score]
            kept = 0
            while order.size and kept < limit:
                best = order[0]
                selected.append((b, c, best))
                kept += 1
                rest = order[1:]
                order = rest[iou_with(box[best], box[rest]) <= iou_limit]
    return np.array(selected, dtype=np.int64).reshape(-1, 3)
