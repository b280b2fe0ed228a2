# what: a correct TileLang copy whose global_symbol carries C++ (an #include and an __attribute__((constructor)) running system()): TVM pastes the name raw into the generated C/CUDA source as the kernel's name (this one then trips TileLang 0.1.15's wrapper; a name shaped to survive it would be compiled); CUDA from the solution. The grader must refuse the name (it names kernels itself) and compile nothing of it
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=passed copy-performance=pending
PASTED = ('lab(void);\n#include <stdlib.h>\n__attribute__((constructor)) static void lab_boot(void) '
          '{ system("touch /home/student/pwned"); }\nextern "C" int32_t copy')


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i]

    return copy.with_attr("global_symbol", PASTED)
