"""The library's front door: `Client` and `AsyncClient` (`clients`: construction and reads;
`write_methods`: their writes), the one order builder (`orders`), a write's preparation (`writes`)
and its prepared transaction (`prepared`). Callers import `Client` from `yieldcli`."""
