"""Significance of before/after deltas measured over a few runs: a moderated t-test per row and
Benjamini-Hochberg control of false discoveries over a table's rows.

With two or three runs a side, a row's own spread is a poor estimate of its noise (often 0 or tiny by
chance), so each row's variance is pooled with the variances of all rows of its table as Smyth's
empirical Bayes ("moderated t", limma) does: the rows' log-variances give a prior variance `s0^2` and how
many degrees of freedom `d0` it is worth; a row's moderated variance is (d0 s0^2 + d s^2) / (d0 + d),
with d0 + d degrees of freedom. Rows differ in how noisy they are (a wait of thousands of cycles against
a few ALU cycles), so the moderated variance is never taken below the row's own: pooling lifts rows that
look too quiet and never quiets a noisy one. Then the rows whose p-values pass Benjamini-Hochberg at
`FDR` are significant: among the rows called significant, the expected share of unchanged ones is at most
`FDR`, kept strict because few runs make the t-test's normal model a rough one.
"""

from __future__ import annotations

import math

import numpy as np

from attdec.model.record import Record

FDR = 0.01  # false discovery rate over one table's rows: few runs, so a strict one
MAX_DF = 60  # t statistics with more degrees of freedom are read with this many (slightly conservative)


def digamma(x: float) -> float:
    acc = 0.0
    while x < 6:
        acc -= 1 / x
        x += 1
    f = 1 / (x * x)
    return acc + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f / 252))


def trigamma(x: float) -> float:
    acc = 0.0
    while x < 6:
        acc += 1 / (x * x)
        x += 1
    f = 1 / (x * x)
    return acc + 1 / x + f / 2 + f / x * (1 / 6 - f * (1 / 30 - f / 42))


def trigamma_inverse(v: float) -> float:
    """The y > 0 with trigamma(y) = v (trigamma falls monotonically), by bisection on log y."""
    lo, hi = -30.0, 30.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if trigamma(math.exp(mid)) > v:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


def t_two_sided(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """P(|T| >= |t|) for Student's t with integer `df` >= 1 (Abramowitz & Stegun 26.7.3-4, exact)."""
    t = np.abs(np.asarray(t, float))
    df = np.asarray(df, np.int64)
    theta = np.arctan(t / np.sqrt(df))
    c, s = np.cos(theta) ** 2, np.sin(theta)
    odd = df % 2 == 1
    terms = np.where(odd, (df - 3) // 2, (df - 2) // 2)  # highest power of c in the series
    coef = np.ones_like(t)
    series = np.ones_like(t)
    power = np.ones_like(t)
    for k in range(1, int(terms.max(initial=0)) + 1):
        coef = coef * np.where(odd, 2 * k / (2 * k + 1), (2 * k - 1) / (2 * k))
        power = power * c
        series = series + np.where(k <= terms, coef * power, 0.0)
    odd_a = np.where(df == 1, 2 * theta / np.pi, 2 / np.pi * (theta + s * np.sqrt(c) * series))
    a = np.where(odd, odd_a, s * series)
    return np.clip(1 - a, 0.0, 1.0)


def t_critical(p: float, df: np.ndarray) -> np.ndarray:
    """The |t| whose two-sided p-value is `p`, per `df` (bisection)."""
    lo, hi = np.zeros(len(df)), np.full(len(df), 1e4)
    for _ in range(40):
        mid = (lo + hi) / 2
        above = t_two_sided(mid, df) > p
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return hi


def prior(var: np.ndarray, df: np.ndarray) -> tuple[float, float]:
    """(s0^2, d0) from rows' variances `var` with `df` degrees of freedom each (rows with df > 0 and
    var > 0 count); (0, 0) when fewer than two such rows: no prior."""
    keep = (df > 0) & (var > 0)
    if keep.sum() < 2:
        return 0.0, 0.0
    v, d = var[keep], df[keep] / 2
    e = np.log(v) - np.array([digamma(x) for x in d]) + np.log(d)
    mean = float(e.mean())
    spread = float(((e - mean) ** 2).sum() / (len(e) - 1)) - float(np.mean([trigamma(x) for x in d]))
    if spread <= 0:
        return math.exp(mean), math.inf
    d0 = 2 * trigamma_inverse(spread)
    return math.exp(mean + digamma(d0 / 2) - math.log(d0 / 2)), d0


class Verdict(Record):
    """One row's verdict: `noise` the standard error of its delta (None: no estimate), `p` the
    two-sided p-value, `threshold` the |delta| the table's cutoff asks of it, `significant`."""

    noise: float | None
    p: float | None
    threshold: float | None
    significant: bool | None


def judge_rows(before: list[np.ndarray], after: list[np.ndarray]) -> list[Verdict]:
    """Per row i, runs before[i] vs runs after[i] (1-d arrays): moderated t-test on the means, pooled over
    all rows given, with Benjamini-Hochberg at `FDR` over them. A row without any variance estimate (one
    run a side and no other row to pool with) gets None; an unchanged mean is never significant."""
    n = len(before)
    if not n:
        return []
    nb = np.array([len(b) for b in before], float)
    na = np.array([len(a) for a in after], float)
    delta = np.array([a.mean() - b.mean() for b, a in zip(before, after)])
    ss = np.array([((b - b.mean()) ** 2).sum() + ((a - a.mean()) ** 2).sum() for b, a in zip(before, after)])
    df = nb + na - 2
    var = np.divide(ss, df, out=np.zeros(n), where=df > 0)
    s0, d0 = prior(var, df)
    if math.isinf(d0):
        mod, total_df = np.full(n, s0), np.full(n, np.inf)
    else:
        mod = np.divide(d0 * s0 + df * var, d0 + df, out=np.zeros(n), where=d0 + df > 0)
        total_df = d0 + df
    mod = np.maximum(mod, var)  # never quieter than the row's own runs
    se = np.sqrt(mod * (1 / nb + 1 / na))
    known = total_df > 0
    dfi = np.minimum(np.floor(np.where(np.isfinite(total_df), total_df, MAX_DF)), MAX_DF).astype(np.int64)
    dfi = np.maximum(dfi, 1)
    p = np.ones(n)
    moved = known & (delta != 0)
    exact = moved & (se == 0)  # every run of the table repeated exactly: any change is real
    test = moved & (se > 0)
    p[exact] = 0.0
    p[test] = t_two_sided(delta[test] / se[test], dfi[test])
    # Benjamini-Hochberg over the rows with an estimate
    idx = np.flatnonzero(known)
    m = len(idx)
    sig = np.zeros(n, bool)
    cut = FDR / max(m, 1)
    if m:
        order = idx[np.argsort(p[idx], kind="stable")]
        passed = np.flatnonzero(p[order] <= FDR * np.arange(1, m + 1) / m)
        if len(passed):
            k = passed[-1] + 1
            sig[order[:k]] = True
            cut = FDR * k / m
    sig &= moved
    thr = np.full(n, np.nan)
    if known.any():
        thr[known] = t_critical(cut, dfi[known]) * se[known]
    return [
        Verdict(float(se[i]), float(p[i]), float(thr[i]), bool(sig[i]))
        if known[i]
        else Verdict(None, None, None, None if delta[i] else False)
        for i in range(n)
    ]
