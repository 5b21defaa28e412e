"""Problem sets rlvr ships, with ground truth, and their generators.

Each generator is deterministic in its seed and returns rows in rlvr.schema.PROBLEMS' shape.
"""
