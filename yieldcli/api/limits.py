"""How many requests a client keeps in flight, and so how many connections it keeps alive.

Its own module so that both service clients (`yieldcli.api.sync`, `yieldcli.api.aio`) and the
pagination read one number without importing each other.
"""

# Pages in flight with --all. Enough to hide latency on 100-page sets: the first page comes alone
# (it says how many there are), then the rest on connections opened 6 more each round trip
# (`yieldcli.api.fanout`: a few at once, more as they answer) up to 32. 429 answers (with
# Retry-After) slow us down when a service objects.
DEFAULT_CONCURRENCY = 32

# Idle connections a client keeps: as many as a burst of pages used, so the burst's connections
# serve its next pages instead of being closed and opened again. More are closed: a burst must
# not leave more sockets open for the rest of a long-running process.
MAX_IDLE = DEFAULT_CONCURRENCY
