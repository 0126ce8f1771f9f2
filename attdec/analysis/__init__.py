"""Analyses over the record model (model in, results out, no I/O): stall classification, hotspots, waves.

The option vocabularies below live here, not in the modules that use them, so that the command line can
list them without importing numpy.
"""

BY = ("line", "instruction", "file")  # what hotspots ranks
FRAMES = ("inner", "outer")  # which frame of an inline chain a line is charged to
WAVE_SORT_KEYS = ("position", "begin", "end", "duration", "instructions", "stall", "share", "cu")
