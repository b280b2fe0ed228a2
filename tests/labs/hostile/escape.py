# what: wrong kernel (Y = X / 2); tries to leave the sandbox: new user+mount namespaces, ptrace of its parent, /proc/1/root, chroot, setuid(0), outbound network, other sandboxes' kernels on loopback
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
import ctypes
import os
import socket

libc = ctypes.CDLL(None, use_errno=True)
tries = {
    "unshare(user|mount)": lambda: libc.unshare(0x10000000 | 0x00020000),
    "ptrace(ATTACH, parent)": lambda: libc.ptrace(16, os.getppid(), None, None),
    "setuid(0)": lambda: libc.setuid(0),
    "chroot(/)": lambda: libc.chroot(b"/"),
}
for name, call in tries.items():
    rc = call()
    print(name, "->", rc, os.strerror(ctypes.get_errno()) if rc else "succeeded")
    if name.startswith("ptrace") and rc == 0:  # it stopped the notebook runner (same uid, same sandbox): let go
        os.waitpid(os.getppid(), 0x40000000)  # __WALL
        print("  ptrace(DETACH) ->", libc.ptrace(17, os.getppid(), None, None))
for path in ("/proc/1/root/", "/proc/1/root/work/main/labs", "/proc/1/cwd"):
    try:
        print(path, os.listdir(path)[:20])
    except OSError as e:
        print(path, e)
for host, port in (("1.1.1.1", 80), ("8.8.8.8", 53), ("10.0.0.1", 22)):
    try:
        socket.create_connection((host, port), timeout=2).close()
        print("CONNECTED", host, port)
    except OSError as e:
        print("no route to", host, port, e)
listening = []
for port in range(1, 65536):  # other students' Jupyter kernels would listen on loopback too
    with socket.socket() as s:
        s.settimeout(0.01)
        if s.connect_ex(("127.0.0.1", port)) == 0:
            listening.append(port)
print("loopback ports open:", listening, "(its own notebook: the kernel and its client)")


def copy_program(dtype, gpu):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def copy(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 1024), **lab.launch(gpu, threads=256)) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    Y[bx * 1024 + i] = X[bx * 1024 + i] / T.cast(2, dtype)

    return copy
