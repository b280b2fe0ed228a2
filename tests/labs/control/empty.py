# what: unsolved: the answer cell left empty (copy_program is never defined: NameError), CUDA left as the stub
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
