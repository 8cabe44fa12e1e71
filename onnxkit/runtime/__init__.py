"""The runtime core: plan a model once, run it many times."""
