"""attdec: decode AMD GPU thread traces (SQTT) and rank where kernels stall."""

__version__ = "0.1.0"
