"""Options and helpers several commands share."""
from __future__ import annotations

import click

FORMATS = click.Choice(["table", "json", "csv"])


def wave_filter_options(f, cu: bool = False):
    """--se/--simd/--slot/--wave (repeatable) and optionally --cu."""
    opts = [click.option("--se", type=int, multiple=True, help="Only waves of this shader engine (repeatable)."),
            click.option("--simd", type=int, multiple=True, help="Only waves of this SIMD (repeatable)."),
            click.option("--slot", type=int, multiple=True, help="Only waves in this wave slot (repeatable)."),
            click.option("--wave", type=int, multiple=True,
                         help="Only the n-th wave of its slot, the wv<N> of the file name (repeatable).")]
    if cu:
        opts.append(click.option("--cu", type=int, multiple=True, help="Only waves of this CU (repeatable)."))
    for o in reversed(opts):
        f = o(f)
    return f


def make_wave_filter(se=(), simd=(), slot=(), wave=(), cu=()):
    """A Wave -> bool predicate, or None when no restriction was asked for."""
    if not (se or simd or slot or wave or cu):
        return None

    def keep(w) -> bool:
        return ((not se or w.se in se) and (not simd or w.simd in simd) and (not slot or w.slot in slot)
                and (not wave or w.seq in wave) and (not cu or w.cu in cu))
    return keep
