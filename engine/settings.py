"""Settings, resolved once at the entry point and passed down.

The vault comes from `--vault`, else `AGENTMD_VAULT`, else `vault = "..."` in the config file
(`--config`, else `$XDG_CONFIG_HOME/agentmd/config.toml`). The cache dir (index + catalog) comes from
`--index`, else `index = "..."` in the config file, else `$XDG_CACHE_HOME/agentmd/<vault-id>/`.
The dense arm (embeddings beside the lexical index) is on unless `AGENTMD_DENSE=0` or `dense = false` in the
config file; `AGENTMD_MODEL_FILE` or `model_file = "..."` names another copy of the embedding model.
An OpenAI-compatible embeddings endpoint replaces the bundled model when a base URL is given
(`AGENTMD_EMBED_URL` or `embed_url = "http://127.0.0.1:8080/v1"`) with a model name (`AGENTMD_EMBED_MODEL` or
`embed_model = "..."`); its API key, if it needs one, is read from the environment variable
`AGENTMD_EMBED_API_KEY`, or from the one `embed_api_key_env = "NAME"` in the config file names (never from the
config file itself). A new file larger than `commit_max_mb = 50` (MiB, the config file) is not committed.
`status` turns sync yellow after `sync_yellow_after = "1h"` of failing rounds and red after
`sync_red_after = "1d"` (the config file; "90s", "30m", "6h", "2d" or a number of seconds).
`queue_baseline = "2026-11-01"` (a date, or a time with an offset) moves the queue baseline by hand: notes
captured before it are the inherited backlog that `status` reports but never pages about.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from agentmd.engine import places
from agentmd.engine.errors import ConfigError

DEFAULT_PORT = 7821
RECONCILE_INTERVAL = 300.0  # seconds between the daemon's full passes
COMMIT_DEBOUNCE = 1.0  # seconds of quiet before the daemon commits
COMMIT_MAX_WAIT = 10.0  # seconds at most between a change and its commit, however busy the vault
COMMIT_SETTLE = 1.0  # seconds a file must be left unchanged before it is committed (engine/git/settle.py)
COMMIT_MAX_DEFERRAL = 30.0  # ... and at the latest this long after a cycle first left it, however busy its writer
COMMIT_MAX_MB = 50  # a new file larger than this many MiB is not committed (git history keeps it forever)
SYNC_YELLOW_AFTER = dt.timedelta(hours=1)  # sync rounds failing this long turn status yellow
SYNC_RED_AFTER = dt.timedelta(days=1)  # ... and this long, red
_DURATION = r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$"  # compiled where a config duration is read, not at import
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class Settings(NamedTuple):
    """What one run works on and with. Immutable; `settings._replace(field=value)` makes a changed copy. Not a
    dataclass: `dataclasses` (with `inspect` and `ast`) costs the prompt hook about 10 ms of imports on every
    prompt."""

    vault: Path
    cache_dir: Path
    state_dir: Path
    config_file: Path | None
    contract_path: Path | None  # an explicit contract file; None means the vault's or the packaged one
    daily_write_cap: int | None  # AGENTMD_DAILY_WRITE_CAP when set
    dense: bool = True  # embed notes and search hybrid; False: lexical-only
    model_file: Path | None = None  # another copy of the embedding model (it must have the pinned hash)
    embed_url: str | None = None  # an OpenAI-compatible embeddings endpoint's base URL (…/v1); None: the bundled model
    embed_model: str | None = None  # the endpoint's model name
    embed_api_key: str | None = None  # read from the environment, never shown (not in the repr)
    commit_max_bytes: int = COMMIT_MAX_MB * 2**20  # `commit_max_mb` in the config file
    sync_yellow_after: dt.timedelta = SYNC_YELLOW_AFTER  # `sync_yellow_after` in the config file
    sync_red_after: dt.timedelta = SYNC_RED_AFTER  # `sync_red_after` in the config file
    queue_baseline: dt.datetime | None = None  # `queue_baseline` in the config file; None: the recorded one
    config_unknown: tuple[str, ...] = ()  # what the config file says that agentmd does not read (`config_problems`)

    @property
    def index_dir(self) -> Path:
        return self.cache_dir / "index"

    @property
    def catalog_path(self) -> Path:
        return self.cache_dir / "catalog.sqlite3"

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self, strict=True) if k != "embed_api_key")
        return f"Settings({shown})"


def host_name() -> str:
    """This machine's name as commits' `host:` trailers and conflict siblings carry it: letters, digits, dashes.
    `AGENTMD_HOST` names it instead (a container or a laptop whose host name changes with the network, and
    several clones on one machine that should tell their commits apart)."""
    import socket

    name = os.environ.get("AGENTMD_HOST") or socket.gethostname()
    return re.sub(r"[^A-Za-z0-9-]+", "-", name).strip("-")[:40] or "host"


def xdg_dir(name: str, env: Mapping[str, str] | None = None) -> Path:
    """The XDG base folder `name` (a key of `XDG_DEFAULTS`), engine/places.py's rule. Every XDG path agentmd
    reads or writes starts here."""
    return Path(places.xdg_base(name, env))


def default_config_file(env: Mapping[str, str] | None = None) -> Path:
    """The config file read when no `--config` is given: `$XDG_CONFIG_HOME/agentmd/config.toml`."""
    return xdg_dir("XDG_CONFIG_HOME", env) / "agentmd" / "config.toml"


def state_root(env: Mapping[str, str] | None = None) -> Path:
    """agentmd's state folder before a vault is known (`$XDG_STATE_HOME/agentmd`); each vault's own state
    folder is a folder below it (`Settings.state_dir`)."""
    return Path(places.state_root(env))


def vault_id(vault: Path) -> str:
    """A stable directory name for a vault: its folder name plus a hash of its real path (engine/places.py)."""
    return places.vault_id(vault)


def _read_config(path: Path, explicit: bool) -> dict[str, object]:
    if not path.exists():
        if explicit:
            raise ConfigError(f"config file {path} does not exist; check the --config path")
        return {}
    import tomllib  # here, not at the top: most runs have no config file, and a command the daemon answers stays light

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not UTF-8 text (a bad byte at offset {exc.start}); save it as UTF-8, or remove it"
        ) from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"config file {path} could not be read: {exc}; fix or remove it") from None


def resolve(
    *,
    vault: str | None = None,
    index: str | None = None,
    config: str | None = None,
    contract: str | None = None,
    env: Mapping[str, str] | None = None,
    require_vault: bool = True,
) -> Settings:
    env = os.environ if env is None else env
    config_file = Path(config).expanduser() if config else default_config_file(env)
    data = _read_config(config_file, explicit=bool(config))
    for key in ("vault", "index", "contract", "model_file"):  # paths: text, and relative to the config's folder
        given = data.get(key)
        if given is not None and (not isinstance(given, str) or not given.strip()):
            raise ConfigError(
                f'`{key} = {given!r}` in {config_file} is not a path: write it as text, e.g. {key} = "/path"'
            )
        if isinstance(given, str) and not Path(given).expanduser().is_absolute():
            data = {**data, key: str(config_file.parent / given)}
    vault_text = vault or env.get("AGENTMD_VAULT") or data.get("vault")
    if not vault_text:
        raise ConfigError(
            'no vault given: pass --vault PATH, set AGENTMD_VAULT, or put `vault = "/path"` in ' + str(config_file)
        )
    vault_path = Path(str(vault_text)).expanduser()
    if require_vault and not vault_path.is_dir():
        raise ConfigError(f"vault {vault_path} is not a directory; check the path (is the drive mounted?)")
    vault_path = vault_path.resolve()
    vid = vault_id(vault_path)
    index_text = index or data.get("index")
    cache_dir = Path(str(index_text)).expanduser() if index_text else xdg_dir("XDG_CACHE_HOME", env) / "agentmd" / vid
    cache_dir = cache_dir.resolve()
    if cache_dir.is_relative_to(vault_path):
        inner = cache_dir.relative_to(vault_path).parts
        if not inner or not inner[0].startswith("."):
            raise ConfigError(
                f"index dir {cache_dir} is inside the vault, where it would be indexed and committed; "
                "put it outside the vault (or under a dot folder)"
            )
    state_dir = state_root(env) / vid
    contract_text = contract or data.get("contract")
    cap_text = env.get("AGENTMD_DAILY_WRITE_CAP")
    cap: int | None = None
    if cap_text:
        try:
            cap = int(cap_text)
            if cap < 0:
                raise ValueError
        except ValueError:
            raise ConfigError(
                f"AGENTMD_DAILY_WRITE_CAP={cap_text!r} is not a whole number ≥ 0; set it to e.g. 200 (0 disables)"
            ) from None
    dense_text = env.get("AGENTMD_DENSE")
    dense = _switch(dense_text, "AGENTMD_DENSE") if dense_text else _config_switch(data.get("dense", True))
    model_text = env.get("AGENTMD_MODEL_FILE") or data.get("model_file")
    embed_url, embed_model, embed_key = _endpoint(env, data)
    max_mb = data.get("commit_max_mb", COMMIT_MAX_MB)
    if isinstance(max_mb, bool) or not isinstance(max_mb, int | float) or max_mb <= 0:
        raise ConfigError(
            f"`commit_max_mb = {max_mb!r}` in the config file is not a positive number of MiB; write e.g. "
            "`commit_max_mb = 200`"
        )
    yellow_after = _config_duration(data, "sync_yellow_after", SYNC_YELLOW_AFTER, "1h")
    red_after = _config_duration(data, "sync_red_after", SYNC_RED_AFTER, "1d")
    if yellow_after > red_after:
        raise ConfigError(
            f"`sync_yellow_after` ({data.get('sync_yellow_after', '1h')!r}) is longer than `sync_red_after` "
            f"({data.get('sync_red_after', '1d')!r}) in the config file; status turns yellow before red, so make "
            'the yellow one the shorter, e.g. `sync_yellow_after = "1h"`, `sync_red_after = "1d"`'
        )
    baseline = _config_moment(data, "queue_baseline")
    return Settings(
        vault=vault_path,
        cache_dir=cache_dir,
        state_dir=state_dir,
        config_file=config_file if config_file.exists() else None,
        contract_path=Path(str(contract_text)).expanduser() if contract_text else None,
        daily_write_cap=cap,
        dense=dense,
        model_file=Path(str(model_text)).expanduser() if model_text else None,
        embed_url=embed_url,
        embed_model=embed_model,
        embed_api_key=embed_key,
        commit_max_bytes=int(max_mb * 2**20),
        sync_yellow_after=yellow_after,
        sync_red_after=red_after,
        queue_baseline=baseline,
        config_unknown=config_problems(data),
    )


CONFIG_KEYS = frozenset({
    "vault", "index", "contract", "dense", "model_file", "commit_max_mb", "sync_yellow_after", "sync_red_after",
    "queue_baseline", "embed_url", "embed_model", "embed_api_key_env",
})  # fmt: skip
# the keys each table of the config file may hold (read by engine/jobs/notify.py, engine/jobs/morning.py through
# the daemon's jobs, engine/jobs/report.py, engine/daemon/jobs_host.py, engine/enrich/budget.py and model.py,
# engine/curate/ingest.py); `[[ingest]]` is a list of tables, each holding these keys
TABLE_KEYS: dict[str, frozenset[str]] = {
    "notify": frozenset({"command", "desktop"}),
    "morning": frozenset({"space"}),
    "jobs": frozenset({"daily_token_ceiling"}),
    "groom": frozenset({"restated"}),
    "enrich": frozenset({
        "max_calls", "max_tokens", "max_seconds", "fuse", "call_timeout", "judge", "model", "program", "command",
        "prompt", "answer", "error", "usage", "cost",
    }),
    "ingest": frozenset({"path"}),
}  # fmt: skip
CONFIG_TABLES = frozenset(TABLE_KEYS) - {"ingest"}


def config_problems(data: Mapping[str, Any]) -> tuple[str, ...]:
    """What the config file says that agentmd does not read, each with the likely meant name: a misspelt key or
    table is ignored, and a typo in `[notify]` turns alerts off without a word."""
    known = CONFIG_KEYS | frozenset(TABLE_KEYS)
    out = []
    for key, value in data.items():
        if key in CONFIG_TABLES and not isinstance(value, dict):
            out.append(f"`{key}` is not a table: write it as a `[{key}]` section")
        elif key == "ingest" and not (isinstance(value, list) and all(isinstance(v, dict) for v in value)):
            out.append("`ingest` is not a list of tables: write each source as `[[ingest]]` with `path = ...`")
        elif key not in known:
            out.append(f"`{key}` is not a setting" + _did_you_mean(key, known))
        else:
            tables = value if key == "ingest" else [value]
            names = dict.fromkeys(k for t in tables if isinstance(t, dict) for k in t)
            out += [
                f"`{k}` in `[{key}]` is not a setting of that table" + _did_you_mean(k, TABLE_KEYS[key])
                for k in names
                if key in TABLE_KEYS and k not in TABLE_KEYS[key]
            ]
    return tuple(out)


def _did_you_mean(key: str, known: frozenset[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _config_moment(data: Mapping[str, Any], key: str) -> dt.datetime | None:
    """A moment from the config file: a date (its midnight UTC, quoted or a TOML date) or a date and time (UTC
    unless it names an offset); None when the key is absent."""
    if key not in data:
        return None
    value = data[key]
    moment: dt.datetime | None = None
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            moment = None
    if moment is None:
        raise ConfigError(
            f"`{key} = {value!r}` in the config file is not a date or a time; write e.g. "
            f'`{key} = "2026-11-01"` or `{key} = "2026-11-01T09:00:00+01:00"`'
        )
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _config_duration(data: Mapping[str, Any], key: str, default: dt.timedelta, example: str) -> dt.timedelta:
    """A positive duration from the config file: `"90s"`, `"30m"`, `"6h"`, `"1d"` or a number of seconds."""
    if key not in data:
        return default
    value = data[key]
    seconds: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (m := re.match(_DURATION, value)) is not None:
        seconds = float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
    if seconds is None or not seconds > 0 or seconds > 366 * 86400:
        raise ConfigError(
            f"`{key} = {value!r}` in the config file is not a duration between a second and a year; write e.g. "
            f'`{key} = "{example}"` ("90s", "30m", "6h", "2d" or a number of seconds)'
        )
    return dt.timedelta(seconds=seconds)


def _endpoint(env: Mapping[str, str], data: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(base URL, model, API key) of the embeddings endpoint, or (None, None, None) when none is set."""
    url = env.get("AGENTMD_EMBED_URL") or data.get("embed_url")
    model = env.get("AGENTMD_EMBED_MODEL") or data.get("embed_model")
    if not url:
        return None, None, None
    url = str(url).strip()
    if not re.match(r"https?://[^/\s]+", url):
        raise ConfigError(f"embeddings endpoint {url!r} is not an http(s) URL; write e.g. http://127.0.0.1:8080/v1")
    if not model:
        raise ConfigError(
            f'embeddings endpoint {url} has no model name; set AGENTMD_EMBED_MODEL or `embed_model = "..."`'
        )
    key_env = str(data.get("embed_api_key_env") or "AGENTMD_EMBED_API_KEY")
    return url, str(model).strip(), env.get(key_env) or None


def _switch(text: str, name: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}={text!r} is not a switch; set it to 1 (on) or 0 (off)")


def _config_switch(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(f"`dense = {value!r}` in the config file is not true or false; write `dense = false` for off")
