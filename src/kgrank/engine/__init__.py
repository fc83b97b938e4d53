"""The rank engine: one scoring loop over a model's score blocks and what consumes them.

``score_pass`` owns batching, the device, inference mode, the id checks, the half-size
retry when memory runs out and the progress bar; ``ranks`` (filtered ranks, sampled
candidates), ``ties`` (tie widths under tolerances) and the studies' passes are consumers
of its blocks. ``scoring`` builds a scorer for a model, ``candidates`` the filter index.
"""
