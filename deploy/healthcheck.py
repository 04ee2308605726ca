"""The container's HEALTHCHECK: ask ``/healthz`` where ``ops.http.listen`` says it is served.

Exit 0 when the endpoint answers 200, 1 otherwise (Docker reserves 2), with one line saying
why: Docker keeps it in ``docker inspect --format '{{json .State.Health}}' <container>``.
The address comes from the same config ``mnemo run`` reads (``$MNEMO_HOME/config.yaml``), a
wildcard bind (``0.0.0.0``, ``::``) is asked on loopback, and proxies from the environment
are ignored: the request never leaves the container.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

from gateway.config import ConfigError, load_config, resolve_paths
from gateway.ops_http import parse_listen

TIMEOUT_S = 5.0
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1"}  # noqa: S104 - asked on loopback instead


def healthz_url(listen: str) -> str:
    """``0.0.0.0:9464`` → ``http://127.0.0.1:9464/healthz`` (IPv6 hosts in brackets)."""
    host, port = parse_listen(listen)
    host = _WILDCARDS.get(host, host)
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/healthz"


def check() -> tuple[bool, str]:
    try:
        config = load_config(resolve_paths())
    except ConfigError as exc:
        return False, f"config error: {exc.lines[0]}"
    listen = config.ops.http.listen
    if listen is None:
        return False, "ops.http.listen is not set; the health check needs it (e.g. 0.0.0.0:9464)"
    try:
        url = healthz_url(listen)
    except ValueError as exc:
        return False, str(exc)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=TIMEOUT_S) as response:
            return True, f"{url}: {response.status}"
    except urllib.error.HTTPError as exc:
        reasons = " ".join(exc.read(500).decode("utf-8", "replace").split())
        exc.close()
        return False, f"{url}: {exc.code} {reasons}".rstrip()
    except OSError as exc:
        return False, f"{url}: {getattr(exc, 'reason', exc)}"


def main() -> int:
    healthy, line = check()
    print(("healthy: " if healthy else "unhealthy: ") + line)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
