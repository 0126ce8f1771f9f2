"""Analyses over the record model: stall classification, hotspots, wave listings."""
