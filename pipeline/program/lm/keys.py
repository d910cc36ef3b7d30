"""Which API key goes to which OpenAI-compatible server named by --lm.

A key is a credential for one server. SCOPERAG_LM_KEY (what `scoperag lm-serve` writes to its key file) goes only
to a server on this machine's loopback (127.0.0.0/8, ::1, localhost); any other server gets the key of its own
variable, SCOPERAG_LM_KEY_<HOST>_<PORT> (`key_variable`, which `lm-serve` prints for the address it listens on),
and no key otherwise ("local", which a server without keys ignores). So a key exported once never reaches a server
someone else names in a config, a profile or a mistyped URL.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# The variable holding the key for servers on the loopback.
LOCAL_KEY_VARIABLE = "SCOPERAG_LM_KEY"
# What is sent when no key is known for a server (a server without keys ignores it).
NO_KEY = "local"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def server_address(url: str) -> tuple[str, int]:
    """(host, port) of a base URL, the host lower-case without brackets ("http://[::1]:8080/v1" -> ("::1", 8080))."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 80)
    except ValueError:  # a port that is no number: no server's variable can name it
        port = 0
    return host, port


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine's loopback: localhost, 127.0.0.0/8 or ::1."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def key_variable(url: str) -> str:
    """The variable holding the key of the server at `url`: SCOPERAG_LM_KEY_<HOST>_<PORT>, every character but letters
    and digits written as "_" ("http://vllm.internal:8000/v1" -> SCOPERAG_LM_KEY_VLLM_INTERNAL_8000)."""
    host, port = server_address(url)
    return f"{LOCAL_KEY_VARIABLE}_{re.sub(r'[^A-Z0-9]', '_', host.upper())}_{port}"


@dataclass(frozen=True)
class LMKeys:
    """The keys an entry point read from its environment: `local` for loopback servers, and each variable named by
    `key_variable` that was set."""

    local: str | None = None
    named: Mapping[str, str] = field(default_factory=dict)

    def for_url(self, url: str) -> str:
        """The key to send to the server at `url` (NO_KEY when none is known for it)."""
        own = self.named.get(key_variable(url))
        if own:
            return own
        host, _ = server_address(url)
        if self.local and is_loopback(host):
            return self.local
        return NO_KEY


def keys_from(environ: Mapping[str, str]) -> LMKeys:
    """The LM keys `environ` holds (read at entry points only)."""
    prefix = f"{LOCAL_KEY_VARIABLE}_"
    named = {name: value for name, value in environ.items() if name.startswith(prefix) and value}
    return LMKeys(local=environ.get(LOCAL_KEY_VARIABLE) or None, named=named)
