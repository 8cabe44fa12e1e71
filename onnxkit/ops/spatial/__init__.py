"""Spatial operators: resampling (Resize, Upsample, GridSample, AffineGrid), regions of
interest (RoiAlign) and box selection (NonMaxSuppression).

Per-axis resampling (coordinate transforms, nearest rounding, linear / cubic filters)
lives once in ``_resample``.
"""
