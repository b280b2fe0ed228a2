# your answer: the grader takes this cell from your notebook
# (I did not get to this one)
def copy_program(dtype: str, gpu: bool):
    """TODO"""
    n = T.dynamic("n", "int64")
    TILE, STEPS = 512, 4

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        raise NotImplementedError("your code here: see the task above")

    return copy
