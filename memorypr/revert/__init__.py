"""Reverts: a merged KPR is undone by proposing a new KPR that restores what it replaced.

A proposer like any other: it reads the fact store (memorypr.facts selectors) and submits
through memorypr.pulls, so it sits above both and neither imports it.
"""
