"""Similarity across a class: which students' answer cells look copied from each other.

    python -m operator_course.grader.similarity SUBMISSIONS [--labs labs/] [-o similarity.json]
        [--threshold 0.5] [--all]

What is compared: per lab, every student's answer cells (the cells the grader takes, read by the
grader's own collect stage, submissions.py), all cells of a lab together. Each cell becomes a stream
of normalised tokens, so that formatting, comments and names do not matter:
  - Python and TileLang: the ``tokenize`` module. Comments, blank lines, indentation and docstrings
    are dropped; a statement's end is one ``;`` token; every identifier a student chooses becomes
    ``V`` (one class, not numbered by first occurrence, which a reordering would renumber), while
    keywords, builtins, attribute names (``T.copy``, ``T.alloc_fragment``) and keyword-argument
    names (``threads=``, ``clear=``) stay themselves: they are the API, a copier cannot rename them.
    Numbers are kept (by value: ``0.f`` and ``0.0`` alike), strings kept.
  - CUDA: the text of a cell's triple-quoted strings (``CUDA_SOURCE = r\"\"\"...\"\"\"``) goes through a
    small C tokenizer (a regular expression): comments stripped, identifiers ``V`` except C/C++
    keywords and types, CUDA's built-ins (``threadIdx``, ``__syncthreads``, ``atomicAdd``,
    ``__shfl_xor_sync``, ``expf`` ...) and members (``.x``).
Every token keeps the line of the student's cell it came from, so a match maps back to lines.

What is excluded: the handed-out starter. Each answer cell's released text (release.py's
``release_notebook``: the instructor's cell with solutions stripped, the CUDA starter of
lab/starter.py included) is aligned with the student's token stream (difflib); the tokens it
matches (runs of at least ``MIN_STARTER_RUN`` tokens, or the common head and tail) are the starter's
and no fingerprint touches them, so k-grams spanning from the handed-out signature into a student's
first line do not count either. Then every k-gram of the released notebook's text (setup and check
cells, and the code in its markdown, fenced or inline) is removed from what is left. Finally, as
MOSS does, a fingerprint held by too many of the class (more than ``max(COMMON_MIN, COMMON_SHARE *
students who wrote anything)``, 3 or 30 %) is what the lab's text dictates, not what one student
took from another, and is dropped for that lab. The lab texts are prescriptive (the copy lab names
every call of its five-line TileLang answer), so without this filter honest answers to it share
most of their fingerprints: in the test class, honest pairs scored up to 0.78 without it and 0.36
with it, the planted copies 0.80 and 0.71.

Fingerprints: winnowing (Schleimer, Bunch and Aiken, SIGMOD 2003) over the hashes (blake2b, the
same in every run) of the token k-grams (K = 8) of the student's own runs: in every window of W = 4
consecutive hashes the minimum (the rightmost on a tie) is kept, so a match of 11 tokens or more
always shows. A fingerprint is a set member, not a position, so statements moved around still share
every k-gram within them. Score of a pair: the share of the smaller side's fingerprints the other
side also has (``score``: a student who copied half their answer into a longer one still scores
high), the Jaccard index beside it, over all the lab's answer cells and per answer cell
(``cells``). A pair is flagged when its ``evidence`` reaches ``threshold`` (0.5): the lab's score,
or one cell's (a copy of one part, the rest written apart), each only where ``min_shared`` (6)
fingerprints or more are shared (two answers of three lines, the same by necessity, are no
evidence). In the test class (tests/grader/test_similarity.py) the planted copies scored 0.71 to
0.89 and the honest pairs at most 0.36. Matching spans: shared fingerprints close together on both
sides are merged into blocks, each mapped back to a line range of each student's cell, for a
side-by-side view (``to_json``).

Why our own winnowing, not copydetect (PyPI, 0.5.0, installable here): copydetect runs one Pygments
lexer per *file*; a lab's CUDA answer is a Python string, which its Python filter turns into one
``S`` character, so the whole kernel would weigh nothing (it would take splitting cells into pseudo
files of two languages ourselves, and mapping its character offsets back through that). It
fingerprints characters of the filtered text (``V=V+V``) rather than tokens, knows no starter
*alignment* (only boilerplate hashes, which keep the k-grams that span from the handout into the
answer, shared by every honest student), no class-frequency filter, and hashes with Python's salted
``hash()`` (fingerprints differ between runs). It also brings numpy, matplotlib, jinja2 and tqdm for
an HTML report the dashboard does not use. The algorithm itself is 20 lines; what matters for this
course (a Python cell that holds CUDA, an alignment with the starter, line spans per cell) is ours
either way, with only the standard library.

Limits: an answer the lab's text dictates token for token (a five-line TileLang kernel whose every
call the task names) cannot tell an honest student from a copier; the class filter and
``min_shared`` keep such answers from being flagged, so a copy of *only* such an answer is not
flagged either (the copy lab's TileLang solution, disguised, scored 0.33 on 2 fingerprints against
the original). A passage copied by more students than the class filter's limit counts as
dictated. A flag is a reason to look, never a verdict.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import difflib
import hashlib
import io
import itertools
import json
import keyword
import re
import sys
import tokenize
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from .assemble import answer_ids
from .notebook import instructor_labs, lab_id, lab_meta, read
from .release import release_notebook
from .submissions import answers_of, collect, read_regular

K = 8  # tokens per k-gram: a short statement
W = 4  # winnowing window: a match of W + K - 1 = 11 tokens or more always shares a fingerprint
THRESHOLD = 0.5
MIN_SHARED = 6
MIN_STARTER_RUN = 4
COMMON_SHARE = 0.3
COMMON_MIN = 3
MAX_TOKENS = 20_000  # per cell: what a notebook of MAX_NOTEBOOK bytes could hold is not compared whole


# --- tokens ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    text: str  # normalised
    line: int  # 1-based line of the cell's text it came from


PY_KEEP = set(keyword.kwlist) | {n for n in dir(builtins) if not n.startswith("_")}

C_KEYWORDS = set("""
auto break case char const constexpr continue default do double else enum extern float for goto if
inline int long register return short signed sizeof static struct switch typedef union unsigned void
volatile while bool true false class template typename namespace using nullptr static_cast
reinterpret_cast const_cast operator new delete this decltype alignas noexcept
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t ptrdiff_t
half __half __half2 __nv_bfloat16 float2 float4 int2 int4 dim3
__restrict__ __global__ __device__ __host__ __shared__ __constant__ __forceinline__ __noinline__
__launch_bounds__ pragma unroll include define
""".split())

CUDA_BUILTINS = set("""
threadIdx blockIdx blockDim gridDim warpSize
__syncthreads __syncwarp __threadfence __threadfence_block __activemask __ldg
__shfl_sync __shfl_xor_sync __shfl_down_sync __shfl_up_sync __ballot_sync __any_sync __all_sync
__reduce_add_sync __reduce_max_sync
atomicAdd atomicSub atomicMax atomicMin atomicExch atomicCAS atomicAnd atomicOr atomicXor
expf exp __expf exp2f logf log __logf sqrtf sqrt rsqrtf fmaxf fminf fmax fmin max min fabsf abs
__fdividef __frcp_rn fmaf powf INFINITY NAN
__float2half __half2float __float2bfloat16 __bfloat162float memcpy memset printf
""".split())

_C_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<name>[A-Za-z_]\w*)
  | (?P<number>(?:\d|\.\d)(?:[eEpP][+-]|[\w.])*)
  | (?P<string>"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?)
  | (?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||::|[-+*/%&|^]=|\S)
""", re.S | re.X)


def _number(text: str) -> str:
    """A number by its value, so that spelling (0.f, 0.0, 0xffffffffu, 1e3) does not matter."""
    t = text.lower().replace("_", "").replace("'", "")
    stripped = t.rstrip("ul")
    try:
        return str(int(stripped, 0))
    except ValueError:
        pass
    try:
        return repr(float(t[:-1] if t.endswith("f") and not t.startswith("0x") else t))
    except ValueError:
        return t


def c_tokens(text: str, first_line: int = 1, hash_comments: bool = False) -> list[Token]:
    """C/CUDA tokens of ``text``, comments dropped, identifiers classed; ``first_line`` is the cell
    line ``text`` starts on. ``hash_comments``: ``#`` starts a comment (Python read this way when
    ``tokenize`` cannot read it)."""
    out: list[Token] = []
    line = first_line
    pos = 0
    prev = ""
    comment = re.compile(r"#[^\n]*") if hash_comments else None
    while pos < len(text):
        if comment and (m := comment.match(text, pos)):
            pos = m.end()
            continue
        m = _C_TOKEN.match(text, pos)
        kind, value = m.lastgroup, m.group()
        if kind == "name":
            keep = value in C_KEYWORDS or value in CUDA_BUILTINS or prev in (".", "->", "::") \
                or (hash_comments and value in PY_KEEP)
            out.append(Token(value if keep else "V", line))
        elif kind == "number":
            out.append(Token(_number(value), line))
        elif kind == "string":
            out.append(Token("S", line))
        elif kind == "op":
            out.append(Token(value, line))
        if kind not in ("space", "comment"):
            prev = value
        line += value.count("\n")
        pos = m.end()
    return out


_MAGIC = re.compile(r"^[ \t]*[%!]")
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}


def _string_body(text: str) -> tuple[str, int] | None:
    """(contents, offset of the contents in ``text``) of a triple-quoted string literal, else None."""
    m = re.match(r"[rRbBuU]{0,2}(\"\"\"|''')", text)
    if not m or not text.endswith(m.group(1)) or len(text) < m.end() + 3:
        return None
    return text[m.end():-3], m.end()


def python_tokens(source: str) -> list[Token]:
    """Tokens of a Python cell; its triple-quoted strings (CUDA_SOURCE) are read as C. Where
    ``tokenize`` gives up (an unclosed bracket or string), the rest is read by the C tokenizer.
    At most MAX_TOKENS (a real answer has a few hundred)."""
    source = "\n".join("" if _MAGIC.match(line) else line for line in source.split("\n"))
    raw: list[tokenize.TokenInfo] = []
    rest: list[Token] = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(source).readline):
            if t.type not in _SKIP:
                raw.append(t)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # what tokenize read stands; the rest (an unclosed string, a bad dedent) is read as C
        row, col = raw[-1].end if raw else (1, 0)
        lines = source.split("\n")
        tail = "\n".join([lines[row - 1][col:], *lines[row:]])
        rest = c_tokens(tail, row, hash_comments=True)
    out: list[Token] = []
    depth = 0
    dropped = False  # the last statement was a docstring: its end goes too
    for i, t in enumerate(raw):
        prev = raw[i - 1] if i else None
        after = raw[i + 1] if i + 1 < len(raw) else None
        line = t.start[0]
        if t.type == tokenize.NEWLINE:
            if not dropped:
                out.append(Token(";", line))
            dropped = False
        elif t.type == tokenize.OP:
            depth += t.string in "([{"
            depth -= t.string in ")]}"
            out.append(Token(t.string, line))
        elif t.type == tokenize.NAME:
            keep = t.string in PY_KEEP or (prev is not None and prev.string == ".") \
                or (depth > 0 and after is not None and after.string == "=")
            out.append(Token(t.string if keep else "V", line))
        elif t.type == tokenize.NUMBER:
            out.append(Token(_number(t.string), line))
        elif t.type == tokenize.STRING:
            statement = (prev is None or prev.type == tokenize.NEWLINE) and \
                (after is None or after.type == tokenize.NEWLINE)
            body = _string_body(t.string)
            if statement:
                dropped = True  # a docstring, or a string used as a comment
                continue
            if body is not None:
                out.extend(c_tokens(body[0], line + t.string[:body[1]].count("\n")))
            else:
                try:
                    out.append(Token("S" + repr(ast.literal_eval(t.string)), line))
                except (ValueError, SyntaxError):
                    out.append(Token("S", line))
        else:  # f-string parts, error tokens
            out.append(Token(t.string, line))
    return (out + rest)[:MAX_TOKENS]


def markdown_tokens(text: str) -> list[list[Token]]:
    """The code in a markdown cell: fenced blocks (C for c/cpp/cuda fences) and inline spans,
    an inline ``...`` splitting a span into pieces (``T.Kernel(..., **lab.launch(...))``)."""
    streams = []
    for m in re.finditer(r"```(\w*)[^\n]*\n(.*?)```", text, re.S):
        lang = m.group(1).lower()
        streams.append(c_tokens(m.group(2)) if lang in ("c", "cpp", "c++", "cuda", "cu") else python_tokens(m.group(2)))
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for m in re.finditer(r"`([^`\n]+)`", prose):
        for piece in m.group(1).split("..."):
            streams.append(python_tokens(piece))
    return [s for s in streams if s]


# --- a lab's released text --------------------------------------------------------------------

@dataclass
class LabText:
    """What a lab hands out: per answer cell the starter's tokens, and every other text's tokens."""
    id: str
    path: Path
    answers: list[str]
    starters: dict[str, list[Token]]
    released: list[list[Token]]


def lab_text(path: Path) -> LabText:
    nb = read(path)
    released = release_notebook(nb, label=str(path))
    starters, other = {}, []
    for cell in released.cells:
        meta = lab_meta(cell)
        if cell.cell_type == "code":
            tokens = python_tokens(cell.source)
            if "answer" in meta:
                starters[str(meta["answer"])] = tokens
            other.append(tokens)
        elif cell.cell_type == "markdown":
            other.extend(markdown_tokens(cell.source))
    return LabText(lab_id(nb, path), path, answer_ids(nb), starters, other)


def lab_texts(labs_dir: Path) -> dict[str, LabText]:
    return {lab: lab_text(path) for lab, path in instructor_labs(labs_dir).items()}


def answer_texts(notebook_path: Path, lab: LabText | Path) -> dict[str, str]:
    """answer cell id -> source of one student's notebook, read as the grader reads it (a file of
    its own, at most MAX_NOTEBOOK bytes; metadata read defensively; a repeated cell: the last)."""
    wanted = lab.answers if isinstance(lab, LabText) else answer_ids(read(Path(lab)))
    nb = nbformat.reads(read_regular(Path(notebook_path)).decode("utf-8"), as_version=4)
    return answers_of(nb, wanted)[0]


# --- fingerprints ------------------------------------------------------------------------------

def _hash(tokens: list[Token]) -> int:
    data = "\x1f".join(t.text for t in tokens).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def kgram_hashes(tokens: list[Token], k: int = K) -> list[int]:
    return [_hash(tokens[i:i + k]) for i in range(len(tokens) - k + 1)]


def winnow(hashes: list[int], w: int = W) -> list[int]:
    """Indices of the hashes robust winnowing keeps: each window's minimum, the rightmost on a tie,
    each kept once. A sequence shorter than a window keeps its minimum."""
    if not hashes:
        return []
    kept: list[int] = []
    for start in range(max(len(hashes) - w + 1, 1)):
        window = hashes[start:start + w]
        low = min(window)
        index = start + max(i for i, h in enumerate(window) if h == low)
        if not kept or kept[-1] != index:
            kept.append(index)
    return kept


def own_mask(tokens: list[Token], starter: list[Token], min_run: int = MIN_STARTER_RUN) -> list[bool]:
    """True for each token the student wrote, False for those aligned with the starter: matching
    runs of ``min_run`` tokens or more, and the common head and tail however short."""
    own = [True] * len(tokens)
    if not starter:
        return own
    a, b = [t.text for t in starter], [t.text for t in tokens]
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        head = block.a == 0 and block.b == 0
        tail = block.a + block.size == len(a) and block.b + block.size == len(b)
        if block.size and (block.size >= min_run or head or tail):
            own[block.b:block.b + block.size] = [False] * block.size
    return own


@dataclass
class Cell:
    id: str
    text: str
    tokens: list[Token]
    # fingerprint hash -> token indices where its k-gram starts
    prints: dict[int, list[int]] = field(default_factory=dict)


def fingerprint_cell(cell_id: str, text: str, starter: list[Token], boilerplate: set[int],
                     k: int = K, w: int = W) -> Cell:
    tokens = python_tokens(text)
    own = own_mask(tokens, starter)
    cell = Cell(cell_id, text, tokens)
    start = 0
    while start < len(tokens):  # each run of the student's own tokens on its own
        if not own[start]:
            start += 1
            continue
        end = start
        while end < len(tokens) and own[end]:
            end += 1
        grams = [(start + i, h) for i, h in enumerate(kgram_hashes(tokens[start:end], k)) if h not in boilerplate]
        for j in winnow([h for _, h in grams], w):
            index, h = grams[j]
            cell.prints.setdefault(h, []).append(index)
        start = end
    return cell


def released_hashes(lab: LabText, k: int = K) -> set[int]:
    return {h for tokens in lab.released for h in kgram_hashes(tokens, k)}


# --- pairs -------------------------------------------------------------------------------------

@dataclass
class Match:
    """One matching span, side by side: lines (first, last; 1-based) of a cell of each student."""
    cell_a: str
    lines_a: tuple[int, int]
    text_a: str
    cell_b: str
    lines_b: tuple[int, int]
    text_b: str
    fingerprints: int


@dataclass
class CellScore:
    """The same answer cell of both students, compared on its own."""
    cell: str
    score: float
    shared: int
    fingerprints_a: int
    fingerprints_b: int


@dataclass
class Pair:
    lab: str
    student_a: str
    student_b: str
    score: float  # all the lab's answer cells together: shared fingerprints / the smaller side's
    jaccard: float
    shared: int
    fingerprints_a: int
    fingerprints_b: int
    cells: list[CellScore] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)

    def evidence(self, min_shared: int = MIN_SHARED) -> float:
        """What a flag is judged on: the lab's score, or one answer cell's where the copy is of that
        cell only (the rest of the lab written apart), each counted with ``min_shared`` or more."""
        scores = [c.score for c in self.cells if c.shared >= min_shared]
        return max(scores + ([self.score] if self.shared >= min_shared else []), default=0.0)


def _lines(text: str, first: int, last: int) -> str:
    return "\n".join(text.split("\n")[first - 1:last])


def matching_spans(a: dict[str, Cell], b: dict[str, Cell], shared: set[int], k: int = K, w: int = W) -> list[Match]:
    """Shared fingerprints that lie close together on both sides (in the same two cells, each
    within a k-gram and a window of the last) form one span; a fingerprint found several times on
    each side pairs its occurrences in order. Spans that touch on both sides are joined."""
    def where(cells: dict[str, Cell]) -> dict[int, list[tuple[str, int]]]:
        found: dict[int, list[tuple[str, int]]] = {}
        for cid in sorted(cells):
            for h, starts in cells[cid].prints.items():
                if h in shared:
                    found.setdefault(h, []).extend((cid, i) for i in starts)
        return found

    where_a, where_b = where(a), where(b)
    hits = sorted(hit for h in shared for hit in zip(where_a.get(h, []), where_b.get(h, [])))
    blocks: list[dict] = []
    gap = k + w
    for (ca, ia), (cb, ib) in hits:
        last = blocks[-1] if blocks else None
        if last and (last["ca"], last["cb"]) == (ca, cb) and ia - last["a"][1] <= gap and abs(ib - last["b_at"]) <= gap:
            last["a"][1], last["b_at"] = ia, ib
            last["b"] = [min(last["b"][0], ib), max(last["b"][1], ib)]
            last["n"] += 1
        else:
            blocks.append({"ca": ca, "cb": cb, "a": [ia, ia], "b": [ib, ib], "b_at": ib, "n": 1})
    spans: list[list] = []  # [cell a, lines a, cell b, lines b, fingerprints]
    for block in blocks:
        ca, cb = block["ca"], block["cb"]
        la, lb = _line_range(a[ca].tokens, *block["a"], k), _line_range(b[cb].tokens, *block["b"], k)
        last = spans[-1] if spans else None
        touches = last and la[0] <= last[1][1] + 1 and last[3][0] <= lb[0] <= last[3][1] + 1
        if touches and (last[0], last[2]) == (ca, cb):
            last[1], last[3] = (last[1][0], max(la[1], last[1][1])), (last[3][0], max(lb[1], last[3][1]))
            last[4] += block["n"]
        else:
            spans.append([ca, la, cb, lb, block["n"]])
    return [Match(ca, la, _lines(a[ca].text, *la), cb, lb, _lines(b[cb].text, *lb), n) for ca, la, cb, lb, n in spans]


def _line_range(tokens: list[Token], first: int, last: int, k: int) -> tuple[int, int]:
    """The cell lines of the k-grams starting at token ``first`` to token ``last``."""
    return tokens[first].line, tokens[min(last + k, len(tokens)) - 1].line


def _ratio(shared: int, a: int, b: int) -> float:
    return round(shared / min(a, b), 4) if min(a, b) else 0.0


def compare(a: str, cells_a: dict[str, Cell], b: str, cells_b: dict[str, Cell], lab: str,
            ignore: set[int] = frozenset(), k: int = K, w: int = W) -> Pair:
    prints_a = {h for c in cells_a.values() for h in c.prints} - ignore
    prints_b = {h for c in cells_b.values() for h in c.prints} - ignore
    shared = prints_a & prints_b
    union = len(prints_a | prints_b)
    cells = []
    for cid in sorted(set(cells_a) & set(cells_b)):
        ca, cb = set(cells_a[cid].prints) - ignore, set(cells_b[cid].prints) - ignore
        cells.append(CellScore(cid, _ratio(len(ca & cb), len(ca), len(cb)), len(ca & cb), len(ca), len(cb)))
    return Pair(lab, a, b, _ratio(len(shared), len(prints_a), len(prints_b)),
                round(len(shared) / union, 4) if union else 0.0, len(shared), len(prints_a), len(prints_b),
                cells, matching_spans(cells_a, cells_b, shared, k, w))


def compare_class(answers: dict[str, dict[str, str]], lab: LabText, k: int = K, w: int = W,
                  common_share: float = COMMON_SHARE, common_min: int = COMMON_MIN) -> list[Pair]:
    """Every pair of students of one lab, best first: ``answers`` is student -> answer id -> source."""
    boilerplate = released_hashes(lab, k)
    cells = {student: {cid: fingerprint_cell(cid, text, lab.starters.get(cid, []), boilerplate, k, w)
                       for cid, text in sorted(cells.items())}
             for student, cells in answers.items()}
    holders: dict[int, int] = {}
    active = 0  # students who wrote anything of their own (a starter left as handed out holds nothing)
    for student_cells in cells.values():
        held = {h for c in student_cells.values() for h in c.prints}
        active += bool(held)
        for h in held:
            holders[h] = holders.get(h, 0) + 1
    limit = max(common_min, common_share * active)
    common = {h for h, n in holders.items() if n > limit}
    pairs = [compare(a, cells[a], b, cells[b], lab.id, common, k, w)
             for a, b in itertools.combinations(sorted(cells), 2)]
    return sorted(pairs, key=lambda p: (-p.score, -p.shared, p.student_a, p.student_b))


def class_answers(submissions_dir: Path, labs: dict[str, LabText]) -> dict[str, dict[str, dict[str, str]]]:
    """lab -> student -> answer id -> source, through the grader's collect stage (students whose
    notebook is missing or unreadable have no answers to compare)."""
    subs, _ = collect(Path(submissions_dir), labs, {lab: t.answers for lab, t in labs.items()})
    out: dict[str, dict[str, dict[str, str]]] = {lab: {} for lab in labs}
    for sub in subs:
        if sub.notebook is not None and sub.answers:
            out[sub.lab][sub.student] = sub.answers
    return out


def all_pairs(submissions_dir: Path, labs_dir: Path, k: int = K, w: int = W, common_share: float = COMMON_SHARE,
              common_min: int = COMMON_MIN) -> list[Pair]:
    labs = lab_texts(Path(labs_dir))
    pairs = []
    for lab, answers in class_answers(submissions_dir, labs).items():
        pairs += compare_class(answers, labs[lab], k, w, common_share, common_min)
    return pairs


def flag_pairs(submissions_dir: Path, labs_dir: Path, threshold: float = THRESHOLD, min_shared: int = MIN_SHARED,
               **options) -> list[Pair]:
    """Pairs of students whose answers of one lab share at least ``threshold`` of the smaller side's
    fingerprints (and ``min_shared`` fingerprints or more), best first, with their matching spans."""
    pairs = [p for p in all_pairs(submissions_dir, labs_dir, **options) if p.evidence(min_shared) >= threshold]
    return sorted(pairs, key=lambda p: -p.evidence(min_shared))


def to_json(pairs: list[Pair], threshold: float = THRESHOLD, min_shared: int = MIN_SHARED) -> str:
    """The dashboard's view: one entry per pair (its ``evidence``, and ``flagged`` against
    ``threshold``), each matching span with its lines from both students' cells."""
    rows = [{**asdict(p), "evidence": p.evidence(min_shared), "flagged": p.evidence(min_shared) >= threshold}
            for p in pairs]
    return json.dumps({"threshold": threshold, "min_shared": min_shared, "pairs": rows}, indent=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m operator_course.grader.similarity", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="one folder or notebook per student")
    parser.add_argument("--labs", type=Path, default=Path("labs"), help="instructor notebooks (default labs/)")
    parser.add_argument("-o", "--out", type=Path, help="write the JSON here (default: standard output)")
    parser.add_argument("--threshold", type=float, default=THRESHOLD, help="flag pairs scoring this or more")
    parser.add_argument("--all", action="store_true", help="every pair, flagged or not (to choose a threshold)")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"SUBMISSIONS {args.submissions} is not a folder")
    if not args.labs.is_dir() or not any(args.labs.glob("*.ipynb")):
        parser.error(f"--labs {args.labs} is not a folder of instructor notebooks")
    pairs = all_pairs(args.submissions, args.labs) if args.all else \
        flag_pairs(args.submissions, args.labs, args.threshold)
    text = to_json(pairs, args.threshold)
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
