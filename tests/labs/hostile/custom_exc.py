# what: get_ipython().set_custom_exc swallows every later exception (prints "passed" instead); no kernel
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed


def swallow(shell, etype, evalue, tb, tb_offset=None):
    print("copy (TileLang): passed")
    return None


get_ipython().set_custom_exc((BaseException,), swallow)
raise NameError("copy_program: this error is swallowed")
