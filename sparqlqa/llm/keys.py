"""API keys: from the environment, else from ``$SPARQLQA_HOME/keys.json`` (mode 0600).

Keys are never logged, cached or put into call records.  The keys file maps
provider names to keys: ``{"anthropic": "sk-ant-..."}``.
"""

from __future__ import annotations

__all__ = ["KEY_ENV_VARS", "delete_key", "file_mode", "get_key", "key_source", "keys_path", "set_key"]

import json
import os
import stat
from pathlib import Path

from sparqlqa.errors import ConfigError
from sparqlqa.paths import atomic_write_text, sparqlqa_home

#: provider name → environment variable holding its key (the variable wins over the file)
KEY_ENV_VARS: dict[str, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
}


def keys_path() -> Path:
    """Where ``sparqlqa llm keys set`` stores keys."""
    return sparqlqa_home() / "keys.json"


def _load_keys() -> dict[str, str]:
    """The keys file's contents ({} when there is none)."""
    path = keys_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot read the keys file {path}: {type(exc).__name__}",
            hint="fix or delete it, then run 'sparqlqa llm keys set anthropic'",
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"the keys file {path} is not a JSON object", hint="delete it and set keys again")
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str) and v}


def get_key(provider: str) -> str | None:
    """The key for ``provider``: its environment variable, else the keys file, else None."""
    env_var = KEY_ENV_VARS.get(provider)
    if env_var:
        value = os.environ.get(env_var, "").strip()
        if value:
            return value
    return _load_keys().get(provider) or None


def key_source(provider: str) -> str | None:
    """Where the key for ``provider`` comes from (for messages): the variable name, the file, or None."""
    env_var = KEY_ENV_VARS.get(provider)
    if env_var and os.environ.get(env_var, "").strip():
        return f"${env_var}"
    if provider in _load_keys():
        return str(keys_path())
    return None


def set_key(provider: str, key: str) -> Path:
    """Store ``key`` for ``provider`` in the keys file (written atomically, mode 0600)."""
    key = key.strip()
    if not key:
        raise ConfigError("refusing to store an empty API key")
    keys = _load_keys()
    keys[provider] = key
    path = keys_path()
    atomic_write_text(path, json.dumps(keys, indent=2, sort_keys=True) + "\n", mode=0o600)
    return path


def delete_key(provider: str) -> bool:
    """Remove ``provider``'s key from the keys file; False if it had none."""
    keys = _load_keys()
    if provider not in keys:
        return False
    del keys[provider]
    atomic_write_text(keys_path(), json.dumps(keys, indent=2, sort_keys=True) + "\n", mode=0o600)
    return True


def file_mode(path: Path) -> int:
    """Permission bits of ``path`` (e.g. ``0o600``)."""
    return stat.S_IMODE(path.stat().st_mode)
