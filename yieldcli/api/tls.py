"""The TLS context for the service: the OS trust store, unless the environment names CA certificates.

As httpx2 does: `SSL_CERT_FILE` (a PEM bundle) or `SSL_CERT_DIR` when set, otherwise `truststore`,
which verifies against the operating system's store (Keychain, Windows, the distribution's CA
paths) and so accepts the corporate roots an administrator installed. Building a truststore
context costs about 1 ms after a 10 ms import; `ssl.create_default_context()` costs about 35 ms
because it loads the whole CA file up front.
"""

from __future__ import annotations

import os
import ssl


def client_context() -> ssl.SSLContext:
    cafile = os.environ.get("SSL_CERT_FILE")
    if cafile:
        return ssl.create_default_context(cafile=cafile)
    capath = os.environ.get("SSL_CERT_DIR")
    if capath:
        return ssl.create_default_context(capath=capath)
    import truststore

    return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
