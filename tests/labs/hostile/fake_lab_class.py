# what: shadows `lab` with a class whose checks only print "passed"; copy_program returns None (no kernel)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
class lab:
    @staticmethod
    def check_tilelang(op, program_factory, name="TileLang"):
        print(f"{op} ({name}): passed")

    check_cuda = check_performance = check_tilelang

    @staticmethod
    def launch(gpu, threads):
        return {}


def copy_program(dtype, gpu):
    return None


lab.check_tilelang("copy", copy_program)
