"""A CUDA check's message cites CUDA_SOURCE's lines; in a notebook each also names the answer cell's
line (a blind student found every report about two lines off the cell: the cell's comment, the
string opening after r\"\"\", and the starter's second literal). lab/cell_lines.py."""

from operator_course.lab.cell_lines import with_cell_lines

# the handout's shape: a comment, the kernel's opening in one literal, the body continuing in a second
CELL = '''# your answer: the grader takes this cell from your notebook
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
"""
CUDA_SOURCE = CUDA_SOURCE + r"""
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = x[i];
}
"""
'''


def source() -> str:
    namespace: dict = {}
    exec(CELL, namespace)
    return namespace["CUDA_SOURCE"]


def test_each_cited_line_gets_the_cells_line():
    src = source()
    n = src.split("\n").index("  if (i <= n) y[i] = x[i];") + 1  # 6 in the string, 8 in the cell
    message = f"out-of-bounds write at CUDA_SOURCE line {n}; CUDA_SOURCE({n}): error; line {n} of CUDA_SOURCE is"
    assert with_cell_lines(message, src, CELL) == (
        f"out-of-bounds write at CUDA_SOURCE line {n} (cell line 8); CUDA_SOURCE({n}) (cell line 8): error; "
        f"line {n} of CUDA_SOURCE (cell line 8) is")


def test_a_blank_or_repeated_line_and_no_notebook_leave_the_message_as_it_is():
    src = source()
    assert with_cell_lines("at CUDA_SOURCE line 1", src, CELL) == "at CUDA_SOURCE line 1"  # blank
    assert with_cell_lines("at CUDA_SOURCE line 99", src, CELL) == "at CUDA_SOURCE line 99"  # past the end
    assert with_cell_lines("at CUDA_SOURCE line 7", src) == "at CUDA_SOURCE line 7"  # no IPython shell


def test_the_answer_cell_is_found_in_the_notebooks_history():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_cell(CELL, store_history=True)
        src = shell.user_ns["CUDA_SOURCE"]
        n = src.split("\n").index("  if (i <= n) y[i] = x[i];") + 1
        assert with_cell_lines(f"at CUDA_SOURCE line {n}", src) == f"at CUDA_SOURCE line {n} (cell line 8)"
    finally:
        InteractiveShell.clear_instance()


def test_a_build_error_names_the_line_of_a_cell_ipykernel_never_wrote_to_disk():
    """ipykernel names a cell's code /tmp/ipykernel_<pid>/<hash>.py for linecache only: a TileLang build
    error raised there named no line in a notebook, and a builtin max() got the and/or hint."""
    import linecache

    import pytest

    pytest.importorskip("tilelang")
    import tilelang  # noqa: F401  (puts its tvm on the path)
    from tvm import tirx

    from operator_course.lab.build_errors import explain

    filename = "/tmp/ipykernel_4242/1277794811.py"
    cell = "def build(x):\n    return max(x, 0)\n"
    linecache.cache[filename] = (len(cell), None, cell.splitlines(True), filename)

    namespace: dict = {}
    exec(compile(cell, filename, "exec"), namespace)
    try:
        namespace["build"](tirx.Var("x", "int32"))  # a TileLang value: no True or False while building
    except ValueError as e:
        text = explain(e, "copy (TileLang)", "building the float32 program")[0]
    assert "line 2 of your cell: return max(x, 0)" in text and "use T.max(a, b)" in text, text


def test_a_repeated_line_gets_the_cells_line_its_neighbours_imply():
    """An early-return barrier report cites a `__syncthreads();` that the kernel writes twice: the cell line is
    the one the nearest line written once implies (a blind student's lab 06 report had none)."""
    cell = CELL.replace("  if (i <= n) y[i] = x[i];\n", "  __syncthreads();\n  if (i <= n) y[i] = x[i];\n"
                        "  __syncthreads();\n")
    namespace: dict = {}
    exec(cell, namespace)
    src = namespace["CUDA_SOURCE"]
    lines = src.split("\n")
    first, second = (k + 1 for k, ln in enumerate(lines) if ln == "  __syncthreads();")
    assert with_cell_lines(f"at CUDA_SOURCE line {second}", src, cell) == f"at CUDA_SOURCE line {second} (cell line 10)"
    assert with_cell_lines(f"at CUDA_SOURCE line {first}", src, cell) == f"at CUDA_SOURCE line {first} (cell line 8)"
