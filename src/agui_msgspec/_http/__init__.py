"""The optional HTTP client (the ``[http]`` extra): ``HttpAgent`` over httpx."""
