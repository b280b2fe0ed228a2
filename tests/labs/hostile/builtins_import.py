# what: __import__("bui" "ltins") hooks builtins.__import__ so the grader's export module is a fake that saves nothing; no kernel
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
b = __import__("bui" "ltins")
real_import = b.__import__


class FakeExport:
    @staticmethod
    def save(check, kind, get_answer, dtypes, gpu):
        print(f"{check}: saved for grading")


def hooked(name, globals=None, locals=None, fromlist=(), level=0):
    if "grader.export" in name or (name.endswith(".grader") and "export" in (fromlist or ())):
        return FakeExport
    return real_import(name, globals, locals, fromlist, level)


b.__import__ = hooked
b.AssertionError = type("AssertionError", (Warning,), {})  # assertions now raise a warning class
