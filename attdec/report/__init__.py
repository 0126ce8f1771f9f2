"""Reporters: tables (report.common), JSON/CSV, and writers of other formats."""

from attdec.model.record import Record

# Vocabularies and defaults the command line shows in --help (kept here so that --help imports no numpy).
TRACE_GRANULARITIES = ("inst", "state", "wave")  # slices under each wave in a Chrome trace
TRACE_CLOCKS = ("cycles", "realtime")  # trace timestamps: shader cycles as µs, or realtime µs
COMPARE_FORMATS = ("table", "json", "csv", "md")  # what `diff` and `noise` write (report.compare)


class Limits(Record):
    """What an HTML report may carry; past these the page shows aggregated or sampled data and says so."""

    insts: int = 100_000  # instructions embedded for hovering, over all dispatches
    runs: int = 100_000  # timeline runs per colouring (state, category), over all dispatches
    rows: int = 2_000  # rows per hotspot table
    occupancy_points: int = 2_000  # per shader engine
    source_context: int = 20  # source text lines shown around the executed ones
