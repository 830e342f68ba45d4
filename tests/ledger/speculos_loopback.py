"""Run Speculos with every server it opens bound to 127.0.0.1 (it binds 0.0.0.0 itself): tests stay on loopback."""

import socket
import sys

_bind = socket.socket.bind


def _loopback_bind(self, address):
    if isinstance(address, tuple) and address and address[0] in ("0.0.0.0", ""):
        address = ("127.0.0.1", *address[1:])
    return _bind(self, address)


socket.socket.bind = _loopback_bind

if __name__ == "__main__":
    from speculos.main import main

    sys.exit(main())
