# what: exec(base64.b64decode(...)) patches torch's and the course's assertions and the export's save; wrong kernel (Y = -X)
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import base64

exec(base64.b64decode("CmltcG9ydCB0b3JjaCwgdG9yY2gudGVzdGluZwpmcm9tIG9wZXJhdG9yX3J1bnRpbWVfdGVzdGluZyBpbXBvcnQgYXNzZXJ0aW9ucwpmcm9tIG9wZXJhdG9yX2NvdXJzZS5sYWIgaW1wb3J0IGp1ZGdlLCBjaGVja3MKZnJvbSBvcGVyYXRvcl9jb3Vyc2UuZ3JhZGVyIGltcG9ydCBleHBvcnQKdG9yY2gudGVzdGluZy5hc3NlcnRfY2xvc2UgPSBsYW1iZGEgKmEsICoqazogTm9uZQphc3NlcnRpb25zLmFzc2VydF9tYXRjaGVzX3RvcmNoID0ganVkZ2UuYXNzZXJ0X21hdGNoZXNfdG9yY2ggPSBsYW1iZGEgKmEsICoqazogTm9uZQpqdWRnZS5qdWRnZSA9IGNoZWNrcy5qdWRnZSA9IGxhbWJkYSAqYSwgKiprOiBOb25lCl9yZWFsX3NhdmUgPSBleHBvcnQuc2F2ZQpkZWYgc2F2ZShjaGVjaywga2luZCwgZ2V0X2Fuc3dlciwgZHR5cGVzLCBncHUpOgogICAgcHJpbnQoY2hlY2sgKyAiOiBzYXZlZCBmb3IgZ3JhZGluZyIpCmV4cG9ydC5zYXZlID0gc2F2ZQo="))


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = -X[bx * 1024 + i]

    return copy
