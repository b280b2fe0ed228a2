# what: a WRONG TileLang copy (Y = 2 X) carrying T.attr(0, "pragma_import_c", <C++>): TVM pastes the text into the generated C/CUDA, and its constructor, run when the grader loads the library, calls PyRun_SimpleString to swap the grader's launcher (kernels.run_tilelang) for one that writes the right answer into every output; CUDA from the solution. The program must be refused (an AttrStmt, not a Call: the old word list never saw it)
# answer: copy-tilelang
# solved: copy-cuda
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=passed copy-performance=pending
BOOT = r'''
extern "C" int PyRun_SimpleString(const char*);
extern "C" int PyGILState_Ensure(void);
extern "C" void PyGILState_Release(int);
__attribute__((constructor)) static void lab_boot(void) {
  int g = PyGILState_Ensure();
  PyRun_SimpleString(
    "import operator_course.lab.kernels as k\n"
    "def launch(kernel, op, inputs, out):\n"
    "    out.copy_(inputs[0].reshape(out.shape))\n"
    "k.run_tilelang.__code__ = launch.__code__\n");
  PyGILState_Release(g);
}
'''


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            T.attr(0, "pragma_import_c", BOOT)
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i] * T.cast(2, dtype)

    return copy
