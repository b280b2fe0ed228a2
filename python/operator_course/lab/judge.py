"""Deciding whether a lab kernel is right: the inputs it is given, the comparison with torch, and
what a student reads when it is not. The same code judges a kernel in the student's notebook
(immediate feedback) and in the grader (the grade, where the inputs are drawn by the grader, the
kernel runs in a sandbox and its guarded output comes back as data), so both say the same words."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Callable

import torch

from operator_runtime_testing.assertions import assert_matches_torch
from operator_runtime_testing.operators import get
from operator_runtime_testing.tolerances import TOLERANCES
from .cases import SHAPES, dtypes, SPECIAL, draw, output_shape, reference, special_inputs
from .kernels import guarded, guarded_input, unguard


class Wrong(AssertionError):
    """A failed check; ``mask`` marks the wrong elements of the output (for the picture)."""

    def __init__(self, text: str, mask: torch.Tensor | None = None):
        super().__init__(text)
        self.mask = mask


@dataclass
class Case:
    dtype: torch.dtype
    shape: tuple
    inputs: list[torch.Tensor]  # on the CPU; a runner moves them to its device
    probe: str = ""  # "": an input judged against torch; ROW_ENDS: the row-ends probe (judged on its own terms)

    def __str__(self) -> str:
        return f"{self.shape} {str(self.dtype).removeprefix('torch.')}"

    def output(self, op: str, device: str) -> tuple[torch.Tensor, torch.Tensor]:
        """(guarded buffer, the output view a kernel writes): what ``judge`` takes is the buffer."""
        return guarded(output_shape(op, self.shape), self.dtype, device)

    def inputs_on(self, device: str) -> list[torch.Tensor]:
        return [guarded_input(t, device) for t in self.inputs]


def lab_cases(op: str, device: str, seed: int | None = None, lang: str = "cuda",
              secret: Callable[[random.Random], tuple] | None = None) -> list[Case]:
    """Every lab input for ``op`` on ``device``'s dtypes (for kernels in ``lang``); fresh random
    values unless seeded. ``secret``: the grader's run adds its own shapes (the instructor's draw,
    grader/secret_shapes.py), drawn from ``seed`` (which a student never sees), to the public ones
    the notebook checks."""
    seed = torch.seed() if seed is None else seed
    gen = torch.Generator().manual_seed(seed)
    kinds = dtypes(op, device, lang)
    shapes = list(SHAPES[op]) + (list(secret(random.Random(f"{seed}:{op}"))) if secret else [])
    shapes = _tma_shapes(shapes) if get(op).kind == "matmul" and (lang, device) == ("tilelang", "cuda") else shapes
    cases = [Case(dtype, shape, draw(op, shape, dtype, "cpu", gen)) for dtype in kinds for shape in shapes]
    for dtype in kinds:
        special = special_inputs(op, dtype, gen)
        if special:
            cases.append(Case(dtype, tuple(special[0].shape), special))
    # the smallest failing input is reported first; for one shape, float32 before 16-bit (a stable sort)
    cases = sorted(cases, key=lambda c: math.prod(c.shape))
    if lang == "tilelang" and get(op).kind == "rows":  # before (1, 1), whose NaN would say less
        cases.insert(0, row_ends_probe(kinds[0], gen))
    return cases


# The row-ends probe. A tile loop over a row reads whole tiles, and a tile rarely ends where the row
# ends: a load the kernel indexes itself (X[row, k * TILE + j]) without `k * TILE + j < row_len`
# reads the next row, or past the tensor. The kernel sees a compact (rows, row_len) tensor, so the
# check cannot pad each row with a guard of its own (TileLang's T.Tensor takes no row stride);
# instead the probe's rows are the guard: rows 0 and 1 hold the same values A, row 2 is poison
# (+inf and NaN alternating: +inf survives a max that drops NaN, as CUDA's fmaxf does, and NaN a
# softmax sum that +inf would only turn into 0s), and the input's own NaN guard follows. Row 0
# is followed by row 1 (finite values), row 1 by the poison: a kernel that reads past a row's end
# gets a finite result for row 0 (maybe wrong) and a non-finite one for row 1. The rows are long
# (PROBE_ROW_LEN) so that row 0's overrun ends inside row 1 for any tile up to 4096 wide. Only that
# signature fails the probe; every other mistake is left to the ordinary inputs that follow, so
# the probe never changes what they say. The lab checks of TileLang row kernels run it first:
# with no row guard, (1, 1) would read the input's NaN guard and look like an output never
# written. (The CUDA checks do not run it: off a GPU their CPU path (cuda_cpu.py) watches every
# load, and the last row's overrun, past the input's end, is reported with its thread and line.)
ROW_ENDS = "row_ends"
PROBE_ROW_LEN = 3001  # odd and prime: no tile width divides it


def row_ends_probe(dtype: torch.dtype, generator: torch.Generator) -> Case:
    a = torch.randn(PROBE_ROW_LEN, generator=generator)
    poison = torch.full((PROBE_ROW_LEN,), float("inf"))
    poison[1::2] = float("nan")
    x = torch.stack([a, a, poison]).to(dtype)
    return Case(dtype, tuple(x.shape), [x], probe=ROW_ENDS)


def _tma_shapes(shapes: list[tuple]) -> list[tuple]:
    """The matmul shapes a TileLang kernel can take on sm_90: T.copy into shared tiles lowers to
    TMA there, whose descriptors need 16-byte row strides and non-empty operands. On the H200 the
    lab's (1, 1, 1), (7, 9, 13) ... all failed with "Failed to initialize the TMA descriptor", also
    with TileLang's tl.disable_tma_lower (a GPU probe of 2026-12-03). So N and K are rounded up
    to multiples of 8 (16 bytes of a 16-bit row), which keeps every tile's tails (72 is no
    multiple of a 64-wide tile), and empty operands are left to the C target (a laptop)."""
    up = lambda v: -(-v // 8) * 8  # noqa: E731
    return list(dict.fromkeys((m, up(n), up(k)) for m, n, k in shapes if m and n and k))


# Hints keyed by what the wrong elements look like; {lang} entries differ between TileLang and CUDA.
HINTS = {
    "past_end": {"tilelang": "guard the tail: a tile rarely divides n, so skip the indices >= n (`if i < n:`); "
                             "T.copy guards its own tiles, stores you write yourself are not guarded",
                 "cuda": "every thread must check its index against n before it writes (`if (i < n)` or the "
                         "grid-stride loop's condition)"},
    "tail": {"tilelang": "your tiles do not cover n: check which tiles each block moves (one per block: launch "
                         "T.ceildiv(n, TILE) blocks; STEPS per block: tile bx * STEPS + k; on a fixed grid of BLOCKS "
                         "blocks: tile k * BLOCKS + bx in each of T.ceildiv(n, BLOCKS * TILE) rounds), and skip "
                         "indices >= n",
             "cuda": "the launcher starts a fixed number of blocks: loop with a grid-stride loop "
                     "(i += gridDim.x * blockDim.x) until i >= n"},
    "low_precision": {"tilelang": "the float32 input of this shape passed: accumulate in float32 "
                                  "(T.cast(x, \"float32\")) and round to the output dtype once, at the end",
                      "cuda": "the float32 input of this shape passed: accumulate in float (static_cast<float>) and "
                              "round to the output type once, at the end"},
    "shifted": {"tilelang": "your output is torch's shifted by {k} position(s): check the index you read or write",
                "cuda": "your output is torch's shifted by {k} position(s): check the index you read or write"},
    "every": {"tilelang": "check the indexing (rows and columns swapped?) and the formula",
              "cuda": "check the indexing (rows and columns swapped?) and the formula"},
    # a reduction whose every result is wrong but finite: its terms are read, the partials do not all arrive
    "every_sum": {"tilelang": "every sum is finite but wrong: partial sums are lost or counted twice. Check that "
                              "every partial reaches the result: the reduction covers the whole row (T.reduce_sum "
                              "over the tile's full width, clear=True only for the first tile) and the accumulator "
                              "starts at 0 for each row",
                  "cuda": "every sum is finite but wrong: partial sums are lost or counted twice. Check the last "
                          "steps of the reduction: a tree loop must run down to s = 1 (`s > 0`, not `s > 1`), the "
                          "shuffle offsets down to 1, and each warp's partial must be added in exactly once"},
    # one element: no index to get wrong
    "one_element": {"tilelang": "with a single element there is no indexing to get wrong: look at what is "
                                "computed for it (the formula, the accumulator's start, a loop that stops one step "
                                "early or never runs)",
                    "cuda": "with a single element there is no indexing to get wrong: look at what is computed "
                            "for it (the formula, the accumulator's start, a loop that stops one step early or never "
                            "runs, a thread that returns before it writes)"},
    # the last rows of a one-value-per-row output
    "tail_rows": {"tilelang": "the last rows have no result: the grid must cover every row (one program per row: "
                              "T.Kernel(rows); several rows per program: T.ceildiv(rows, ROWS) programs, skipping "
                              "rows >= rows)",
                  "cuda": "the last rows have no result: one block per row must cover every row, and each "
                          "block's result must be written by one of its threads"},
    # the row-ends probe (row_ends_probe): a load past the end of a row reached a result
    "row_ends": {"tilelang": "a tile rarely ends where the row ends: guard every load you index yourself, "
                             "T.if_then_else(k * TILE + j < row_len, X[row, k * TILE + j], identity), with your "
                             "reduction's identity (0 for a sum, the lowest float for a max), or let T.copy load "
                             "the tile (it loads 0 past the row's end: right for a sum; before a max, set those "
                             "lanes to the lowest float)",
                 "cuda": "check every load against the row's length (`j < row_len`): a thread's last strided "
                         "element, or an unrolled round's, can lie past the row's end"},
    "long_rows": {"tilelang": "rows up to {ok} long passed: the part of the row beyond one tile (or one thread's "
                              "share) is lost or counted twice",
                  "cuda": "rows up to {ok} long passed: the partial results of some threads are lost: every warp's "
                          "partial must reach the block's result (shared memory, __syncthreads, then one warp merges)"},
}

def launch_failed(who: str, shape: str, error: Exception) -> str:
    """What a student reads when their kernel could not even start on an input."""
    text = f"{who} could not run on shape {shape}: {type(error).__name__}: {error}"
    if re.search(r"invalid (argument|configuration)|InvalidValue|grid", str(error)):
        text += ("\nHint: a launch with 0 blocks is invalid: n // TILE is 0 when n < TILE; launch T.ceildiv(n, TILE) "
                 "blocks (and no more threads than a block can hold).")
    return text


def judge(op: str, name: str, case: Case, buffer, lang: str = "tilelang", passed: list[Case] = ()) -> None:
    """Raises AssertionError naming the input when the guarded ``buffer`` (Case.output) does not
    hold torch's answer for ``case``, or its guards were written. ``passed``: the cases that
    passed before this one (smaller inputs), for the hints."""
    out_shape = output_shape(op, case.shape)
    out, before, after = unguard(buffer, out_shape)
    where = f"{op} ({name}) is wrong for shape {case}"
    if out is None:
        raise AssertionError(f"{op} ({name}) produced no output for shape {case}")
    if case.probe == ROW_ENDS:
        return _judge_row_ends(op, where, case, out, lang)
    passed = [p for p in passed if not p.probe]  # the hints speak of ordinary inputs only
    # only the read's mark past the output (cpu_tiles.mark_out_of_bounds_reads): stores past it say more
    if after == [1] and not before and (k := _out_of_bounds_read(buffer, out.numel())) is not None:
        names = get(op).cuda.pointers if get(op).cuda else ()
        what = f"its input {k + 1}" + (f" ({names[k]})" if k < len(names) else "")
        past_end = {**HINTS, **get(op).hints}
        hint = past_end.get(f"past_end_read_{names[k]}" if k < len(names) else "", past_end.get(
            "past_end_read", past_end["past_end"]))[lang]
        raise Wrong(f"{where}: it reads {what} outside its shape: an index at or past the size of one of its "
                    "dimensions (or below 0). Here it read the check's guard or the next row's values, whatever became "
                    "of them (a score masked afterwards, a column never used); on a GPU it reads another row, "
                    f"another tensor, or faults.\nHint: {hint}.")
    if before or after:
        past_end = {**HINTS, **get(op).hints}["past_end"][lang]  # the operator's own words first
        raise Wrong(f"{where}: it wrote outside the output.\n" + _outside(before, after, out.numel(), past_end))
    expected = reference(op, *case.inputs).to(case.dtype)
    extra = _extra_atol(op, case)
    try:
        assert_matches_torch(out.cpu(), expected, exact=get(op).exact, extra_atol=extra)
    except AssertionError as e:
        text, mask = diagnose(out.detach().cpu(), expected, op, case, lang, list(passed))
        raise Wrong(f"{where}: {e}\n{text}", mask) from None


def _out_of_bounds_read(buffer, numel: int) -> int | None:
    """The input a TileLang program read out of bounds on the C target (cpu_tiles.mark_out_of_bounds_reads
    marks it in the output's guard, just past its last element), else None."""
    from .cpu_tiles import OUT_OF_BOUNDS_MARK
    from .kernels import GUARD

    value = float(buffer[GUARD + numel])
    k = OUT_OF_BOUNDS_MARK - value
    return int(k) if k == int(k) and 0 <= k < 8 else None


def _judge_row_ends(op: str, where: str, case: Case, out: torch.Tensor, lang: str) -> None:
    """The row-ends probe (row_ends_probe): fails only when row 0's result is finite and row 1's
    is not, where torch's is finite: row 1's result then holds values from past its end."""
    got = out.detach().cpu().double()
    want = reference(op, case.inputs[0][:1]).to(case.dtype).double()[0]  # the answer for A, rows 0 and 1
    first, second = got[0], got[1]
    poisoned = ~second.isfinite() & want.isfinite()
    if not (bool(first.isfinite().all()) and bool(poisoned.any())):
        return  # not the signature: whatever else is wrong, the ordinary inputs say it
    n = case.shape[-1]
    if second.dim() == 0:  # one value per row
        seen = (f"row 1's result is {second.item():.6g} (torch's: {want.item():.6g}), while row 0's is finite "
                f"({first.item():.6g})")
    else:
        j = int(poisoned.nonzero()[0])
        seen = (f"{int(poisoned.sum())} of row 1's {n} results are not finite (element {j}: {second[j].item():.6g}, "
                f"torch's: {want[j].item():.6g}), while row 0's are all finite")
    mask = torch.zeros(got.shape, dtype=torch.bool)
    mask[1] = poisoned
    raise Wrong(f"{where}: your kernel reads past the end of the row.\n"
                f"Rows 0 and 1 of this input hold the same {n} values; in memory row 0 is followed by row 1, and "
                f"row 1 by +inf and NaN (the check's guard, row 2): {seen}. Values beyond column {n - 1} of row 1 "
                "reached its result. On a GPU such a load reads the next row, or memory past the tensor's end.\n"
                "Hint: " + HINTS["row_ends"][lang] + ".", mask)


def _extra_atol(op: str, case: Case):
    """Sums carry float32 accumulation error that grows with the terms added (tolerances.py; each
    operator's record says how: operators/<op>.py)."""
    return get(op).extra_atol(case.inputs)


def _outside(before: list[int], after: list[int], numel: int, past_end: str) -> str:
    lines = []
    if after:
        lines.append(f"{len(after)} element(s) past the end of the output were written (the output has {numel}; "
                     f"the farthest write is {after[-1]} past its last element).")
    if before:
        lines.append(f"{len(before)} element(s) before the start of the output were written (up to {before[-1]} "
                     "before its first element): an index went negative.")
    lines.append("On a GPU such writes land in someone else's memory. Hint: " + past_end + ".")
    return "\n".join(lines)


def diagnose(got: torch.Tensor, want: torch.Tensor, op: str, case: Case, lang: str = "tilelang",
             passed: list[Case] = ()) -> tuple[str, torch.Tensor]:
    """(which elements are wrong, in words a student can act on, with the first few of them;
    the mask of wrong elements)."""
    exact, special = get(op).exact, SPECIAL.get(op) == case.shape
    # evidence from inputs that passed: an empty output (M = 0, a batch of 0) passes whatever the kernel does
    passed = [p for p in passed if not p.probe and math.prod(output_shape(op, p.shape)) > 0]
    g, w = got.double().reshape(want.shape), want.double()
    rtol, atol = (0.0, 0.0) if exact else TOLERANCES[want.dtype]
    bound = atol + torch.as_tensor(_extra_atol(op, case), dtype=torch.float64).expand_as(w) + rtol * w.abs()
    close = (g - w).abs() <= bound
    wrong = ~(close | (g.isnan() & w.isnan()) | ((g == w) & w.isinf()))
    count = int(wrong.sum())
    if count == 0:
        return "", wrong
    record = get(op)
    hint = {k: v[lang] for k, v in {**HINTS, **record.hints}.items()}  # the operator's own words first
    lines = [f"{count} of {w.numel()} elements are wrong."]
    unwritten = wrong & g.isnan() & ~w.isnan()
    if int(unwritten.sum()) == count and not special:
        if "unwritten" in record.hints:
            # an operator whose NaN is most often computed (softmax's -inf - -inf, attention's 0 / 0): its hint
            # follows, and "never wrote them" first sent a student of lab 6 looking for a missing store
            lines.append("They are NaN where torch's are finite: your kernel computed NaN there, or never wrote "
                         "them (the check fills the output with NaN).")
        else:
            lines.append("They are NaN where torch's are finite: the check fills the output with NaN, so most likely "
                         "your kernel never wrote them, or added into them (`+=`, atomicAdd) without setting them "
                         "first: an output is not zeroed for you (or it computed NaN there).")
        if "empty_rows" in hint and case.shape[-1] == 0:
            lines.append("Hint: " + hint["empty_rows"] + ".")
        elif "unwritten" in hint:
            lines.append("Hint: " + hint["unwritten"] + ".")
    rows = wrong.reshape(-1, w.shape[-1]) if w.dim() and w.shape[-1] else wrong.reshape(1, -1)
    bad_rows = rows.any(-1).nonzero().flatten().tolist()
    flat = wrong.flatten()
    first_bad = int(flat.nonzero()[0])
    same_shape_f32 = any(p.shape == case.shape and p.dtype == torch.float32 for p in passed)
    shift = _shift(g.flatten(), w.flatten(), bound.flatten())
    large = special and not record.special_rows and "special" in hint  # a kind whose special input is all large values
    alternative = _alternative(record, case, g, bound)
    if alternative:  # the output is the lab's call computed another way: name the difference
        lines.append("Hint: " + hint[alternative] + ".")
    elif record.kind == "matmul":
        lines += _matmul_hints(g, w, wrong, case, hint, list(passed), same_shape_f32)
    elif case.dtype != torch.float32 and same_shape_f32 and record.kind == "rows":  # row ops accumulate in f32
        lines.append("Hint: " + hint["low_precision"] + ".")
    elif shift:
        lines.append("Hint: " + hint["shifted"].format(k=shift) + ".")
    elif w.numel() == 1 and not bool(unwritten.any()):  # written, and wrong: its arithmetic, not its place
        lines.append("The one element is wrong. Hint: " + hint["one_element"] + ".")
    elif w.dim() == 1 and bool(flat[first_bad:].all()) and (count < w.numel() or int(unwritten.sum()) == count):
        if record.kind == "rows":  # one value per row (reduce_sum's output): the last rows, not a tile's tail
            if count < w.numel():
                lines.append(f"Only the last {count} rows' results are wrong. Hint: " + hint["tail_rows"] + ".")
        else:
            which = "all of them: n is smaller than one tile" if count == w.numel() else "the rest are right"
            lines.append(f"Only the tail is wrong: the last {count} elements ({which}). Hint: " + hint["tail"] + ".")
    elif w.dim() >= 3 and w.shape[-2] > 1 and (positions := _positions_hint(wrong, hint, g)):  # attention's
        lines.append(positions)
    elif count == w.numel() and not large and not any("Hint:" in line for line in lines):
        # (on the special input of large values its own hint says more; after the NaN hint, the generic one misleads)
        sums = record.kind == "rows" and w.shape != case.shape and bool(g.isfinite().all())
        lines.append("Every element is wrong. Hint: " + hint["every_sum" if sums else "every"] + ".")
        longest = max((p.shape[-1] for p in passed if len(p.shape) == 2 and p.shape[0]), default=0)
        if record.kind == "rows" and 1 < longest < case.shape[-1]:
            lines.append("Hint: " + hint["long_rows"].format(ok=longest) + ".")
    elif w.dim() == 2 and rows.shape[0] > 1 and all(bool(rows[r].all()) for r in bad_rows):
        lines.append(f"Whole rows are wrong: rows {bad_rows[:8]}{' ...' if len(bad_rows) > 8 else ''} "
                     f"of {rows.shape[0]}.")
    if special:
        lines += [f"Row {r}: {record.special_rows[r]}." for r in bad_rows if r in record.special_rows]
        if large and not any("Hint:" in line for line in lines):  # no other hint said why
            lines.append("This input holds large values. Hint: " + hint["special"] + ".")
    elif "row_sums" in hint and w.dim() == 2:
        lines += _row_sums(g, w, hint["row_sums"], case.dtype)
    shown = flat.nonzero().flatten()[:5].tolist()
    lines.append("First wrong elements (flat index: got, expected): "
                 + "; ".join(f"{i}: {g.flatten()[i].item():.6g}, {w.flatten()[i].item():.6g}" for i in shown))
    if passed:
        lines.append("Smaller inputs passed: " + ", ".join(str(p) for p in passed[-4:]) + ".")
    return "\n".join(lines), wrong


def _alternative(record, case: Case, g: torch.Tensor, bound: torch.Tensor) -> str | None:
    """The record's alternative (a lab's call with other attributes: attention without its scale or its
    mask) whose answer the output matches everywhere, or None."""
    if not record.alternatives or case.probe or not bool(g.isfinite().all()):
        return None
    for situation, attrs in record.alternatives.items():
        attrs = attrs(case.inputs) if callable(attrs) else attrs
        other = record.reference_with(case.inputs, **attrs).double().reshape(g.shape)
        if not torch.equal(other, record.reference_with(case.inputs).double().reshape(g.shape)) and \
                bool(((g - other).abs() <= bound).all()):
            return situation
    return None


def _positions_hint(wrong: torch.Tensor, hint: dict, got: torch.Tensor) -> str | None:
    """Batched matrices (..., rows, columns), attention's output: where the wrong rows lie along the
    rows of each matrix. Only rows from some position on ("late_rows": the first rows, say those of
    one tile of keys, are right) or every row but the last ("early_rows": the last row, which sees
    every key, is right); the operator's own hint for either, or None."""
    positions = wrong.any(-1).reshape(-1, wrong.shape[-2]).any(0)  # wrong in some matrix, per row position
    if not bool(positions.any()):
        return None
    first = int(positions.nonzero()[0])
    # A pattern of positions, not a few stray rows: a NaN here and there says nothing about tiles or
    # masks, so non-finite rows must cover half the positions. Finite wrong values only from some row
    # on are a pattern however sparse: a running max that grows in a later tile, for instance, leaves
    # only the rows whose max moved wrong.
    stray_nan = not bool(got[wrong].isfinite().all())
    if stray_nan and float(positions[first:].double().mean()) < 0.5:
        return None
    # (row 0 alone says nothing: under a causal mask it sees one key, right whatever the scale or the max)
    if first > 1 and "late_rows" in hint:
        return f"Rows 0..{first - 1} of every matrix are right, later rows wrong. Hint: " + hint["late_rows"] + "."
    if first == 0 and not bool(positions[-1]) and float(positions[:-1].double().mean()) >= 0.5 and \
            "early_rows" in hint:
        return "Every row is wrong in some matrix but the last. Hint: " + hint["early_rows"] + "."
    return None


def _matmul_hints(g: torch.Tensor, w: torch.Tensor, wrong: torch.Tensor, case: Case, hint: dict,
                  passed: list[Case], same_shape_f32: bool) -> list[str]:
    """Where a wrong C lies says which part of a tiled matmul is wrong: its K loop, the tiles at
    its right or bottom edge, or its accumulator's precision."""
    m, n, k = case.shape
    if bool(g.isnan().all()):  # not one element of C written: the grid, before anything inside it
        return ["Hint: " + hint["unwritten_all"] + "."]
    if k == 0:
        return ["Hint: " + hint["k_zero"] + "."]
    if case.dtype != torch.float32:
        evidence = "the float32 input of this shape passed" if same_shape_f32 else _rounding_evidence(g, w, wrong,
                                                                                                    case, passed)
        if evidence:
            return ["Hint: " + hint["precision"].format(evidence=evidence) + "."]
    rows, cols = wrong.any(1).nonzero().flatten(), wrong.any(0).nonzero().flatten()
    first_row, first_col = int(rows[0]), int(cols[0])
    lines = []
    # an edge tile starts at a multiple of the tile (16, 32, 64, ...): wrong rows or columns from row 1 or
    # 5 on are an index that is off, not a partial tile
    edge = "edge_unwritten" if bool(g[wrong].isnan().all()) else "edge_tile"  # no block there, or a wrong one
    if first_row % 16 == 0 and first_row > 0 and bool(wrong[first_row:].all()) and \
            int(wrong.sum()) == (m - first_row) * n:
        lines.append("Hint: " + hint[edge].format(which="the rows", first=f"row {first_row}") + ".")
    elif first_col % 16 == 0 and first_col > 0 and bool(wrong[:, first_col:].all()) and \
            int(wrong.sum()) == (n - first_col) * m:
        lines.append("Hint: " + hint[edge].format(which="the columns", first=f"column {first_col}") + ".")
    elif bool((g[wrong] == 0).all()) and bool(wrong.all()):  # nothing accumulated, and stored
        lines.append("Every element is 0. Hint: " + hint["zeros"] + ".")
    elif int(wrong.sum()) >= 0.9 * wrong.numel():  # a lost K tile can leave a few sums right by chance
        longest = max((p.shape[2] for p in passed if p.shape[2] > 1), default=0)
        every = "Every element is wrong" if bool(wrong.all()) else "Nearly every element is wrong"
        lines.append(f"{every}. Hint: " + (hint["k_tail"].format(ok=longest) if 1 < longest < k
                                           else hint["every"]) + ".")
        # every input that passed fits one 64 x 64 tile of C, this one does not: a tile's place is as likely
        if passed and max(p.shape[0] for p in passed) <= 64 and max(p.shape[1] for p in passed) <= 64 \
                and max(m, n) > 64:
            lines.append("Every input that passed fits in one 64 x 64 tile of C and this one does not. Hint: "
                         + hint["later_tiles"] + ".")
    return lines


def _rounding_evidence(g: torch.Tensor, w: torch.Tensor, wrong: torch.Tensor, case: Case,
                       passed: list[Case]) -> str | None:
    """Where no float32 input of the shape ran (T.gemm on a GPU takes 16-bit inputs only), a
    16-bit accumulator still shows: its errors are small next to the sum's spread, and only the
    longer K fail. A lost or doubled K tile errs by whole terms (~ sqrt(BK) times a term's size)."""
    shorter = [p.shape[2] for p in passed if p.dtype == case.dtype and 1 < p.shape[2] < case.shape[2]]
    if not shorter:
        return None
    a, b = (t.double() for t in case.inputs)
    spread = ((a * a) @ (b * b)).sqrt()  # the root of the sum of the squared terms of each C element
    # the median wrong element: a float16 running sum over K = 1000 errs by ~0.5% of the spread
    # there, one lost 8-term tail by ~5% (and a lost 64-term tile by ~17%)
    typical = float(((g - w).abs() / spread.clamp_min(1e-30))[wrong].median())
    if typical > 0.02:
        return None
    return (f"only the longer K fails (K up to {max(shorter)} passed in {str(case.dtype).removeprefix('torch.')}) "
            f"and its errors are small (typically {typical:.1%} of the sum's spread): rounding, not a lost term")


def _row_sums(g: torch.Tensor, w: torch.Tensor, hint: str, dtype: torch.dtype) -> list[str]:
    """Softmax rows sum to 1; rows that do not say the normalizer is wrong (not the exponentials). Off by
    more than 1% in a 16-bit dtype (its rounding), 0.1% in float32: a 1 x 1 input of 0.995 divided by its
    max instead of its sum sums to 1.005 and was let through once."""
    finite = torch.isfinite(g).all(-1) & torch.isfinite(w).all(-1) & (w.shape[-1] > 0)
    sums = g[finite].sum(-1)
    off = sums[(sums - 1).abs() > (1e-3 if dtype == torch.float32 else 1e-2)]
    if off.numel() == 0:
        return []
    return [f"{off.numel()} rows sum to {off.min().item():.4g}..{off.max().item():.4g} instead of 1: the divisor "
            f"is wrong. Hint: {hint}."]


def _shift(g: torch.Tensor, w: torch.Tensor, bound: torch.Tensor) -> int:
    """k when ``g`` is ``w`` moved by k positions (|k| <= 2) on all but the ends, else 0."""
    n = w.numel()
    for k in (1, -1, 2, -2):
        if n < 8 * abs(k):
            continue
        a, b, tol = (g[k:], w[:-k], bound[:-k]) if k > 0 else (g[:k], w[-k:], bound[-k:])
        if bool(((a - b).abs() <= tol).all()):
            return k
    return 0
