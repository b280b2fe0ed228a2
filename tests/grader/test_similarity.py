"""Similarity across a class (grader/similarity.py), on a class built from files.

tests/labs/similar/<student>/<answer id>.py is one student's answer cell, whole, as they would
submit it; every answer cell a student has no file for is the release's starter, left as handed out.
Besides those folders the class has ``ref_a`` (the instructor's solutions of copy-tilelang, copy-cuda
and reduce_sum-cuda, as a student who had them would submit them: markers gone) and two students
who submitted the released notebooks untouched. The planted pairs:
  ref_a / ref_copy      both labs: ref_copy is the solution with every name changed, comments
                        changed, added and removed, whitespace and line breaks changed, braces
                        added, operands swapped and independent statements reordered
  honest_3 / peer_copy  lab 1: peer_copy took honest_3's TileLang answer the same way (its CUDA
                        kernel is its own: one copied cell in a lab is flagged on that cell)
  honest_2 / peer_copy  lab 3: peer_copy's CUDA kernel is honest_2's, disguised
honest_1..4 wrote every part themselves from the same lab text (different tilings, loop shapes,
guards, warp reductions); starter_nearly changed only a constant and comments of the starter.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import pytest

from operator_course.grader import similarity as S
from operator_course.grader.notebook import SOLUTION_BEGIN, SOLUTION_END, lab_meta, read
from operator_course.grader.release import release_notebook

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "labs" / "similar"
LABS = ("01_copy", "03_reduce_sum")
SOLVED = ("copy-tilelang", "copy-cuda", "reduce_sum-cuda")
PLANTED = {("01_copy", "ref_a", "ref_copy"), ("03_reduce_sum", "ref_a", "ref_copy"),
           ("01_copy", "honest_3", "peer_copy"), ("03_reduce_sum", "honest_2", "peer_copy")}
STARTERS = ("starter_only", "starter_only_2", "starter_nearly")


def unmarked(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if line.strip() not in (SOLUTION_BEGIN, SOLUTION_END))


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> tuple[Path, Path]:
    """(submissions folder, labs folder) of the test class: one folder per student, both labs each."""
    root = tmp_path_factory.mktemp("similar")
    labs, subs = root / "labs", root / "submissions"
    labs.mkdir()
    students: dict[str, dict[str, str]] = {p.name: {f.stem: f.read_text() for f in p.glob("*.py")}
                                           for p in sorted(FIXTURES.iterdir()) if p.is_dir()}
    students.update({"starter_only": {}, "starter_only_2": {}})
    for lab in LABS:
        path = ROOT / "labs" / f"{lab}.ipynb"
        (labs / path.name).write_bytes(path.read_bytes())
        instructor = read(path)
        released = release_notebook(instructor)
        solutions = {lab_meta(c)["answer"]: unmarked(c.source) for c in instructor.cells if "answer" in lab_meta(c)}
        for student, answers in [*students.items(), ("ref_a", {a: solutions[a] for a in SOLVED if a in solutions})]:
            nb = copy.deepcopy(released)
            for cell in nb.cells:
                answer = lab_meta(cell).get("answer")
                if answer in answers:
                    cell.source = answers[answer]
            (subs / student).mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, str(subs / student / path.name))
    return subs, labs


@pytest.fixture(scope="module")
def pairs(course) -> list[S.Pair]:
    return S.all_pairs(*course)


def table(pairs: list[S.Pair]) -> str:
    return "\n".join(f"{p.lab} {p.student_a}/{p.student_b}: evidence {p.evidence():.2f} (lab {p.score:.2f}, "
                     f"{p.shared} of {p.fingerprints_a}/{p.fingerprints_b}; cells "
                     + ", ".join(f"{c.cell} {c.score:.2f}/{c.shared}" for c in p.cells) + ")"
                     for p in sorted(pairs, key=lambda p: -p.evidence()))


# --- the class ---------------------------------------------------------------------------------

def test_the_planted_pairs_are_flagged_and_nothing_else(course, pairs):
    flagged = {(p.lab, p.student_a, p.student_b) for p in S.flag_pairs(*course)}
    print("\n" + table(pairs))  # the scores observed, for the report (pytest -s)
    assert flagged == PLANTED, table(pairs)


def test_planted_and_honest_scores_are_apart_from_the_threshold(pairs):
    """Not a knife edge: every planted pair clears the threshold, and every honest one stays under
    it, by 0.1 or more."""
    planted = [p for p in pairs if (p.lab, p.student_a, p.student_b) in PLANTED]
    honest = [p for p in pairs if (p.lab, p.student_a, p.student_b) not in PLANTED]
    assert len(planted) == len(PLANTED)
    assert min(p.evidence() for p in planted) >= S.THRESHOLD + 0.1, table(planted)
    assert max(p.evidence() for p in honest) <= S.THRESHOLD - 0.1, table(honest)


def test_whole_lab_copies_score_high_on_the_lab_and_a_one_cell_copy_on_its_cell(pairs):
    by = {(p.lab, p.student_a, p.student_b): p for p in pairs}
    for lab in LABS:
        assert by[(lab, "ref_a", "ref_copy")].score >= S.THRESHOLD + 0.1
    one_cell = by[("01_copy", "honest_3", "peer_copy")]
    cells = {c.cell: c for c in one_cell.cells}
    assert one_cell.score < S.THRESHOLD  # the lab as a whole: half of it is peer_copy's own
    assert cells["copy-tilelang"].score >= S.THRESHOLD + 0.1 and cells["copy-tilelang"].shared >= S.MIN_SHARED
    assert cells["copy-cuda"].score < 0.2


def test_the_starter_is_no_ones_work(course, pairs):
    """Students who left the handed-out starter as it was (or changed a constant and comments)
    hold no fingerprint, so they pair with no one, each other included."""
    labs = S.lab_texts(course[1])
    answers = S.class_answers(course[0], labs)
    for lab in LABS:
        boilerplate = S.released_hashes(labs[lab])
        for student in STARTERS:
            for cid, text in answers[lab][student].items():
                cell = S.fingerprint_cell(cid, text, labs[lab].starters[cid], boilerplate)
                assert not cell.prints, (lab, student, cid)
    for p in pairs:
        if p.student_a in STARTERS or p.student_b in STARTERS:
            assert p.shared == 0 and p.evidence() == 0.0, p
    # and the answers that are written: the handed-out lines around them are not theirs either
    ref = answers["03_reduce_sum"]["ref_a"]["reduce_sum-cuda"]
    cell = S.fingerprint_cell("reduce_sum-cuda", ref, labs["03_reduce_sum"].starters["reduce_sum-cuda"], set())
    first = min(i for starts in cell.prints.values() for i in starts)
    assert cell.tokens[first].line >= ref.split("\n").index('CUDA_SOURCE += r"""') + 1


def test_matching_spans_name_the_lines_of_both_cells(course, pairs):
    pair = next(p for p in pairs if (p.lab, p.student_a, p.student_b) == ("03_reduce_sum", "ref_a", "ref_copy"))
    answers = S.class_answers(course[0], S.lab_texts(course[1]))["03_reduce_sum"]
    text_a, text_b = answers["ref_a"]["reduce_sum-cuda"], answers["ref_copy"]["reduce_sum-cuda"]
    assert pair.matches
    for m in pair.matches:
        assert m.cell_a == m.cell_b == "reduce_sum-cuda"
        assert 1 <= m.lines_a[0] <= m.lines_a[1] <= len(text_a.split("\n"))
        assert 1 <= m.lines_b[0] <= m.lines_b[1] <= len(text_b.split("\n"))
        assert m.text_a == "\n".join(text_a.split("\n")[m.lines_a[0] - 1:m.lines_a[1]])
        assert m.text_b == "\n".join(text_b.split("\n")[m.lines_b[0] - 1:m.lines_b[1]])
    # the copied block reduction is shown against its original, the renamed lines side by side
    block = max(pair.matches, key=lambda m: m.fingerprints)
    assert "static_cast<float>(row[j + k * blockDim.x])" in block.text_a
    assert "static_cast<float>(row[idx + u * blockDim.x])" in block.text_b
    warp = [m for m in pair.matches if "wsum[threadIdx.x / 32] = s;" in m.text_b]
    assert warp and all("warp_totals[threadIdx.x / 32] = total;" in m.text_a for m in warp)
    # every shared fingerprint is in a span (one found twice on each side, the shuffle loop, in two)
    assert sum(m.fingerprints for m in pair.matches) >= pair.shared


def test_to_json_is_the_dashboards_list(course, tmp_path):
    flagged = S.flag_pairs(*course)
    data = json.loads(S.to_json(flagged))
    assert data["threshold"] == S.THRESHOLD
    assert {(p["lab"], p["student_a"], p["student_b"]) for p in data["pairs"]} == PLANTED
    for p in data["pairs"]:
        assert p["flagged"] and p["evidence"] >= S.THRESHOLD and p["matches"]
        assert {"cell_a", "lines_a", "text_a", "cell_b", "lines_b", "text_b"} <= set(p["matches"][0])
    out = tmp_path / "similarity.json"
    assert S.main([str(course[0]), "--labs", str(course[1]), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["pairs"] == data["pairs"]


def test_answer_texts_reads_the_cells_the_grader_takes(course):
    subs, labs = course
    notebook = subs / "ref_copy" / "03_reduce_sum.ipynb"
    fixture = (FIXTURES / "ref_copy" / "reduce_sum-cuda.py").read_text()
    for lab in (S.lab_texts(labs)["03_reduce_sum"], labs / "03_reduce_sum.ipynb"):
        texts = S.answer_texts(notebook, lab)
        assert set(texts) == {"reduce_sum-tilelang", "reduce_sum-cuda"}
        assert texts["reduce_sum-cuda"] == fixture


# --- normalisation -----------------------------------------------------------------------------

def texts(tokens: list[S.Token]) -> list[str]:
    return [t.text for t in tokens]


def test_python_names_comments_and_layout_do_not_matter_but_the_api_does():
    a = "def f(x, n):\n    # sum it\n    total = T.alloc_fragment((n,), 'float32')  # a tile\n    return total\n"
    b = ("def g(y,\n      m):\n    '''docstring'''\n    acc = T.alloc_fragment( (m ,),\n        \"float32\")\n\n"
         "    return acc")
    assert texts(S.python_tokens(a)) == texts(S.python_tokens(b))
    assert "alloc_fragment" in texts(S.python_tokens(a)) and "return" in texts(S.python_tokens(a))
    assert texts(S.python_tokens("T.copy(a, b)")) != texts(S.python_tokens("T.gemm(a, b)"))
    # keyword arguments are the API's names; builtins stay themselves
    assert texts(S.python_tokens("f(x, clear=False)"))[-5:] == ["clear", "=", "False", ")", ";"]
    assert texts(S.python_tokens("for i in range(n): pass"))[:5] == ["for", "V", "in", "range", "("]


def test_cuda_in_a_python_string_is_read_as_c_with_its_cell_lines():
    cell = ('# answer\nCUDA_SOURCE = r"""\n__global__ void k(float* out) {\n  int i = threadIdx.x;  // mine\n'
            '  /* block */ __syncthreads();\n  atomicAdd(out, 1.0f);\n}\n"""\n')
    tokens = S.python_tokens(cell)
    assert texts(tokens) == ["V", "=", "__global__", "void", "V", "(", "float", "*", "V", ")", "{",
                             "int", "V", "=", "threadIdx", ".", "x", ";", "__syncthreads", "(", ")", ";",
                             "atomicAdd", "(", "V", ",", "1.0", ")", ";", "}", ";"]
    marks = ("__global__", "threadIdx", "__syncthreads", "atomicAdd")
    assert [t.line for t in tokens if t.text in marks] == [3, 4, 5, 6]
    renamed = cell.replace("out", "dst").replace("int i", "int tid").replace("// mine", "").replace("1.0f", "1.f")
    assert texts(S.python_tokens(renamed)) == texts(tokens)


def test_a_cell_tokenize_cannot_read_is_still_read():
    tokens = S.python_tokens("x = f(a,\n  b  # never closed\n%timeit y\n")
    assert texts(tokens) == ["V", "=", "V", "(", "V", ",", "V"]


def test_reordered_statements_keep_their_fingerprints():
    lines = [f"    v{i} = T.alloc_fragment((TILE, {i}), 'float{i}')" for i in range(8)]
    a = "def f():\n" + "\n".join(lines)
    b = "def g():\n" + "\n".join(lines[4:] + lines[:4])
    ca, cb = (S.fingerprint_cell("c", t, [], set()) for t in (a, b))
    shared = set(ca.prints) & set(cb.prints)
    assert len(shared) / min(len(ca.prints), len(cb.prints)) >= 0.7


def test_winnowing_keeps_each_windows_rightmost_minimum_once():
    assert S.winnow([5, 3, 3, 9, 1, 7], 3) == [2, 4]
    assert S.winnow([4, 2], 4) == [1] and S.winnow([], 4) == []
    assert S.winnow([3, 1, 2], 1) == [0, 1, 2]
