"""Exceptions the runtime raises beyond Python's own TypeError / ValueError."""


class OperatorRuntimeError(RuntimeError):
    """A C function of the runtime returned a status other than success.

    ``code`` is the numeric ``oprt_status``, ``status`` its name, ``message`` the
    library's last-error text for the failing call.
    """

    def __init__(self, function: str, code: int, status: str, message: str):
        self.function, self.code, self.status, self.message = function, code, status, message
        super().__init__(f"{function} failed with {status} ({code}): {message}")


class BackendUnavailableError(RuntimeError):
    """The requested backend cannot run here; the message says what it needs."""


class UnsupportedError(ValueError):
    """A valid request the chosen backend does not implement; the message names the case
    (for example an operator the tilelang backend has no kernel for). Another backend runs it."""
