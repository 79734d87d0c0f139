"""The targets and settings of `hud notify`: the person's notify.toml, the workspace's
hud.toml, `--to`.

The person's file is `notify.toml` in the user's config folder (platformdirs:
`~/.config/operator-hud/notify.toml`; `$HUD_NOTIFY_CONFIG` names another). hud.toml's
`[[notify]]` targets are used only when that file lists the state directory in
`trust_workspaces` (or `--workspace-targets` is given): whoever can write the state
directory can write hud.toml, and would choose where notifications go
(docs/notifications.md, "Workspace targets").
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from store.format.records import NotifyTarget

if TYPE_CHECKING:
    import apprise

    from hud.notify.events import Event

CONFIG_ENV = "HUD_NOTIFY_CONFIG"
"""Names the person's notify.toml (tests, several profiles)."""
MAX_CONFIG_BYTES = 64 * 1024
SERVICE_TIMEOUT = 10.0
"""Seconds one delivery may take before it counts as failed."""

Origin = Literal["notify.toml", "hud.toml", "--to"]


class ConfigError(Exception):
    """notify.toml or a target cannot be used: said to the person, the run does not start."""


class PersonConfig(BaseModel):
    """notify.toml."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    schema_version: Literal[1] = Field(default=1, alias="schema")
    web_url: str | None = None
    """The address of `hud web`: a notification links `{web_url}/?open={mission}/{request}`."""
    ssh: str | None = None
    """The command that reaches `hud serve`, e.g. `ssh -p 2222 hud.example.org`."""
    lead_seconds: float = Field(default=300.0, gt=0)
    lead_fraction: float = Field(default=0.25, gt=0, le=1)
    settle_seconds: float = Field(default=0.5, ge=0, le=60)
    """An event is sent once it has held this long (a decision may follow at once)."""
    burst: int = Field(default=5, ge=1, le=1000)
    """Notifications a target may be sent at once; past it, one digest says the rest."""
    refill_seconds: float = Field(default=12.0, gt=0)
    """One more notification may be sent every this many seconds (5 a minute)."""
    retry_seconds: float = Field(default=2.0, gt=0)
    """The first wait after a failed delivery; it doubles at each failure in a row."""
    retry_max_seconds: float = Field(default=300.0, gt=0)
    trust_workspaces: list[str] = Field(default_factory=list)
    """State directories whose hud.toml `[[notify]]` targets this person accepts."""
    target: list[NotifyTarget] = Field(default_factory=list)


def config_path() -> Path:
    given = os.environ.get(CONFIG_ENV)
    if given:
        return Path(given)
    import platformdirs

    return Path(platformdirs.user_config_dir("operator-hud")) / "notify.toml"


def load_config(path: Path) -> PersonConfig:
    """notify.toml (defaults when it is absent); ConfigError when it cannot be used."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return PersonConfig()
    except OSError as error:
        raise ConfigError(f"{path}: {error.strerror or error}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes")
    try:
        return PersonConfig.model_validate(tomllib.loads(data.decode()))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: not TOML ({error})") from None
    except ValidationError as error:
        where = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in error.errors(include_url=False, include_input=False)
        )
        raise ConfigError(f"{path}: {where}") from None


def trusts(config: PersonConfig, root: Path) -> bool:
    """Whether the person accepts the targets of this state directory's hud.toml."""
    return any(Path(folder).expanduser().resolve() == root for folder in config.trust_workspaces)


@dataclass(frozen=True)
class Target:
    """One Apprise URL with its filters, ready to send to."""

    spec: NotifyTarget
    origin: Origin
    service: apprise.Apprise
    shown: str
    """The URL as it may be shown: no user, password, token, path or query."""

    @property
    def id(self) -> str:
        """Names the target in the sent record (a hash: the URL may hold a secret)."""
        return hashlib.sha256(self.spec.url.encode()).hexdigest()[:32]

    def wants(self, event: Event) -> bool:
        spec = self.spec
        if spec.missions and not any(fnmatch.fnmatchcase(event.row, p) for p in spec.missions):
            return False
        if spec.risks and event.risk is not None and event.risk not in spec.risks:
            return False
        return not spec.severities or event.severity in spec.severities

    def secrets(self) -> list[str]:
        """Pieces of the URL that may be secret, to scrub from a failure's reason."""
        parts = urlsplit(self.spec.url)
        pieces = [
            parts.username,
            parts.password,
            parts.netloc.rpartition("@")[2],  # a bot token, for some services
            *parts.path.split("/"),
            *(value for _, value in parse_qsl(parts.query)),
            parts.fragment,
        ]
        return sorted({p for p in pieces if p and len(p) >= 4}, key=len, reverse=True)


def make_target(spec: NotifyTarget, origin: Origin) -> Target:
    """The target for `spec`; ConfigError (showing no secret) when Apprise cannot use it."""
    import apprise

    asset = apprise.AppriseAsset(storage_mode="memory", service_timeout=SERVICE_TIMEOUT)
    service = apprise.Apprise(asset=asset)
    plugin = apprise.Apprise.instantiate(spec.url, asset=asset)
    if plugin is None or not service.add(plugin):
        scheme = spec.url.split(":", 1)[0][:20]
        raise ConfigError(f"{origin}: a {scheme!r} target Apprise cannot use (URL not shown)")
    return Target(spec, origin, service, redact(plugin))


def redact(plugin: Any) -> str:
    """`scheme://…@host/…`: Apprise's private form (its tokens masked), without user,
    password, path or query (some services take a token as the user name)."""
    private = urlsplit(str(plugin.url(privacy=True)))
    host = private.netloc.rpartition("@")[2]
    netloc = f"…@{host}" if "@" in private.netloc else host
    path = "/…" if private.path.strip("/") else "/"
    return urlunsplit((private.scheme, netloc, path, "", ""))


def gather(
    config: PersonConfig,
    workspace_targets: list[NotifyTarget],
    trusted: bool,
    extra: list[str],
) -> tuple[list[Target], list[str]]:
    """Every target of this run, and what to say of those not used."""
    specs: list[tuple[NotifyTarget, Origin]] = [(spec, "notify.toml") for spec in config.target]
    notes: list[str] = []
    if trusted:
        specs += [(spec, "hud.toml") for spec in workspace_targets]
    elif workspace_targets:
        notes.append(
            f"hud.toml names {len(workspace_targets)} notification target(s), not used: this "
            "state directory is not in trust_workspaces of notify.toml (docs/notifications.md)"
        )
    specs += [(NotifyTarget(url=url), "--to") for url in extra]
    targets: list[Target] = []
    seen: set[str] = set()
    for spec, origin in specs:
        if spec.url in seen:
            continue
        seen.add(spec.url)
        try:
            targets.append(make_target(spec, origin))
        except ConfigError as error:
            if origin != "hud.toml":
                raise
            notes.append(f"{error}: not used")
    return targets, notes
