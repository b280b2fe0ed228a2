# what: unsolved: the handed-out stub, run as is (copy_program raises NotImplementedError), CUDA the stub too
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
# your answer: the grader takes this cell from your notebook
def copy_program(dtype: str, gpu: bool):
    """Y[i] = X[i] for 0 <= i < n."""
    n = T.dynamic("n", "int64")
    TILE = 1024
    raise NotImplementedError("your code here: see the task above")
