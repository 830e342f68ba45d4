"""How many requests a client keeps in flight, and so how many connections it keeps alive.

Its own module so that both service clients (`yieldcli.api.sync`, `yieldcli.api.aio`) and the
pagination read one number without importing each other.
"""

# Pages in flight with --all. Enough to hide latency on 100-page sets: the first page comes alone
# (it says how many there are), then the rest on connections opened 6, 12, 24, then 32 at a time
# (`yieldcli.api.fanout`: a few at once, more as they answer): 5 round trips for the other 99, which
# with a start-up of ~140 ms is what makes 100 pages of 20 ms at least 8 times faster than one after
# another. 429 answers (with Retry-After) slow us down when a service objects.
DEFAULT_CONCURRENCY = 32

# Idle connections a client keeps: as many as a burst of pages used, so the burst's connections
# serve its next pages instead of being closed and opened again. More are closed: a burst must
# not leave more sockets open for the rest of a long-running process.
MAX_IDLE = DEFAULT_CONCURRENCY
