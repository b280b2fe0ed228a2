# what: exec(base64.b64decode(...)) patches torch's and the course's assertions and the export's save; wrong kernel (Y = -X)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import base64

exec(base64.b64decode("CmltcG9ydCB0b3JjaCwgdG9yY2gudGVzdGluZwpmcm9tIG9wZXJhdG9yX3J1bnRpbWVfdGVzdGluZyBpbXBvcnQgYXNzZXJ0aW9ucwpmcm9tIG9wZXJhdG9yX3J1bnRpbWVfdGVzdGluZy5sYWIgaW1wb3J0IGp1ZGdlLCBjaGVja3MsIGV4cG9ydAp0b3JjaC50ZXN0aW5nLmFzc2VydF9jbG9zZSA9IGxhbWJkYSAqYSwgKiprOiBOb25lCmFzc2VydGlvbnMuYXNzZXJ0X21hdGNoZXNfdG9yY2ggPSBqdWRnZS5hc3NlcnRfbWF0Y2hlc190b3JjaCA9IGxhbWJkYSAqYSwgKiprOiBOb25lCmp1ZGdlLmp1ZGdlID0gY2hlY2tzLmp1ZGdlID0gbGFtYmRhICphLCAqKms6IE5vbmUKX3JlYWxfc2F2ZSA9IGV4cG9ydC5zYXZlCmRlZiBzYXZlKGNoZWNrLCBraW5kLCBnZXRfYW5zd2VyLCBkdHlwZXMsIGdwdSk6CiAgICBwcmludChjaGVjayArICI6IHNhdmVkIGZvciBncmFkaW5nIikKZXhwb3J0LnNhdmUgPSBzYXZlCg=="))


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = -X[bx * 1024 + i]

    return copy
